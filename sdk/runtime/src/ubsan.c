/*
 * The handlers of the kernels' checks (ntx builds kernels with -fsanitize=
 * integer-divide-by-zero,signed-integer-overflow,shift-exponent,float-cast-overflow): each reports
 * the operation to the runtime (edges/ubsan.rs), which stops the core. Defined weak, so
 * that a sanitizer runtime linked in (an AddressSanitizer build's) keeps its own.
 */
#include <stdint.h>

#include "ubsan_abi.h"

void nt_integer_divide_by_zero(void);
void nt_signed_overflow(void);
void nt_shift_out_of_bounds(void);
void nt_float_cast_overflow(void);

/* A division or remainder: by zero, or the most negative value by -1 (an overflow). */
__attribute__((weak)) void __ubsan_handle_divrem_overflow(void *data, uintptr_t lhs, uintptr_t rhs)
{
    (void)lhs;
    if (nt_ubsan_by_zero(data, rhs))
        nt_integer_divide_by_zero();
    else
        nt_signed_overflow();
}

__attribute__((weak)) void __ubsan_handle_divrem_overflow_abort(void *data, uintptr_t lhs, uintptr_t rhs)
{
    __ubsan_handle_divrem_overflow(data, lhs, rhs);
}

#define NT_BINARY(name, report)                                                                                \
    __attribute__((weak)) void __ubsan_handle_##name(void *data, uintptr_t lhs, uintptr_t rhs)                 \
    {                                                                                                          \
        (void)data, (void)lhs, (void)rhs;                                                                      \
        report();                                                                                              \
    }                                                                                                          \
    __attribute__((weak)) void __ubsan_handle_##name##_abort(void *data, uintptr_t lhs, uintptr_t rhs)         \
    {                                                                                                          \
        __ubsan_handle_##name(data, lhs, rhs);                                                                 \
    }
NT_BINARY(add_overflow, nt_signed_overflow)
NT_BINARY(sub_overflow, nt_signed_overflow)
NT_BINARY(mul_overflow, nt_signed_overflow)
NT_BINARY(shift_out_of_bounds, nt_shift_out_of_bounds)

#define NT_UNARY(name, report)                                                                                 \
    __attribute__((weak)) void __ubsan_handle_##name(void *data, uintptr_t v)                                  \
    {                                                                                                          \
        (void)data, (void)v;                                                                                   \
        report();                                                                                              \
    }                                                                                                          \
    __attribute__((weak)) void __ubsan_handle_##name##_abort(void *data, uintptr_t v)                          \
    {                                                                                                          \
        __ubsan_handle_##name(data, v);                                                                        \
    }
NT_UNARY(negate_overflow, nt_signed_overflow)
NT_UNARY(float_cast_overflow, nt_float_cast_overflow)
