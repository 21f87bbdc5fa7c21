#include "support.h"

/* The NX register block: the linker places .nxregs at the block's NX-local address
 * (abi-tests/src/qemu.rs, link), and qemu-user maps it like any other section. */
volatile uint32_t nt_nxregs[NEURON_TRANSLATE_NX_REG_BLOCK_SIZE / 4]
    __attribute__((section(".nxregs"), aligned(4096)));

void *memcpy(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    while (n--)
        *dp++ = *sp++;
    return d;
}

void *memset(void *d, int c, size_t n)
{
    unsigned char *dp = d;
    while (n--)
        *dp++ = (unsigned char)c;
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; --n, ++x, ++y)
        if (*x != *y)
            return *x < *y ? -1 : 1;
    return 0;
}
