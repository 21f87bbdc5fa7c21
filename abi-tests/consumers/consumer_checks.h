/*
 * The checks a custom op would make, written once in the common subset of C99 and C++11,
 * run by consumer.c (as C) and consumer.cpp (as C++). Only the header is needed: every
 * name comes from neuron_translate.h. The caller maps the NX register block with
 * ENGINE_BASE_ADDR = engine_base (on the device it is always there). Returns 0, or the
 * number of the first failed check.
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

#define CONSUMER_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

static int consumer_checks(unsigned long long engine_base)
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
    /* ... which reports the SoC range of slot 3's window. */
    CHECK(8, neuron_translate_mapping_lookup(&t, 0x4000300042ull, &w, &l) == 0);
    CHECK(9, w == 0x4000300000ull && l == 0x40003fffffull);
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

    /* Init builds the table behind _ctx from ENGINE_BASE_ADDR. */
    CHECK(21, _sbuf_window == 0);
    _init_translate_ctx();
    CHECK(14, neuron_translate_ctx() != 0);
    CHECK(15, neuron_translate_ctx() == _ctx);
    CHECK(16, _ctx->next_alloc == 0);
    CHECK(17, sizeof(_translation_ctx_t) == 168 && sizeof(_map_record_t) == 32);
    CHECK(22, _sbuf_window == engine_base - (41ull << 20));
    CHECK(23, _ctx->records[0].reg_location == NEURON_TRANSLATE_MEM_WINDOW3_LO);
    /* SBUF translates through its pinned window; a new region refills slot 0 through
     * MEM_WINDOW3. */
    p = neuron_translate(_ctx, _sbuf_window + 0x40u);
    CHECK(24, (uintptr_t)p == 0x80000000u + ((uint32_t)_sbuf_window & 0x3ffffffu) + 0x40u);
    p = neuron_translate(_ctx, 0x2802012345ull);
    CHECK(25, (uintptr_t)p == 0x07012345u);
    CHECK(26, CONSUMER_REG(NEURON_TRANSLATE_MEM_WINDOW3_HI) == 0x28u);
    CHECK(27, CONSUMER_REG(NEURON_TRANSLATE_MEM_WINDOW3_LO) == 0x02000000u);
    return 0;
}

#endif
