/*
 * The NX register block on a host: one page mapped at the block's NX-local address, with
 * ENGINE_BASE_ADDR set, so that _init_translate_ctx can read it and refills of the initial
 * table can program the MEM_WINDOW registers. Every address comes from the header.
 * Returns the block, or 0 when the page cannot be mapped there.
 */
#ifndef NT_HOST_NX_H
#define NT_HOST_NX_H
#include <stdint.h>
#include <sys/mman.h>
#include "neuron_translate.h"

static volatile uint32_t *host_nx_map(unsigned long long engine_base)
{
    void *want = (void *)(uintptr_t)NEURON_TRANSLATE_NX_REG_BASE;
    void *p = mmap(want, NEURON_TRANSLATE_NX_REG_BLOCK_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    volatile uint32_t *regs = (volatile uint32_t *)p;
    if (p != want)
        return 0;
    regs[(NEURON_TRANSLATE_ENGINE_BASE_ADDR_LO - NEURON_TRANSLATE_NX_REG_BASE) / 4] =
        (uint32_t)engine_base;
    regs[(NEURON_TRANSLATE_ENGINE_BASE_ADDR_HI - NEURON_TRANSLATE_NX_REG_BASE) / 4] =
        (uint32_t)(engine_base >> 32);
    return regs;
}

static void host_nx_unmap(volatile uint32_t *regs)
{
    munmap((void *)(uintptr_t)regs, NEURON_TRANSLATE_NX_REG_BLOCK_SIZE);
}
#endif
