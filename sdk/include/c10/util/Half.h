/*
 * c10::Half (at::Half): IEEE 754 binary16, the custom-op API's torch::kHalf element, for
 * kernels built on a workstation with the neuron-translate custom-op SDK. Conversions
 * from float round to nearest, ties to even (subnormals, overflow to infinity, NaN kept
 * quiet with its sign and high payload bits); to float they are exact. C++14.
 */
#ifndef NEURON_CUSTOMOP_C10_HALF_H
#define NEURON_CUSTOMOP_C10_HALF_H

#include <cstdint>
#include <cstring>

namespace c10 {

namespace half_bits {

inline uint32_t bits_of(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

inline float float_of(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

/// q + 1 if the dropped bits `rem` (of `halfway * 2` units) round q up, ties to even.
inline uint32_t round_even(uint32_t q, uint32_t rem, uint32_t halfway)
{
    return q + ((rem > halfway || (rem == halfway && (q & 1u))) ? 1u : 0u);
}

/// float -> binary16 bits.
inline uint16_t from_float(float f)
{
    const uint32_t u = bits_of(f), sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) // infinity, or NaN made quiet
        return static_cast<uint16_t>(sign | 0x7C00u | (a > 0x7F800000u ? 0x200u | ((a >> 13) & 0x3FFu) : 0u));
    if (a >= 0x477FF000u) // 65520 and above round to infinity
        return static_cast<uint16_t>(sign | 0x7C00u);
    if (a >= 0x38800000u) { // a normal half: rebias the exponent, round the 13 dropped bits
        const uint32_t h = (a >> 13) - (112u << 10);
        return static_cast<uint16_t>(sign | round_even(h, a & 0x1FFFu, 0x1000u));
    }
    const uint32_t e = a >> 23; // below 2^-14: a subnormal half (units of 2^-24), or zero
    if (e < 102u)
        return static_cast<uint16_t>(sign);
    const uint32_t m = (a & 0x7FFFFFu) | 0x800000u, shift = 126u - e;
    return static_cast<uint16_t>(sign | round_even(m >> shift, m & ((1u << shift) - 1u), 1u << (shift - 1u)));
}

/// binary16 bits -> float, exact.
inline float to_float(uint16_t h)
{
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1Fu)
        return float_of(sign | 0x7F800000u | (m << 13));
    if (e != 0u)
        return float_of(sign | ((e + 112u) << 23) | (m << 13));
    if (m == 0u)
        return float_of(sign);
    e = 113u; // a subnormal: shift its leading one to the implicit bit
    while ((m & 0x400u) == 0u) {
        m <<= 1;
        --e;
    }
    return float_of(sign | (e << 23) | ((m & 0x3FFu) << 13));
}

} // namespace half_bits

/// A binary16 number: stored as its bits, computed with as float.
struct alignas(2) Half {
    uint16_t x;

    struct from_bits_t {};
    static constexpr from_bits_t from_bits() { return from_bits_t(); }

    Half() = default;
    constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}
    Half(float value) : x(half_bits::from_float(value)) {}
    operator float() const { return half_bits::to_float(x); }
};

static_assert(sizeof(Half) == 2, "Half is two bytes");

} // namespace c10

namespace at {
using c10::Half;
} // namespace at

#endif /* NEURON_CUSTOMOP_C10_HALF_H */
