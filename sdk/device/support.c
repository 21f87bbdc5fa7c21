/*
 * What a kernel's compiled code may call beyond the SDK on the emulated Q7, with no C
 * library linked: the integer division helpers the compiler calls (64-bit ones: a 32-bit
 * division is the core's QUOS, docs/q7-isa.md; __muldi3 is in start.S), the program's own
 * heap (memory.c gives a kernel's malloc and new), and the C++ ABI's few hooks.
 * A kernel that needs more (<cmath> functions, exceptions) does not link, and ntx says
 * which symbols are missing. The C library's string functions the compiler and the
 * headers call are here too (memcpy, memmove and memset are memory.c's).
 */
#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "protocol.h"
#include "ubsan_abi.h"


/* The kernels' checks of operations undefined in C++ (ntx builds kernels with -fsanitize=
 * integer-divide-by-zero,shift-exponent,float-cast-overflow, here as on the host; their
 * data: ubsan_abi.h): the runner reports the operation's line and stops the core.
 * nt_undefined sends `request`: a division by zero's place, or another operation's `what`
 * and place (protocol.h's structs), then the file's name. */
static void nt_undefined(uint32_t request, uint32_t what, const struct nt_ubsan_data *at)
{
    unsigned char p[sizeof(struct nt_device_undefined_at) + 256];
    uint32_t n = 0, head;
    if (request == NT_DEVICE_UNDEFINED) {
        struct nt_device_undefined_at q = {what, at->line, at->column};
        nt_device_copy(p, &q, head = sizeof q);
    } else {
        struct nt_device_place q = {at->line, at->column};
        nt_device_copy(p, &q, head = sizeof q);
    }
    while (at->file && at->file[n] && n < 256)
        p[head + n] = (unsigned char)at->file[n], n++;
    nt_device_send(request, p, head + n);
}
void __ubsan_handle_divrem_overflow(const void *data, uintptr_t lhs, uintptr_t rhs)
{
    (void)lhs;
    if (nt_ubsan_by_zero(data, rhs))
        nt_undefined(NT_DEVICE_DIVIDE_BY_ZERO, 0, data);
    else
        nt_undefined(NT_DEVICE_UNDEFINED, NT_DEVICE_UB_SIGNED_OVERFLOW, data);
}
void __ubsan_handle_divrem_overflow_abort(const void *data, uintptr_t lhs, uintptr_t rhs)
{
    __ubsan_handle_divrem_overflow(data, lhs, rhs);
}
void __ubsan_handle_shift_out_of_bounds(const void *data, uintptr_t lhs, uintptr_t rhs)
{
    (void)lhs, (void)rhs;
    nt_undefined(NT_DEVICE_UNDEFINED, NT_DEVICE_UB_SHIFT, data);
}
void __ubsan_handle_shift_out_of_bounds_abort(const void *data, uintptr_t lhs, uintptr_t rhs)
{
    __ubsan_handle_shift_out_of_bounds(data, lhs, rhs);
}
void __ubsan_handle_float_cast_overflow(const void *data, uintptr_t from)
{
    (void)from;
    nt_undefined(NT_DEVICE_UNDEFINED, NT_DEVICE_UB_FLOAT_TO_INTEGER, data);
}
void __ubsan_handle_float_cast_overflow_abort(const void *data, uintptr_t from)
{
    __ubsan_handle_float_cast_overflow(data, from);
}

/* Quotient of n / d (d != 0), remainder in *r: shift and subtract. */
static uint64_t udivmod64(uint64_t n, uint64_t d, uint64_t *r)
{
    uint64_t q = 0, rem = 0;
    if (d == 0) {
        *r = 0;
        return ~0ull;
    }
    for (int k = 63; k >= 0; --k) {
        rem = (rem << 1) | ((n >> k) & 1);
        if (rem >= d) {
            rem -= d;
            q |= 1ull << k;
        }
    }
    *r = rem;
    return q;
}

uint64_t __udivdi3(uint64_t n, uint64_t d)
{
    uint64_t r;
    return udivmod64(n, d, &r);
}

uint64_t __umoddi3(uint64_t n, uint64_t d)
{
    uint64_t r;
    udivmod64(n, d, &r);
    return r;
}

int64_t __divdi3(int64_t n, int64_t d)
{
    uint64_t r, q = udivmod64(n < 0 ? 0 - (uint64_t)n : (uint64_t)n, d < 0 ? 0 - (uint64_t)d : (uint64_t)d, &r);
    return (n < 0) != (d < 0) ? (int64_t)(0 - q) : (int64_t)q;
}

int64_t __moddi3(int64_t n, int64_t d)
{
    uint64_t r;
    udivmod64(n < 0 ? 0 - (uint64_t)n : (uint64_t)n, d < 0 ? 0 - (uint64_t)d : (uint64_t)d, &r);
    return n < 0 ? (int64_t)(0 - r) : (int64_t)r;
}

uint32_t __udivsi3(uint32_t n, uint32_t d) { return (uint32_t)__udivdi3(n, d); }
uint32_t __umodsi3(uint32_t n, uint32_t d) { return (uint32_t)__umoddi3(n, d); }
int32_t __divsi3(int32_t n, int32_t d) { return (int32_t)__divdi3(n, d); }
int32_t __modsi3(int32_t n, int32_t d) { return (int32_t)__moddi3(n, d); }

