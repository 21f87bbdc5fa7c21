// relu forward and backward through accessor<float, 2>: one translate per element touch.
#include <stdint.h>
#include <torch/torch.h>

torch::Tensor relu_forward(const torch::Tensor &input)
{
    torch::Tensor result = torch::zeros(input.sizes(), torch::kFloat);
    auto in = input.accessor<float, 2>();
    auto out = result.accessor<float, 2>();
    for (int64_t r = 0; r < in.size(0); r++)
        for (int64_t c = 0; c < in.size(1); c++)
            out[r][c] = in[r][c] < 0.0f ? 0.0f : in[r][c];
    return result;
}

torch::Tensor relu_backward(const torch::Tensor &grad, const torch::Tensor &input)
{
    torch::Tensor result = torch::zeros(input.sizes(), torch::kFloat);
    auto g = grad.accessor<float, 2>();
    auto in = input.accessor<float, 2>();
    auto out = result.accessor<float, 2>();
    for (int64_t r = 0; r < in.size(0); r++)
        for (int64_t c = 0; c < in.size(1); c++)
            out[r][c] = in[r][c] > 0.0f ? static_cast<float>(g[r][c]) : 0.0f;
    return result;
}
