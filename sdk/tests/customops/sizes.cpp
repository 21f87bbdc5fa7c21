// Kernels whose output's size is a function of the inputs' sizes, for torch.compile with
// dynamic shapes (sdk/python/torch_tests/test_dynamic.py): a sum of sizes, a product of
// sizes, and a size that stops growing at sixteen.
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor joined(const torch::Tensor &a, const torch::Tensor &b)
{
    int64_t n = a.size(0), m = b.size(0);
    torch::Tensor result = torch::zeros({n + m}, torch::kFloat);
    auto x = a.accessor<float, 1>();
    auto y = b.accessor<float, 1>();
    auto out = result.accessor<float, 1>();
    for (int64_t i = 0; i < n; i++)
        out[i] = x[i];
    for (int64_t j = 0; j < m; j++)
        out[n + j] = y[j];
    return result;
}

torch::Tensor products(const torch::Tensor &a, const torch::Tensor &b)
{
    int64_t n = a.size(0), m = b.size(0);
    torch::Tensor result = torch::zeros({n * m}, torch::kFloat);
    auto x = a.accessor<float, 1>();
    auto y = b.accessor<float, 1>();
    auto out = result.accessor<float, 1>();
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++)
            out[i * m + j] = x[i] * y[j];
    return result;
}

torch::Tensor first_sixteen(const torch::Tensor &a)
{
    int64_t n = a.size(0) < 16 ? a.size(0) : 16;
    torch::Tensor result = torch::zeros({n}, torch::kFloat);
    auto x = a.accessor<float, 1>();
    auto out = result.accessor<float, 1>();
    for (int64_t i = 0; i < n; i++)
        out[i] = x[i];
    return result;
}
