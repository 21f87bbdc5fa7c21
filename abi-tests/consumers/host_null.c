/* The host model's C API given NULL where it takes a pointer: each call fails with -1 and a
 * reason (or, for a copy of 0 bytes, succeeds and copies nothing), nothing is allocated
 * or written on the way, and the model goes on working. Exits with the number of the
 * first check that fails, 0 when all pass (abi-tests/tests/consumers.rs, under valgrind). */
#include <stddef.h>
#include <string.h>

#include "neuron_translate.h"

unsigned long long extended_isa_sdk_hbm_scratch;

static const unsigned long long engine_base = 0x5002900000ull;
static const unsigned long long hbm_base = 0x4000000000ull;
static const unsigned long long hbm_size = 1ull << 30;

static int says(const char *what)
{
    const char *why = neuron_translate_host_last_error();
    return why != NULL && strcmp(why, what) == 0;
}

int main(void)
{
    unsigned long long first = 0, next = 0;
    unsigned int word = 0x5555AAAAu, back = 0;
    neuron_translate_host_counters_t c;

    /* Without a model: the NULL checks come first, the model's absence after. */
    if (neuron_translate_host_alloc(64, 64, NULL) != -1 || !says("out_soc is NULL"))
        return 1;
    if (neuron_translate_host_read(0, NULL, 0) != -1 || !says("no host model is running"))
        return 2;

    extended_isa_sdk_hbm_scratch = hbm_base + hbm_size - (64u << 20);
    if (neuron_translate_host_start(engine_base, hbm_base, hbm_size, extended_isa_sdk_hbm_scratch) != 0)
        return 3;
    /* A NULL out_soc allocates nothing: the next allocation gets the first address. */
    if (neuron_translate_host_alloc(64, 64, NULL) != -1 || !says("out_soc is NULL"))
        return 4;
    if (neuron_translate_host_alloc(64, 64, &first) != 0 || first != hbm_base)
        return 5;
    if (neuron_translate_host_write(first, NULL, 4) != -1 || !says("src is NULL"))
        return 6;
    if (neuron_translate_host_read(first, NULL, 4) != -1 || !says("dst is NULL"))
        return 7;
    /* (NULL, 0) copies nothing and succeeds, even at an address no region backs. */
    if (neuron_translate_host_write(0x10, NULL, 0) != 0 || neuron_translate_host_read(0x10, NULL, 0) != 0)
        return 8;
    if (neuron_translate_host_counters(NULL) != -1 || !says("out is NULL"))
        return 9;
    /* Nothing was written by the failed calls; the model still works. */
    if (neuron_translate_host_read(first, &back, sizeof back) != 0 || back != 0)
        return 10;
    if (neuron_translate_host_write(first, &word, sizeof word) != 0 ||
        neuron_translate_host_read(first, &back, sizeof back) != 0 || back != word)
        return 11;
    if (neuron_translate_host_alloc(64, 64, &next) != 0 || next != first + 64)
        return 12;
    if (neuron_translate_host_counters(&c) != 0 || c.translates != 0)
        return 13;
    if (neuron_translate_host_stop() != 0)
        return 14;
    return 0;
}
