/*
 * The handlers of the kernels' checks (ntx builds kernels with -fsanitize=
 * integer-divide-by-zero,signed-integer-overflow,shift-exponent,float-cast-overflow): each reports
 * the operation to the runtime (edges/ubsan.rs), which stops the core. Defined weak, so
 * that a sanitizer runtime linked in (an AddressSanitizer build's) keeps its own.
 */
#include <stdint.h>

void nt_integer_divide_by_zero(void);
void nt_signed_overflow(void);
void nt_shift_out_of_bounds(void);
void nt_float_cast_overflow(void);

/* The checks' data begins with the source location, then the operand's type (clang's and
 * gcc's ABI): a type is u16 kind (0: integer), u16 info (log2 of its bits << 1 | signed). */
struct nt_type {
    uint16_t kind, info;
};
struct nt_operation {
    const char *file;
    uint32_t line, column;
    const struct nt_type *type;
};

/* Whether the value `v` of an integer `type` is zero: a value wider than a pointer is
 * passed by its address. */
static int nt_is_zero(const struct nt_type *type, uintptr_t v)
{
    unsigned bits = 1u << (type->info >> 1);
    if (bits <= 8 * sizeof(uintptr_t))
        return v == 0;
    const unsigned char *p = (const unsigned char *)v;
    for (unsigned k = 0; k < bits / 8; ++k)
        if (p[k])
            return 0;
    return 1;
}

/* A division or remainder: by zero, or the most negative value by -1 (an overflow). */
__attribute__((weak)) void __ubsan_handle_divrem_overflow(void *data, uintptr_t lhs, uintptr_t rhs)
{
    const struct nt_operation *op = data;
    (void)lhs;
    if (op->type->kind == 0 && !nt_is_zero(op->type, rhs))
        nt_signed_overflow();
    else
        nt_integer_divide_by_zero();
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
