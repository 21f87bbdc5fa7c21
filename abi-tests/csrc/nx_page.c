/*
 * The shared NX register page helper (consumers/host_nx.h), compiled for the Rust test
 * support (support/src/nx.rs) so that the C and the Rust tests map the page one way.
 */
#define _DEFAULT_SOURCE /* MAP_FIXED_NOREPLACE */
#include "../consumers/host_nx.h"

volatile uint32_t *nt_support_nx_map(unsigned long long engine_base)
{
    return host_nx_map(engine_base);
}

void nt_support_nx_unmap(volatile uint32_t *regs)
{
    host_nx_unmap(regs);
}
