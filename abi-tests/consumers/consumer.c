/* A C custom op against neuron_translate.h (C99 and later). */
#include "consumer_checks.h"

/* Stand-ins for what start_exit.o defines. */
unsigned char data_scratch_map[4096];
unsigned long long hbm_scratch __asm__("_ZN12extended_isa3sdk11hbm_scratchE");

int main(void)
{
    return consumer_checks();
}
