/*
 * printf on the emulated Q7. The format is split into its conversions, each sent with its
 * argument (widened as the device passes it: int and long are 32 bits here) to the runner,
 * which formats it with the host's C library (protocol.h, NT_DEVICE_PRINT): the host run's
 * text. The arguments are read as the windowed ABI passes them, not through <stdarg.h>
 * (clang 22's va_arg for Xtensa does not find them): printf (start.S) hands over the
 * registers a3-a7 and the caller's stack arguments; a 64-bit value takes an even register
 * pair (a4/a5, a6/a7) or 8-byte-aligned stack, and once one argument is on the stack all
 * later ones are.
 */
#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "protocol.h"

size_t strlen(const char *s);

#define PIECES 4096u

static unsigned char buf[PIECES];
static uint32_t used, printed;

/* The arguments after the format: registers a3-a7 (index 0-4), then the stack. */
struct nt_device_args {
    const uint32_t *regs;
    const unsigned char *stack;
    uint32_t reg, at;
    int on_stack;
};

static uint32_t nt_device_word(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t nt_device_arg32(struct nt_device_args *a)
{
    uint32_t v;
    if (!a->on_stack && a->reg < 5)
        return a->regs[a->reg++];
    a->on_stack = 1;
    v = nt_device_word(a->stack + a->at);
    a->at += 4;
    return v;
}

static uint64_t nt_device_arg64(struct nt_device_args *a)
{
    uint64_t lo, hi;
    if (!a->on_stack) {
        a->reg += (a->reg & 1) == 0; /* a4 and a6 are indices 1 and 3 */
        if (a->reg + 1 < 5) {
            lo = a->regs[a->reg];
            hi = a->regs[a->reg + 1];
            a->reg += 2;
            return lo | hi << 32;
        }
        a->on_stack = 1;
    }
    a->at = (a->at + 7) & ~7u;
    lo = nt_device_word(a->stack + a->at);
    hi = nt_device_word(a->stack + a->at + 4);
    a->at += 8;
    return lo | hi << 32;
}

static void nt_device_flush(void)
{
    if (used)
        printed += nt_device_send(NT_DEVICE_PRINT, buf, used);
    used = 0;
}

static void nt_device_add(const void *p, uint32_t n)
{
    const unsigned char *s = p;
    if (used + n > PIECES)
        nt_device_flush();
    if (n > PIECES)
        n = PIECES; /* a longer string is cut */
    for (uint32_t k = 0; k < n; ++k)
        buf[used + k] = s[k];
    used += n;
}

/* One piece: its type, its spec (or text) and its value. */
static void nt_device_piece(unsigned type, const char *spec, uint32_t spec_len, const void *value, uint32_t n)
{
    struct nt_device_piece head;
    if (spec_len > 255)
        spec_len = 255;
    head.kind = (uint8_t)type;
    head.spec_bytes = (uint8_t)spec_len;
    if (used + sizeof head + spec_len + n > PIECES)
        nt_device_flush();
    nt_device_add(&head, sizeof head);
    nt_device_add(spec, spec_len);
    if (n)
        nt_device_add(value, n);
}

/* Text, in pieces of at most 255 bytes. */
static void nt_device_text(const char *s, uint32_t n)
{
    while (n) {
        uint32_t k = n > 255 ? 255 : n;
        nt_device_piece(NT_DEVICE_TEXT, s, k, 0, 0);
        s += k;
        n -= k;
    }
}

static int nt_device_is_flag(char c) { return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0'; }
static int nt_device_is_digit(char c) { return c >= '0' && c <= '9'; }

/* Appends the decimal digits of v to s at *n. */
static void nt_device_put_int(char *s, uint32_t *n, int32_t v)
{
    char d[12];
    int k = 0;
    uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
    if (v < 0)
        s[(*n)++] = '-';
    do {
        d[k++] = (char)('0' + u % 10); /* QUOU and REMU: the core's divider */
        u /= 10;
    } while (u);
    while (k)
        s[(*n)++] = d[--k];
}

/* The integer of conversion c with length `len` (0 int, 1 long, 2 long long, 3 short,
 * 4 char, 5 intmax_t, 6 size_t), widened to 64 bits as printf converts it. */
static int64_t nt_device_integer(struct nt_device_args *a, char c, int len)
{
    int is_signed = c == 'd' || c == 'i';
    int32_t w;
    if (len == 2 || len == 5)
        return (int64_t)nt_device_arg64(a);
    w = (int32_t)nt_device_arg32(a);
    if (len == 3)
        w = is_signed ? (int16_t)w : (int32_t)(uint16_t)w;
    else if (len == 4)
        w = is_signed ? (int8_t)w : (int32_t)(uint8_t)w;
    return is_signed ? (int64_t)w : (int64_t)(uint32_t)w;
}

/* The conversion at f (after '%'): its spec rewritten for the host ("ll" for integers,
 * '*' replaced by its argument), its argument taken; the characters read. */
static uint32_t nt_device_conversion(const char *f, struct nt_device_args *a)
{
    char spec[64];
    uint32_t n = 0, k = 0;
    int len = 0;
    spec[n++] = '%';
    while (nt_device_is_flag(f[k]) && n < 40)
        spec[n++] = f[k++];
    for (int part = 0; part < 2; ++part) {
        if (part == 1) {
            if (f[k] != '.')
                break;
            spec[n++] = f[k++];
        }
        if (f[k] == '*') {
            nt_device_put_int(spec, &n, (int32_t)nt_device_arg32(a));
            ++k;
        }
        while (nt_device_is_digit(f[k]) && n < 56)
            spec[n++] = f[k++];
    }
    for (;; ++k) {
        char c = f[k];
        if (c == 'l')
            len = len == 1 ? 2 : 1;
        else if (c == 'h')
            len = len == 3 ? 4 : 3;
        else if (c == 'j' || c == 'q')
            len = 5;
        else if (c == 'z' || c == 't')
            len = 6;
        else if (c != 'L')
            break;
    }
    char c = f[k];
    if (!c)
        return k;
    ++k;
    if (c == 'd' || c == 'i' || c == 'u' || c == 'o' || c == 'x' || c == 'X' || c == 'c') {
        struct nt_device_piece_int v = {nt_device_integer(a, c, len)};
        if (c != 'c') {
            spec[n++] = 'l';
            spec[n++] = 'l';
        }
        spec[n++] = c;
        nt_device_piece(NT_DEVICE_INT, spec, n, &v, sizeof v);
    } else if (c == 'f' || c == 'F' || c == 'e' || c == 'E' || c == 'g' || c == 'G' || c == 'a' || c == 'A') {
        uint64_t bits = nt_device_arg64(a);
        struct nt_device_piece_double v;
        __builtin_memcpy(&v, &bits, sizeof v);
        spec[n++] = c;
        nt_device_piece(NT_DEVICE_DOUBLE, spec, n, &v, sizeof v);
    } else if (c == 's') {
        const char *s = (const char *)(uintptr_t)nt_device_arg32(a);
        struct nt_device_piece_string sl;
        if (!s)
            s = "(null)";
        sl.bytes = (uint32_t)strlen(s);
        spec[n++] = 's';
        nt_device_piece(NT_DEVICE_STRING, spec, n, &sl, sizeof sl);
        nt_device_add(s, sl.bytes);
    } else if (c == 'p') {
        struct nt_device_piece_int v = {(int64_t)nt_device_arg32(a)};
        spec[n++] = '#';
        spec[n++] = 'l';
        spec[n++] = 'l';
        spec[n++] = 'x';
        nt_device_piece(NT_DEVICE_INT, spec, n, &v, sizeof v);
    } else if (c == '%') {
        nt_device_text("%", 1);
    } else if (c == 'n') {
        (void)nt_device_arg32(a); /* not written: the count lives on the host */
    }
    return k;
}

/* printf's body (start.S's printf passes the registers and the stack arguments). */
int nt_device_printf(const char *f, const uint32_t *regs, const unsigned char *stack)
{
    struct nt_device_args a = {regs, stack, 0, 0, 0};
    printed = 0;
    while (*f) {
        uint32_t t = 0;
        while (f[t] && f[t] != '%')
            ++t;
        nt_device_text(f, t);
        f += t;
        if (*f == '%')
            f += 1 + nt_device_conversion(f + 1, &a);
    }
    nt_device_flush();
    return (int)printed;
}

int puts(const char *s)
{
    nt_device_text(s, (uint32_t)strlen(s));
    nt_device_text("\n", 1);
    nt_device_flush();
    return 0;
}

int putchar(int c)
{
    char ch = (char)c;
    nt_device_text(&ch, 1);
    nt_device_flush();
    return c;
}
