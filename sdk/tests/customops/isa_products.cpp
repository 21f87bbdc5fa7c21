// What a 32x32-to-64 product costs per element on the emulated Q7 (check_isa.py), in
// isa_loop.h's loop: the high word signed (MULSH) and unsigned (MULUH), a product shifted
// back 16 bits, against the addition; and a MULSH at a zero-overhead loop's end.
#include <stdint.h>
#include "isa_loop.h"

// The baseline: an addition that wraps (full-range operands would overflow a signed one).
torch::Tensor add_i32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<int32_t>(a, b, torch::kInt, [](int32_t p, int32_t q) {
        return static_cast<int32_t>(static_cast<uint32_t>(p) + static_cast<uint32_t>(q));
    });
}

torch::Tensor mulhs_i32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<int32_t>(a, b, torch::kInt, [](int32_t p, int32_t q) {
        return static_cast<int32_t>((static_cast<int64_t>(p) * q) >> 32);
    });
}

torch::Tensor mulhu_u32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<int32_t>(a, b, torch::kInt, [](int32_t p, int32_t q) {
        uint64_t wide = static_cast<uint64_t>(static_cast<uint32_t>(p)) * static_cast<uint32_t>(q);
        return static_cast<int32_t>(static_cast<uint32_t>(wide >> 32));
    });
}

torch::Tensor mulq16_i32(const torch::Tensor &a, const torch::Tensor &b)
{
    return over_tcm<int32_t>(a, b, torch::kInt, [](int32_t p, int32_t q) {
        return static_cast<int32_t>(static_cast<uint32_t>((static_cast<int64_t>(p) * q) >> 16));
    });
}

// A zero-overhead loop whose last instruction is a MULSH: the device runtime, which
// completes it, must take the loop's end as the core does (element k: a[k] * b[k]'s high
// word, added 3 times, wrapping). The same value is computed in C where the assembly is not Xtensa's.
torch::Tensor mulhs_loop_end(const torch::Tensor &a, const torch::Tensor &b)
{
    torch::Tensor out = torch::empty(a.sizes(), torch::kInt);
    auto ta = a.accessor<int32_t, 1>();
    auto tb = b.accessor<int32_t, 1>();
    auto to = out.accessor<int32_t, 1>();
    for (int64_t k = 0; k < a.numel(); k++) {
        int32_t p = ta[k], q = tb[k], sum = 0;
#if defined(__XTENSA__)
        int32_t high = 0, times = 3;
        __asm__ volatile("loop %[n], 1f\n\tadd %[sum], %[sum], %[high]\n\tmulsh %[high], %[p], %[q]\n1:\n\t"
                         "add %[sum], %[sum], %[high]"
                         : [sum] "+r"(sum), [high] "+r"(high)
                         : [n] "r"(times), [p] "r"(p), [q] "r"(q));
#else
        uint32_t high = static_cast<uint32_t>((static_cast<int64_t>(p) * q) >> 32);
        sum = static_cast<int32_t>(high + high + high);
#endif
        to[k] = sum;
    }
    return out;
}

// An illegal instruction that is not MULSH or MULUH: the program still dies of SIGILL.
torch::Tensor trap_i32(const torch::Tensor &a, const torch::Tensor &)
{
    if (a.numel() > 0)
        __builtin_trap();
    return torch::empty(a.sizes(), torch::kInt);
}
