// c10::Half and c10::BFloat16 from float over a fixed table of float bit patterns: every
// upper half, each with lower halves at and around both types' rounding ties. One line a
// float, "float half bfloat16" in hex: sdk_types.rs holds each line to the runtime's own
// conversions (sdk/runtime/src/base/dtype.rs), which make a tensor's elements from a
// kernel's numbers, so that the header and the runtime round alike.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

static const uint32_t LOWS[] = {0x0000, 0x0fff, 0x1000, 0x1001, 0x3000, 0x7fff, 0x8000, 0x8001, 0xffff};

int main()
{
    for (uint32_t hi = 0; hi < 0x10000; ++hi)
        for (uint32_t lo : LOWS) {
            uint32_t bits = (hi << 16) | lo;
            float f;
            std::memcpy(&f, &bits, sizeof f);
            std::printf("%08x %04x %04x\n", static_cast<unsigned>(bits), static_cast<unsigned>(c10::Half(f).x),
                        static_cast<unsigned>(c10::BFloat16(f).x));
        }
    return 0;
}
