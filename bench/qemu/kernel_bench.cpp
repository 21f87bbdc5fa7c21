// The element-wise three-tensor kernel nt-bench counts on the device: c[i] = a[i] + 3 * b[i]
// + 1 over uint32_t tensors of KB_ELEMS elements (1 Mi), each in a 16 MiB window of its own
// as on the hardware (emu_windows.hpp moves the windows; nt-bench does not count it).
// Between bench_mark() calls, in order: the accessor (neuron::for_each) over all KB_ELEMS
// elements, then the per-element path (Tensor::get, get, set) over the first
// KB_PER_ELEMENT_ELEMS (every element costs it the same; the count is per element). Exits
// 0 if both give the right values.
#include <neuron_translate.hpp>
extern "C" {
#include "support.h"
}

#define EMU_WINDOW (16ul << 20)
#define EMU_SOC_BASE 0x4000000000ull
#define EMU_SOC_BYTES (48ul << 20)
#include "emu_windows.hpp"

namespace extended_isa { namespace sdk { unsigned long long hbm_scratch = 0x4212345678ull; } }

extern "C" __attribute__((noinline)) void bench_mark(void) { __asm__ volatile("" ::: "memory"); }

namespace {

using In = neuron::Tensor<const uint32_t>;
using Out = neuron::Tensor<uint32_t>;

__attribute__((noinline)) bool accessor(const In &a, const In &b, const Out &c, unsigned long long n)
{
    return neuron::for_each(
        0, n,
        [](unsigned long long, size_t len, const uint32_t *x, const uint32_t *y, uint32_t *z) {
            for (size_t k = 0; k < len; ++k)
                z[k] = x[k] + 3 * y[k] + 1;
        },
        a, b, c);
}

__attribute__((noinline)) bool per_element(const In &a, const In &b, const Out &c, unsigned long long n)
{
    bool ok = true;
    for (unsigned long long i = 0; i < n; ++i)
        ok = c.set(i, a.get(i) + 3 * b.get(i) + 1) && ok;
    return ok;
}

uint32_t a_of(uint32_t i) { return i * 2654435761u; }
uint32_t b_of(uint32_t i) { return i ^ 0x5bd1e995u; }

/// Element i of a tensor at SoC address soc, in the emulated SoC memory (4-aligned).
uint32_t &at(unsigned long long soc, uint32_t i)
{
    return reinterpret_cast<uint32_t *>(emu::soc_mem + (soc - emu::kSocBase))[i];
}

/// Whether elements of c are right, read from SoC memory once the windows are written
/// back: the first `all` of them, and every 61st of the first n (few blocks for qemu to
/// log: nt-bench traces the whole program; the accessor tests check every element).
bool right(const Out &c, uint32_t all, uint32_t n)
{
    emu::flush();
    bool ok = true;
    for (uint32_t i = 0; i < n; i += i < all ? 1 : 61)
        ok = ok && at(c.base(), i) == a_of(i) + 3 * b_of(i) + 1;
    return ok;
}

} // namespace

extern "C" int test_main(void)
{
    emu::setup();
    const unsigned long long w = emu::kWin, base = emu::kSocBase;
    In a(&emu::table, base, KB_ELEMS), b(&emu::table, base + w, KB_ELEMS);
    Out c(&emu::table, base + 2 * w, KB_ELEMS);
    // The data straight into SoC memory, before any window shows it (a few blocks for
    // qemu to log: nt-bench traces the whole program).
#pragma clang loop unroll_count(16)
    for (uint32_t i = 0; i < KB_ELEMS; ++i) {
        at(a.base(), i) = a_of(i);
        at(b.base(), i) = b_of(i);
    }
    bench_mark();
    bool ok = accessor(a, b, c, KB_ELEMS);
    bench_mark();
    ok = right(c, 0, KB_ELEMS) && ok;
    for (uint32_t i = 0; i < KB_PER_ELEMENT_ELEMS; ++i)
        c.set(i, 0);
    bench_mark();
    ok = per_element(a, b, c, KB_PER_ELEMENT_ELEMS) && ok;
    bench_mark();
    ok = right(c, KB_PER_ELEMENT_ELEMS, KB_PER_ELEMENT_ELEMS) && ok;
    put_str(ok ? "kernel right\n" : "kernel WRONG\n");
    return ok ? 0 : 1;
}
