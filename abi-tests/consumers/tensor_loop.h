/*
 * A TensorAccessor-style loop, both ways: a custom op summing a tensor of uint32_t that
 * lives at a 64-bit SoC address, reading it through the window table.
 *
 *   tensor_sum_per_element  translates every element's address (what a per-element
 *                           accessor does: one neuron_translate per element)
 *   tensor_sum_spans        translates once per window: neuron_translate_span says how
 *                           many bytes from the returned local address stay in the window
 *
 * tensor_table() builds a table whose five 4 KiB windows map SoC TENSOR_SOC.. onto a
 * buffer of the program (its address must fit 32 bits: link the host program -no-pie).
 * Shared by the host test, the qemu test and the instruction counts (nt-bench).
 */
#ifndef TENSOR_LOOP_H
#define TENSOR_LOOP_H
#include "neuron_translate.h"

#define TENSOR_SOC 0x0000004000000000ull
#define TENSOR_WINDOW 4096u
#define TENSOR_WINDOWS 5u
#define TENSOR_ELEMS (TENSOR_WINDOWS * TENSOR_WINDOW / 4u)

static void tensor_table(_translation_ctx_t *t, unsigned char *buf, uint32_t *regs)
{
    unsigned k;
    for (k = 0; k < NEURON_TRANSLATE_RECORDS; ++k) {
        t->records[k].ptr = TENSOR_SOC + (unsigned long long)k * TENSOR_WINDOW;
        t->records[k].window = (uint32_t)(uintptr_t)(buf + k * TENSOR_WINDOW);
        t->records[k]._pad = 0;
        t->records[k].mask = ~(unsigned long long)(TENSOR_WINDOW - 1);
        t->records[k].reg_location = (uint64_t)(uintptr_t)&regs[2 * k];
    }
    t->next_alloc = 0;
}

static uint32_t tensor_sum_per_element(void *ctx, unsigned long long soc, uint32_t n)
{
    uint32_t s = 0, i;
    for (i = 0; i < n; ++i)
        s += *(const uint32_t *)(uintptr_t)(uint32_t)(uintptr_t)neuron_translate(ctx, soc + 4ull * i);
    return s;
}

static uint32_t tensor_sum_spans(void *ctx, unsigned long long soc, uint32_t n)
{
    uint32_t s = 0;
    unsigned long long left = 4ull * n;
    while (left) {
        unsigned long long span = 0;
        const uint32_t *p =
            (const uint32_t *)(uintptr_t)(uint32_t)(uintptr_t)neuron_translate_span(ctx, soc, left, &span);
        /* A span stays below 2^32 bytes (it ends at the top of the local space at the
         * latest), so the element count of one span fits 32 bits. */
        uint32_t k = (uint32_t)(span / 4);
        const uint32_t *end = p + k, *end4 = p + (k & ~3u);
        if (k == 0) /* an element across a window edge: not in this layout */
            return 0xDEADu;
        /* Contiguous local memory: the loop can be unrolled, which a per-element
         * translate never allows. */
        for (; p != end4; p += 4)
            s += p[0] + p[1] + p[2] + p[3];
        for (; p != end; ++p)
            s += *p;
        soc += 4ull * k;
        left -= 4ull * k;
    }
    return s;
}
#endif
