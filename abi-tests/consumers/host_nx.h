/*
 * The NX register block on a host: one page mapped at the block's NX-local address, with
 * ENGINE_BASE_ADDR set, so that _init_translate_ctx can read it and refills of the initial
 * table can program the MEM_WINDOW registers. Every address comes from the header.
 * Returns the block, or 0 when the page cannot be mapped there.
 *
 * The one helper the tests share: the C consumers include it, and the Rust test support
 * (abi-tests/support/src/nx.rs) calls it through abi-tests/csrc/nx_page.c. The page is
 * shared, so that a forked child's stores are visible to its parent.
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
                   MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    volatile uint32_t *regs = (volatile uint32_t *)p;
    if (p != want) {
        /* An old kernel that ignores MAP_FIXED_NOREPLACE maps elsewhere: undo it. */
        if (p != MAP_FAILED)
            munmap(p, NEURON_TRANSLATE_NX_REG_BLOCK_SIZE);
        return 0;
    }
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
