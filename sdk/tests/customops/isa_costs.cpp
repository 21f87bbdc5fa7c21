// What one operation costs per element on the emulated Q7 (check_isa.py): the same loop
// over TCM buffers, blocks of 256 elements of two inputs to one output, with only the
// operation changed. The additions are the baselines each other op is measured against.
#include <stdint.h>
#include <algorithm>
#include <cmath>

#include "isa_loop.h"

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
