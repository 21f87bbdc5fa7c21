/*
 * c10::BFloat16 (at::BFloat16): the upper half of an IEEE 754 binary32, the custom-op
 * API's torch::kBFloat16 element, for kernels built on a workstation with the
 * neuron-translate custom-op SDK. Conversions from float round to nearest, ties to even
 * (overflow to infinity, NaN kept quiet with its sign and high payload bits); to float
 * they are exact. C++14.
 */
#ifndef NEURON_CUSTOMOP_C10_BFLOAT16_H
#define NEURON_CUSTOMOP_C10_BFLOAT16_H

#include <cstdint>
#include <cstring>

namespace c10 {

namespace bfloat16_bits {

/// float -> bfloat16 bits.
inline uint16_t from_float(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) // NaN: keep it quiet
        return static_cast<uint16_t>((u >> 16) | 0x40u);
    return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/// bfloat16 bits -> float, exact.
inline float to_float(uint16_t b)
{
    const uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

} // namespace bfloat16_bits

/// A bfloat16 number: stored as its bits, computed with as float.
struct alignas(2) BFloat16 {
    uint16_t x;

    struct from_bits_t {};
    static constexpr from_bits_t from_bits() { return from_bits_t(); }

    BFloat16() = default;
    constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
    BFloat16(float value) : x(bfloat16_bits::from_float(value)) {}
    operator float() const { return bfloat16_bits::to_float(x); }
};

static_assert(sizeof(BFloat16) == 2, "BFloat16 is two bytes");

} // namespace c10

namespace at {
using c10::BFloat16;
} // namespace at

#endif /* NEURON_CUSTOMOP_C10_BFLOAT16_H */
