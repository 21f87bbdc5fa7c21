/*
 * What the handlers of the kernels' checks (-fsanitize=integer-divide-by-zero,
 * signed-integer-overflow, shift-exponent, float-cast-overflow) are given, in clang's and
 * gcc's ABI: a check's data begins with the source location, then the operand's type. The
 * host runtime's handlers (sdk/runtime/src/ubsan.c) and the device runtime's
 * (sdk/device/support.c) read it alike.
 */
#ifndef NT_UBSAN_ABI_H
#define NT_UBSAN_ABI_H

#include <stdint.h>

/* A type: u16 kind (0: integer), u16 info (log2 of its bits << 1 | signed), its name. */
struct nt_ubsan_type {
    uint16_t kind, info;
};

/* A check's data: where, then (for an arithmetic check) the operand's type. */
struct nt_ubsan_data {
    const char *file;
    uint32_t line, column;
    const struct nt_ubsan_type *type;
};

/* Whether the integer value `v` of `type` is zero: a value wider than a pointer is passed
 * by its address. */
static inline int nt_ubsan_is_zero(const struct nt_ubsan_type *type, uintptr_t v)
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

/* Whether a division's data and divisor say it divides by zero (else: the most negative
 * value by -1, an overflow). */
static inline int nt_ubsan_by_zero(const struct nt_ubsan_data *d, uintptr_t rhs)
{
    return d->type->kind != 0 || nt_ubsan_is_zero(d->type, rhs);
}

#endif /* NT_UBSAN_ABI_H */
