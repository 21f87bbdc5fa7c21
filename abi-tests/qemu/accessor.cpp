// neuron_translate.hpp on the device, under qemu-xtensa: the fixed kernels of
// accessor_kernels.hpp, built with clang for the device (-ffreestanding -fno-exceptions
// -fno-rtti, no heap), linked with the unmodified device object.
//
// Window moves are emulated (emu_windows.hpp). Windows are 64 KiB here (16 MiB on the
// hardware), so that tensors of a few thousand elements cross several.
//
// Prints one line per kernel, "fixed NAME HASH same|DIFFER", which
// abi-tests/tests/accessor.rs compares with the host model's run of the same kernels.
#include <neuron_translate.hpp>
extern "C" {
#include "support.h"
}
#include "accessor_fixed.hpp"
#include "accessor_kernels.hpp"

#define EMU_WINDOW fixed::kDeviceWindow
#define EMU_SOC_BASE fixed::kSocBase
#define EMU_SOC_BYTES fixed::kSocBytes
#include "emu_windows.hpp"

namespace extended_isa { namespace sdk { unsigned long long hbm_scratch = 0x4212345678ull; } }

namespace {

void report(const char *name, unsigned long long hash, bool same, const kernels::Calls &)
{
    put_str("fixed ");
    put_str(name);
    put_str(" ");
    put_hex(hash);
    put_str(same ? " same" : " DIFFER");
    put_str("\n");
}

} // namespace

// The test's own 64-bit multiplies (the data's generator and hash, not the header: it needs
// none), without libgcc: shift and add.
extern "C" unsigned long long __muldi3(unsigned long long a, unsigned long long b)
{
    unsigned long long r = 0;
    for (; b; b >>= 1, a <<= 1)
        if (b & 1)
            r += a;
    return r;
}

extern "C" int test_main(void)
{
    emu::setup();
    const kernels::Soc soc{emu::soc_write, emu::soc_read};
    bool all = fixed::run_all(&emu::table, emu::kWin, emu::kPinnedBase, soc, report);
    return all ? 0 : 1;
}
