/* Freestanding support for the qemu test programs: output through the write syscall of
 * start.S, and the few C library routines a compiler may call on its own. */
#ifndef NT_QEMU_SUPPORT_H
#define NT_QEMU_SUPPORT_H
#include <stddef.h>
#include <stdint.h>
#include "neuron_translate.h"

/* The emulated NX register block, at NEURON_TRANSLATE_NX_REG_BASE (support.c). */
extern volatile uint32_t nt_nxregs[NEURON_TRANSLATE_NX_REG_BLOCK_SIZE / 4];
#define NT_NXREG(addr) nt_nxregs[((addr) - NEURON_TRANSLATE_NX_REG_BASE) / 4]

int sys_write(int fd, const void *buf, unsigned len);

void *memcpy(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

static inline void put_str(const char *s)
{
    unsigned n = 0;
    while (s[n])
        ++n;
    sys_write(1, s, n);
}

/* Decimal without division: the device object's options (xtensa/TARGET-OPTIONS.md) have
 * no div32, and a libgcc is not linked in. */
static inline void put_dec(unsigned long v)
{
    static const unsigned long pow10[] = {1000000000ul, 100000000ul, 10000000ul, 1000000ul,
                                          100000ul, 10000ul, 1000ul, 100ul, 10ul, 1ul};
    char buf[11];
    int n = 0;
    unsigned i;
    for (i = 0; i < sizeof pow10 / sizeof pow10[0]; ++i) {
        char d = '0';
        while (v >= pow10[i]) {
            v -= pow10[i];
            ++d;
        }
        if (d != '0' || n || i + 1 == sizeof pow10 / sizeof pow10[0])
            buf[n++] = d;
    }
    buf[n] = 0;
    put_str(buf);
}

static inline void put_hex(unsigned long long v)
{
    char buf[19];
    int i;
    buf[0] = '0';
    buf[1] = 'x';
    for (i = 0; i < 16; ++i)
        buf[2 + i] = "0123456789abcdef"[(unsigned)(v >> (60 - 4 * i)) & 15];
    buf[18] = 0;
    put_str(buf);
}
#endif