/* The program's own heap, for what is allocated outside a kernel (a static constructor):
 * memory.c's malloc gives a kernel's from the device's C heap. First fit over chunks, each
 * after a 16-byte header (its bytes, header included, and whether it is taken), free
 * chunks merged as the search passes them. */
#define HEAP_BYTES (4u << 20)
static unsigned char heap[HEAP_BYTES] __attribute__((aligned(16)));
struct chunk {
    uint32_t bytes, taken, pad[2];
};
static int heap_ready;

static struct chunk *chunk_at(uint32_t at) { return (struct chunk *)(heap + at); }

void *nt_device_own_malloc(size_t n)
{
    if (!heap_ready)
        chunk_at(0)->bytes = HEAP_BYTES, chunk_at(0)->taken = 0, heap_ready = 1;
    if (n > HEAP_BYTES - sizeof(struct chunk))
        return NULL;
    uint32_t want = (uint32_t)((n + 15) & ~(size_t)15) + sizeof(struct chunk);
    for (uint32_t at = 0; at < HEAP_BYTES; at += chunk_at(at)->bytes) {
        struct chunk *c = chunk_at(at);
        if (c->bytes < sizeof(struct chunk) || c->bytes > HEAP_BYTES - at)
            return NULL; /* a header a store past a buffer overwrote */
        if (c->taken)
            continue;
        while (at + c->bytes < HEAP_BYTES && !chunk_at(at + c->bytes)->taken)
            c->bytes += chunk_at(at + c->bytes)->bytes;
        if (c->bytes < want)
            continue;
        if (c->bytes - want >= 2 * sizeof(struct chunk)) {
            chunk_at(at + want)->bytes = c->bytes - want, chunk_at(at + want)->taken = 0;
            c->bytes = want;
        }
        c->taken = 1;
        return c + 1;
    }
    return NULL;
}

void nt_device_own_free(void *p)
{
    if (p && (unsigned char *)p > heap && (unsigned char *)p < heap + HEAP_BYTES)
        ((struct chunk *)p - 1)->taken = 0;
}

int nt_device_in_own_heap(const void *p)
{
    return (const unsigned char *)p >= heap && (const unsigned char *)p < heap + HEAP_BYTES;
}

void *__dso_handle;
int __cxa_atexit(void (*f)(void *), void *arg, void *dso) { return (void)f, (void)arg, (void)dso, 0; }
void __cxa_pure_virtual(void) {}

/* What libstdc++'s containers call when an allocation or a length is impossible (the device
 * builds kernels without exceptions; its libc++ aborts): the kernel stops, a crash. At -Os
 * std::vector keeps these calls. */
void _ZSt17__throw_bad_allocv(void) { __builtin_trap(); }
void _ZSt28__throw_bad_array_new_lengthv(void) { __builtin_trap(); }
void _ZSt20__throw_length_errorPKc(const char *what) { (void)what, __builtin_trap(); }

/* float -> double, exact (printf's float arguments): the core's FP option is single
 * precision. */
double __extendsfdf2(float f)
{
    union {
        float f;
        uint32_t u;
    } in = {f};
    union {
        uint64_t u;
        double d;
    } out;
    uint64_t sign = (uint64_t)(in.u >> 31) << 63;
    uint32_t exp = (in.u >> 23) & 0xff, man = in.u & 0x7fffff;
    if (exp == 0xff) {
        out.u = sign | (0x7ffull << 52) | ((uint64_t)man << 29);
    } else if (exp == 0) {
        if (man == 0) {
            out.u = sign;
        } else { /* subnormal: normalize */
            int e = -126;
            while (!(man & 0x800000)) {
                man <<= 1;
                --e;
            }
            out.u = sign | ((uint64_t)(e + 1023) << 52) | ((uint64_t)(man & 0x7fffff) << 29);
        }
    } else {
        out.u = sign | ((uint64_t)(exp - 127 + 1023) << 52) | ((uint64_t)man << 29);
    }
    return out.d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; --n, ++x, ++y)
        if (*x != *y)
            return *x < *y ? -1 : 1;
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        ++n;
    return n;
}

/* The stack pointer of this call: just below the caller's frame (the device runtime's
 * stack watch, runtime.c). */
uintptr_t nt_device_sp(void)
{
    uintptr_t sp;
    __asm__ volatile("mov %0, a1" : "=r"(sp));
    return sp;
}

/* Paints `bytes` below `top` with `pattern`, up to 256 bytes under `top` (this function's
 * own frame lies within those 256 bytes): the first word of [at, top) a kernel writes
 * shows how deep its frames went. Returns `at`, the lowest word painted. */
uint32_t *nt_device_paint(uintptr_t top, uint32_t bytes, uint32_t pattern)
{
    uint32_t *at = (uint32_t *)((top - bytes) & ~(uintptr_t)15);
    for (uint32_t *p = at; p < (uint32_t *)(top - 256); p += 4)
        p[0] = p[1] = p[2] = p[3] = pattern;
    return at;
}
