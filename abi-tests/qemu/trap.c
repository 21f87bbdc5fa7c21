/* A refill whose victim has a null register must trap (contract §4), not store. */
#include "neuron_translate.h"
#include "support.h"

unsigned long long extended_isa_sdk_hbm_scratch;
static _translation_ctx_t t;

int test_main(void)
{
    unsigned k;
    for (k = 0; k < NEURON_TRANSLATE_RECORDS; ++k) {
        t.records[k].mask = ~0xFFFull;
        t.records[k].ptr = 1; /* a bit outside the mask: matches nothing */
        t.records[k].reg_location = 0;
    }
    put_str("before\n");
    neuron_translate(&t, 0x1234);
    put_str("returned\n");
    return 3;
}
