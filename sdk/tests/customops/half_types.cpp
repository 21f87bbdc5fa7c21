// c10::Half and c10::BFloat16 of the custom-op SDK (sdk/include/c10/util/), checked
// (sdk/tests/tests/sdk_types.rs builds and runs it as C++14 with gcc and clang):
//
//  - Half against the compiler's own _Float16 (IEEE binary16, round to nearest even) on
//    every one of the 65536 halves converted to float, and on floats: one in 257 of all
//    2^32 bit patterns, every half's value, and the floats at, just below and just above
//    each midpoint between neighbouring halves (where ties to even decide);
//  - BFloat16 on every bfloat16 to float (the bits shifted up), and on the same kinds of
//    floats against rounding written from its definition: the nearer of the two
//    neighbours, the even one on a tie.
//
// Prints the counts; exits 0 only if every conversion agrees.
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>

namespace {

unsigned long long checked = 0, wrong = 0;

uint32_t bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float from_bits(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

/// NaNs agree on being NaN and on their sign; everything else bit for bit.
bool same16(uint16_t a, uint16_t b, uint16_t exp_mask)
{
    const bool nan_a = (a & exp_mask) == exp_mask && (a & ~exp_mask & 0x7FFFu) != 0;
    const bool nan_b = (b & exp_mask) == exp_mask && (b & ~exp_mask & 0x7FFFu) != 0;
    return nan_a || nan_b ? nan_a && nan_b && (a & 0x8000u) == (b & 0x8000u) : a == b;
}

void half_of(float f)
{
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    const uint16_t got = c10::Half(f).x;
    ++checked;
    if (!same16(got, want, 0x7C00u) && wrong++ < 5)
        std::printf("Half(%a): 0x%04x, _Float16 0x%04x\n", static_cast<double>(f), got, want);
}

/// bfloat16 from its definition: the nearer neighbour of f's upper half, ties to even.
uint16_t bfloat16_reference(float f)
{
    const uint32_t u = bits(f);
    if (std::isnan(f))
        return static_cast<uint16_t>((u >> 16) | 0x40u);
    const uint32_t lo = u >> 16, rest = u & 0xFFFFu;
    if (rest > 0x8000u || (rest == 0x8000u && (lo & 1u)))
        return static_cast<uint16_t>(lo + 1u);
    return static_cast<uint16_t>(lo);
}

void bfloat16_of(float f)
{
    const uint16_t got = c10::BFloat16(f).x, want = bfloat16_reference(f);
    ++checked;
    if (!same16(got, want, 0x7F80u) && wrong++ < 5)
        std::printf("BFloat16(%a): 0x%04x, reference 0x%04x\n", static_cast<double>(f), got, want);
}

void both(float f)
{
    half_of(f);
    bfloat16_of(f);
}

} // namespace

int main()
{
    for (uint32_t b = 0; b < 0x10000u; ++b) {
        const uint16_t x = static_cast<uint16_t>(b);
        _Float16 h;
        std::memcpy(&h, &x, 2);
        const float want = static_cast<float>(h), got = c10::Half(x, c10::Half::from_bits());
        ++checked;
        if (!(bits(got) == bits(want) || (std::isnan(got) && std::isnan(want))) && wrong++ < 5)
            std::printf("float(Half 0x%04x) = %a, _Float16 gives %a\n", b, static_cast<double>(got),
                        static_cast<double>(want));
        ++checked;
        if (bits(c10::BFloat16(x, c10::BFloat16::from_bits())) != b << 16 && wrong++ < 5)
            std::printf("float(BFloat16 0x%04x) is not its bits shifted up\n", b);
        // Every value, and the floats at and around each midpoint to the next value up.
        const float v = static_cast<float>(h);
        const uint16_t up = static_cast<uint16_t>(x + 1u);
        _Float16 next;
        std::memcpy(&next, &up, 2);
        if (!std::isfinite(v) || !std::isfinite(static_cast<float>(next)) || (x & 0x7FFFu) == 0x7BFFu)
            continue;
        const float mid = (v + static_cast<float>(next)) / 2;
        both(v);
        for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, mid * 2)})
            half_of(f);
        const uint32_t bmid = (b << 16) + 0x8000u;
        for (uint32_t u : {b << 16, bmid, bmid - 1u, bmid + 1u})
            bfloat16_of(from_bits(u));
    }
    for (uint64_t u = 0; u <= 0xFFFFFFFFull; u += 257)
        both(from_bits(static_cast<uint32_t>(u)));
    for (float f : {65504.0f, 65519.99f, 65520.0f, 1e-8f, 5.960464477539063e-8f, 2.9802322387695312e-8f,
                    3.4028235e38f, -0.0f, INFINITY, -INFINITY, NAN})
        both(f);
    std::printf("%llu conversions, %llu wrong\n", checked, wrong);
    std::printf("%s\n", wrong == 0 ? "all conversions right" : "CONVERSIONS WRONG");
    return wrong == 0 ? 0 : 1;
}
