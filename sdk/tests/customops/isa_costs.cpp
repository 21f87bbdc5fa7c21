// What one operation costs per element on the emulated Q7 (check_isa.py): the same loop
// over TCM buffers, blocks of 256 elements of two inputs to one output, with only the
// operation changed. The additions are the baselines each other op is measured against.
#include <stdint.h>
#include <algorithm>
#include <cmath>
#include <torch/torch.h>
#include <neuron/neuron-utils.hpp>

template <typename T, typename F>
static torch::Tensor over_tcm(const torch::Tensor &a, const torch::Tensor &b, torch::ScalarType dtype, F op)
{
    const size_t block = 256;
    torch::Tensor out = torch::empty(a.sizes(), dtype);
    T *x = static_cast<T *>(torch::neuron::tcm_malloc(block * sizeof(T)));
    T *y = static_cast<T *>(torch::neuron::tcm_malloc(block * sizeof(T)));
    if (x == nullptr || y == nullptr)
        return out;
    auto ta = a.tcm_accessor();
    auto tb = b.tcm_accessor();
    auto to = out.tcm_accessor();
    size_t count = a.numel();
    for (size_t done = 0; done < count; done += block) {
        size_t n = count - done < block ? count - done : block;
        ta.tensor_to_tcm<T>(x, done, n);
        tb.tensor_to_tcm<T>(y, done, n);
        for (size_t k = 0; k < n; k++)
            x[k] = op(x[k], y[k]);
        to.tcm_to_tensor<T>(x, done, n);
    }
    torch::neuron::tcm_free(y);
    torch::neuron::tcm_free(x);
    return out;
}

torch::Tensor add_i32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<int32_t>(a, b, torch::kInt, [](int32_t p, int32_t q) { return p + q; });
}

torch::Tensor div_i32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<int32_t>(a, b, torch::kInt, [](int32_t p, int32_t q) { return p / q; });
}

torch::Tensor rem_u32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<int32_t>(a, b, torch::kInt, [](int32_t p, int32_t q) {
        return static_cast<int32_t>(static_cast<uint32_t>(p) % static_cast<uint32_t>(q));
    });
}

torch::Tensor clamp_i32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<int32_t>(a, b, torch::kInt, [](int32_t p, int32_t q) { return std::min(std::max(p, -q), q); });
}

torch::Tensor add_f32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<float>(a, b, torch::kFloat, [](float p, float q) { return p + q; });
}

torch::Tensor div_f32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<float>(a, b, torch::kFloat, [](float p, float q) { return p / q; });
}

torch::Tensor sqrt_f32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<float>(a, b, torch::kFloat, [](float p, float) { return sqrtf(p); });
}
