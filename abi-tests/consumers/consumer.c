/* A C custom op against neuron_translate.h (C99 and later). */
#define _DEFAULT_SOURCE /* MAP_FIXED_NOREPLACE, for the host's register block */
#include "consumer_checks.h"

/* The stand-in for what start_exit.o defines and the library needs. */
unsigned long long extended_isa_sdk_hbm_scratch;

#define ENGINE_BASE 0x4001000000ull

#if defined(__xtensa__)
int main(void)
{
    return consumer_checks(ENGINE_BASE);
}
#else
#include "host_nx.h"
int main(void)
{
    volatile uint32_t *regs = host_nx_map(ENGINE_BASE);
    int rc;
    if (!regs)
        return 100;
    rc = consumer_checks(ENGINE_BASE);
    host_nx_unmap(regs);
    return rc;
}
#endif
