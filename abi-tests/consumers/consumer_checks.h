/*
 * The checks a custom op would make, written once in the common subset of C99 and C++11,
 * run by consumer.c (as C) and consumer.cpp (as C++). Only the header is needed: every
 * name comes from neuron_translate.h. Returns 0, or the number of the first failed check.
 */
#ifndef CONSUMER_CHECKS_H
#define CONSUMER_CHECKS_H

#include "neuron_translate.h"

#define CHECK(n, cond) do { if (!(cond)) return (n); } while (0)

static uint32_t consumer_regs[2 * NEURON_TRANSLATE_RECORDS];

static void consumer_table(_translation_ctx_t *t)
{
    unsigned k;
    unsigned char *bytes = (unsigned char *)t;
    for (k = 0; k < sizeof *t; ++k)
        bytes[k] = 0;
    for (k = 0; k < NEURON_TRANSLATE_RECORDS; ++k) {
        t->records[k].ptr = 0x4000000000ull + ((unsigned long long)k << 20);
        t->records[k].window = 0x100000u * (k + 1);
        t->records[k].mask = ~0xFFFFFull;
        t->records[k].reg_location = (uint64_t)(uintptr_t)&consumer_regs[2 * k];
    }
}

static int consumer_checks(void)
{
    _translation_ctx_t t;
    unsigned long long w = 0, l = 0;
    void *p;

    /* Before init: no table. */
    CHECK(1, neuron_translate_ctx() == 0);
    CHECK(2, _ctx == 0);

    consumer_table(&t);
    /* A hit in slot 2. */
    p = neuron_translate(&t, 0x4000200123ull);
    CHECK(3, (uintptr_t)p == 0x300123u);
    /* A miss refills slot next_alloc = 0 and programs its register: hi word at +4. */
    p = neuron_translate(&t, 0x7700abcdefull);
    CHECK(4, (uintptr_t)p == 0x100000u + 0xbcdefu);
    CHECK(5, t.records[0].ptr == 0x7700a00000ull);
    CHECK(6, consumer_regs[0] == 0x00a00000u && consumer_regs[1] == 0x77u);
    CHECK(7, t.next_alloc == 1);
    /* Lookup: hit, miss, NULL ctx, NULL outputs. */
    CHECK(8, neuron_translate_mapping_lookup(&t, 0x4000300042ull, &w, &l) == 0);
    CHECK(9, w == 0x400000u && l == 0x400042u);
    CHECK(10, neuron_translate_mapping_lookup(&t, 0x123ull, &w, &l) == -1);
    CHECK(11, neuron_translate_mapping_lookup(0, 0x4000300042ull, &w, &l) == -1);
    CHECK(12, neuron_translate_mapping_lookup(&t, 0x4000300042ull, 0, 0) == 0);
    CHECK(13, neuron_translate(0, 0x4000300042ull) == 0);
    /* The span: from 0x42 into slot 3's 1 MiB window, the rest of the window, capped by len. */
    {
        unsigned long long span = 7;
        p = neuron_translate_span(&t, 0x4000300042ull, 1ull << 30, &span);
        CHECK(18, (uintptr_t)p == 0x400042u && span == 0x100000u - 0x42u);
        p = neuron_translate_span(&t, 0x4000300042ull, 16, &span);
        CHECK(19, span == 16);
        CHECK(20, neuron_translate_span(0, 0x4000300042ull, 16, &span) == 0 && span == 0);
    }

    /* Init builds the table behind _ctx. */
    _init_translate_ctx();
    CHECK(14, neuron_translate_ctx() != 0);
    CHECK(15, neuron_translate_ctx() == _ctx);
    CHECK(16, _ctx->next_alloc == 0);
    CHECK(17, sizeof(_translation_ctx_t) == 168 && sizeof(_map_record_t) == 32);
    return 0;
}

#endif
