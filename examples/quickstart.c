/* Quick start (C99): translate an HBM address through the window table.
 * Build on the host:  cc -std=c11 quickstart.c $(pkg-config --cflags --libs neuron_translate) */
#define _DEFAULT_SOURCE /* MAP_FIXED_NOREPLACE */
#include <stdio.h>
#include <sys/mman.h>
#include <neuron_translate.h>

/* On the device start_exit.o defines this; a host program defines it itself. */
unsigned long long extended_isa_sdk_hbm_scratch = 0x4100000000ull;

/* On the device the NX register block is always there. On the host, map a page at its
 * address and set ENGINE_BASE_ADDR before _init_translate_ctx reads it; refills of the
 * reusable windows then write MEM_WINDOWn into that page. */
static int map_nx_registers(unsigned long long engine_base)
{
    void *want = (void *)(uintptr_t)NEURON_TRANSLATE_NX_REG_BASE;
    volatile uint32_t *regs = mmap(want, NEURON_TRANSLATE_NX_REG_BLOCK_SIZE,
                                   PROT_READ | PROT_WRITE,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if ((void *)regs != want)
        return -1;
    regs[(NEURON_TRANSLATE_ENGINE_BASE_ADDR_LO - NEURON_TRANSLATE_NX_REG_BASE) / 4] =
        (uint32_t)engine_base;
    regs[(NEURON_TRANSLATE_ENGINE_BASE_ADDR_HI - NEURON_TRANSLATE_NX_REG_BASE) / 4] =
        (uint32_t)(engine_base >> 32);
    return 0;
}

int main(void)
{
    unsigned long long hbm = 0x4200123456ull, first, last;
    void *local;

    if (map_nx_registers(0x4002900000ull) != 0)
        return 1;
    _init_translate_ctx();
    printf("neuron_translate %s, SBUF at 0x%llx\n", NEURON_TRANSLATE_VERSION_STRING,
           (unsigned long long)_sbuf_window);

    /* A miss: window 0 is reprogrammed (MEM_WINDOW3) to the 16 MiB around hbm. */
    local = neuron_translate(neuron_translate_ctx(), hbm);
    printf("0x%llx -> local %p\n", hbm, local);
    if (neuron_translate_mapping_lookup(neuron_translate_ctx(), hbm, &first, &last) == 0)
        printf("window: 0x%llx..0x%llx\n", first, last);
    /* On the host, local is an NX-local address: print it, do not dereference it. */
    return 0;
}
