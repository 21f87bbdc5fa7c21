// The hardware's side of the windows, emulated for the device programs under qemu-user
// (accessor.cpp, kernel_bench.cpp): SoC memory is an array of the program, the five
// windows buffers of it, and every call of neuron_translate and neuron_translate_span goes
// through a wrapper (link with --wrap for both: EMU_WRAP in nt_support::qemu) that, after
// the real call, looks at
// MEM_WINDOW3/5/6 in the emulated register block and moves each window whose register
// changed: the outgoing region's bytes written back to SoC memory, the incoming region's
// loaded. A pointer kept across a refill then reads the new region, as on the hardware.
//
// The including program defines EMU_WINDOW (bytes), EMU_SOC_BASE and EMU_SOC_BYTES; the
// two pinned windows show the two regions just above SoC memory. Not measured: nt-bench
// leaves the functions of this file out of its counts (they are the hardware's work).
#ifndef EMU_WINDOWS_HPP
#define EMU_WINDOWS_HPP

namespace emu {

constexpr unsigned long kWin = EMU_WINDOW;
constexpr unsigned long long kSocBase = EMU_SOC_BASE;
constexpr unsigned long kSocBytes = EMU_SOC_BYTES;
constexpr unsigned long long kPinnedBase = kSocBase + kSocBytes;
static_assert(kWin % 256 == 0 && kSocBytes % kWin == 0, "whole blocks of copy, whole windows");

unsigned char soc_mem[kSocBytes] __attribute__((aligned(16)));
unsigned char win[5][kWin] __attribute__((aligned(16)));
_translation_ctx_t table;
/// The region each reusable window shows (its register's value when it last moved).
unsigned long long shown[3] = {~0ull, ~0ull, ~0ull};
const unsigned kRegs[3] = {NEURON_TRANSLATE_MEM_WINDOW3_LO, NEURON_TRANSLATE_MEM_WINDOW5_LO,
                           NEURON_TRANSLATE_MEM_WINDOW6_LO};

/// Copies a window's worth (n a multiple of 256, both 4-aligned) 64 words an iteration:
/// few translation blocks for qemu to log when nt-bench traces a program.
__attribute__((noinline)) void emu_copy(unsigned char *d, const unsigned char *s, unsigned long n)
{
    uint32_t *dw = reinterpret_cast<uint32_t *>(d);
    const uint32_t *sw = reinterpret_cast<const uint32_t *>(s);
    for (n /= 256; n--; dw += 64, sw += 64) {
#pragma clang loop unroll(full)
        for (int k = 0; k < 64; ++k)
            dw[k] = sw[k];
    }
}

inline bool in_soc(unsigned long long region) { return region >= kSocBase && region - kSocBase < kSocBytes; }

/// Where the byte at SoC address a lives now: in the window that shows its region, or in
/// SoC memory (null: nowhere).
inline unsigned char *where(unsigned long long a)
{
    const unsigned long long region = a & ~static_cast<unsigned long long>(kWin - 1);
    const unsigned long off = static_cast<unsigned long>(a - region);
    for (unsigned k = 0; k < 3; ++k)
        if (shown[k] == region)
            return win[k] + off;
    for (unsigned k = 3; k < 5; ++k)
        if (table.records[k].ptr == region)
            return win[k] + off;
    return in_soc(region) ? soc_mem + (a - kSocBase) : nullptr;
}

/// Copies n bytes between SoC memory at a and local memory at p (to SoC when `to_soc`),
/// region by region.
inline bool soc_copy(unsigned long long a, unsigned char *p, unsigned long long n, bool to_soc)
{
    while (n > 0) {
        unsigned char *at = where(a);
        if (!at)
            return false;
        unsigned long long room = kWin - (a & (kWin - 1));
        unsigned long m = static_cast<unsigned long>(n < room ? n : room);
        for (unsigned long i = 0; i < m; ++i) {
            if (to_soc)
                at[i] = p[i];
            else
                p[i] = at[i];
        }
        a += m;
        p += m;
        n -= m;
    }
    return true;
}

inline bool soc_write(unsigned long long a, const void *src, unsigned long long n)
{
    return soc_copy(a, const_cast<unsigned char *>(static_cast<const unsigned char *>(src)), n, true);
}

inline bool soc_read(unsigned long long a, void *dst, unsigned long long n)
{
    return soc_copy(a, static_cast<unsigned char *>(dst), n, false);
}

/// The hardware's side of a refill: each reusable window whose register changed moves.
__attribute__((noinline)) void emu_move_windows()
{
    for (unsigned k = 0; k < 3; ++k) {
        unsigned long long reg = (static_cast<unsigned long long>(NT_NXREG(kRegs[k] + 4)) << 32) | NT_NXREG(kRegs[k]);
        if (reg == shown[k])
            continue;
        if (in_soc(shown[k]))
            emu_copy(soc_mem + (shown[k] - kSocBase), win[k], kWin);
        if (in_soc(reg))
            emu_copy(win[k], soc_mem + (reg - kSocBase), kWin);
        shown[k] = reg;
    }
}

/// Writes every reusable window's region back to SoC memory (the windows stay).
inline void flush()
{
    for (unsigned k = 0; k < 3; ++k)
        if (in_soc(shown[k]))
            emu_copy(soc_mem + (shown[k] - kSocBase), win[k], kWin);
}

/// The table: three reusable windows, empty (a tag no masked address equals), programming
/// MEM_WINDOW3/5/6; two pinned windows over the regions above SoC memory.
inline void setup()
{
    for (unsigned k = 0; k < NEURON_TRANSLATE_RECORDS; ++k) {
        _map_record_t &r = table.records[k];
        r.window = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(win[k]));
        r._pad = 0;
        r.mask = ~static_cast<unsigned long long>(kWin - 1);
        r.ptr = k < 3 ? 1 : kPinnedBase + (k - 3) * kWin;
        r.reg_location = k < 3 ? kRegs[k] : 0;
    }
    table.next_alloc = 0;
}

} // namespace emu

extern "C" void *__real_neuron_translate_span(void *ctx, unsigned long long addr, unsigned long long len,
                                              unsigned long long *out_span);

extern "C" __attribute__((noinline)) void *__wrap_neuron_translate_span(void *ctx, unsigned long long addr,
                                                                        unsigned long long len,
                                                                        unsigned long long *out_span)
{
    void *p = __real_neuron_translate_span(ctx, addr, len, out_span);
    emu::emu_move_windows();
    return p;
}

// neuron_translate by its ELF name (C++ linkage: _Z16neuron_translatePvy).
extern "C" void *__real__Z16neuron_translatePvy(void *ctx, unsigned long long addr);

extern "C" __attribute__((noinline)) void *__wrap__Z16neuron_translatePvy(void *ctx, unsigned long long addr)
{
    void *p = __real__Z16neuron_translatePvy(ctx, addr);
    emu::emu_move_windows();
    return p;
}

#endif
