/*
 * The handlers -fsanitize=integer-divide-by-zero calls (ntx builds kernels with that check):
 * each reports the division to the runtime (edges/ubsan.rs), which stops the core. Defined
 * weak, so that a sanitizer runtime linked in (an AddressSanitizer build's) keeps its own.
 */
#include <stdint.h>

void nt_integer_divide_by_zero(void);

__attribute__((weak)) void __ubsan_handle_divrem_overflow(void *data, uintptr_t lhs, uintptr_t rhs)
{
    (void)data, (void)lhs, (void)rhs;
    nt_integer_divide_by_zero();
}

__attribute__((weak)) void __ubsan_handle_divrem_overflow_abort(void *data, uintptr_t lhs, uintptr_t rhs)
{
    __ubsan_handle_divrem_overflow(data, lhs, rhs);
}
