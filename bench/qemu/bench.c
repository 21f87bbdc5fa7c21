/*
 * Runs each benchmark scenario of bench_scenarios.h (written by nt-bench) once: the
 * table is set up, bench_mark() is called, then the one function under test. nt-bench
 * counts the instructions executed inside the implementation's functions between marks.
 */
#include "neuron_translate.h"
#include "support.h"
#include "bench_scenarios.h"
#include "tensor_loop.h"

void *ref_translate(void *ctx, unsigned long long addr);
int ref_mapping_lookup(void *ctx, unsigned long long addr, unsigned long long *out_start,
                       unsigned long long *out_end);

unsigned long long extended_isa_sdk_hbm_scratch = 0x4212345678ull;

static uint32_t bank[10];
static _translation_ctx_t t;
static unsigned char tensor[TENSOR_WINDOWS * TENSOR_WINDOW] __attribute__((aligned(4096)));
volatile unsigned sink;

__attribute__((noinline)) void bench_mark(void)
{
    __asm__ volatile("" ::: "memory");
}

int test_main(void)
{
    unsigned i, k;
    for (i = 0; i < NB_SCENARIOS; ++i) {
        const struct nb *s = &nb_scenarios[i];
        unsigned long long w, l;
        if (s->func >= 4) {
            tensor_table(&t, tensor, bank);
        } else {
            memcpy(&t, nb_tables[s->table], sizeof t);
            for (k = 0; k < NEURON_TRANSLATE_RECORDS; ++k)
                t.records[k].reg_location = (uint64_t)(uintptr_t)&bank[2 * t.records[k].reg_location];
        }
        bench_mark();
        switch (s->func * 2 + s->imp) {
        case 0: sink = (unsigned)(uintptr_t)neuron_translate(&t, s->addr); break;
        case 1: sink = (unsigned)(uintptr_t)ref_translate(&t, s->addr); break;
        case 2: sink = (unsigned)neuron_translate_mapping_lookup(&t, s->addr, &w, &l); break;
        case 3: sink = (unsigned)ref_mapping_lookup(&t, s->addr, &w, &l); break;
        case 4: sink = (unsigned)(uintptr_t)neuron_translate_ctx(); break;
        case 6: _init_translate_ctx(); break;
        case 8: sink = tensor_sum_per_element(&t, TENSOR_SOC, TENSOR_ELEMS); break;
        case 10: sink = tensor_sum_spans(&t, TENSOR_SOC, TENSOR_ELEMS); break;
        default: return 2;
        }
    }
    bench_mark();
    return 0;
}
