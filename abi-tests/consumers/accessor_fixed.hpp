// The fixed kernels the device (under qemu, abi-tests/qemu/accessor.cpp) and the host model
// (accessor_host.cpp --fixed) both run: the same element types, counts and data, laid out
// in units of each side's window size so that both cross window boundaries, straddle,
// bounce and use a pinned window. Their outputs' hashes must be equal.
#ifndef ACCESSOR_FIXED_HPP
#define ACCESSOR_FIXED_HPP

#include "accessor_kernels.hpp"

namespace fixed {

/// SoC memory starts here on both sides (the host model's HBM base).
constexpr unsigned long long kSocBase = 0x4000000000ull;
/// The device program's windows, SoC memory and pinned regions (above SoC memory).
constexpr unsigned long kDeviceWindow = 64ul << 10;
constexpr unsigned long kSocBytes = 4ul << 20;
constexpr unsigned long long kPinnedBase = kSocBase + kSocBytes;

using Report = void (*)(const char *name, unsigned long long hash, bool same, const kernels::Calls &calls);

/// Runs every fixed kernel through table `ctx`, whose windows are `w` bytes, with the
/// pinned window at `pinned`; reports each; true if per element and accessor agree in all.
inline bool run_all(void *ctx, unsigned long long w, unsigned long long pinned, const kernels::Soc &soc,
                    Report report)
{
    bool all = true, same = false;
    kernels::Calls c;
    const unsigned long long b = kSocBase;
    {
        // Three views of uint32_t, each across a window boundary: the direct path.
        const unsigned long long bases[3] = {b + 1 * w - 4 * 777, b + 3 * w - 4 * 777, b + 5 * w - 4 * 777};
        unsigned long long h = kernels::fixed_kernel<uint32_t>(ctx, soc, bases, 20000, 11, same, c);
        report("u32x3", h, same, c);
        all = all && same;
    }
    {
        // Five views of a 12-byte struct, misaligned: more views than reusable windows
        // and straddling elements, so bounces.
        unsigned long long bases[5];
        for (unsigned j = 0; j < 5; ++j)
            bases[j] = b + (9 + 2 * j) * w - 5000 + 1;
        unsigned long long h = kernels::fixed_kernel<kernels::S12>(ctx, soc, bases, 3000, 12, same, c);
        report("s12x5", h, same, c);
        all = all && same;
    }
    {
        // One view of a 3-byte struct, updated in place across two boundaries.
        const unsigned long long bases[1] = {b + 20 * w - 100 + 7};
        unsigned long long h = kernels::fixed_kernel<kernels::P3>(ctx, soc, bases, 50000, 13, same, c);
        report("p3x1", h, same, c);
        all = all && same;
    }
    {
        // A 64-bit input in the pinned window, the output in a reusable one.
        const unsigned long long bases[2] = {pinned + 8, b + 24 * w - 800};
        unsigned long long h = kernels::fixed_kernel<unsigned long long>(ctx, soc, bases, 1000, 14, same, c);
        report("u64x2", h, same, c);
        all = all && same;
    }
    return all;
}

} // namespace fixed

#endif
