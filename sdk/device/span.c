/*
 * The span of a translation object that lacks neuron_translate_span (the original's, which
 * has the contract's functions only): ntx links nt_span_by_lookup in its place (--defsym
 * neuron_translate_span=nt_span_by_lookup). It calls neuron_translate, then reads the span
 * off the table as the library computes it (src/translate.rs's span_at: the record's run,
 * the local space's top, cut before any address an earlier record matches). Its
 * instructions count as the runtime's, not the translation's.
 */
#include <stdint.h>

#include "neuron_translate.h"

void *__real__Z16neuron_translatePvy(void *ctx, unsigned long long addr);

static int nt_rec_empty(const _map_record_t *r) { return (r->ptr & ~r->mask) != 0; }

/* The least address at or after x that record r matches; 0 with *none set if there is none. */
static unsigned long long nt_next_member(const _map_record_t *r, unsigned long long x, int *none)
{
    unsigned long long p = r->ptr, m = r->mask, differ, upto, top, raisable, bit, below;
    *none = 0;
    if (nt_rec_empty(r)) {
        *none = 1;
        return 0;
    }
    differ = (x & m) ^ p;
    if (differ == 0)
        return x;
    upto = differ;
    upto |= upto >> 1;
    upto |= upto >> 2;
    upto |= upto >> 4;
    upto |= upto >> 8;
    upto |= upto >> 16;
    upto |= upto >> 32;
    top = upto ^ (upto >> 1);
    if (p & top)
        return (x & ~upto) | (p & upto);
    raisable = ~m & ~x & ~upto;
    if (raisable == 0) {
        *none = 1;
        return 0;
    }
    bit = raisable & (0 - raisable);
    below = bit - 1;
    return (x & ~(bit | below)) | bit | (p & below);
}

void *nt_span_by_lookup(void *ctx, unsigned long long addr, unsigned long long len, unsigned long long *out_span);

void *nt_span_by_lookup(void *ctx, unsigned long long addr, unsigned long long len, unsigned long long *out_span)
{
    void *p = __real__Z16neuron_translatePvy(ctx, addr);
    unsigned long long span = 0;
    const _translation_ctx_t *t = (const _translation_ctx_t *)ctx;
    for (int k = 0; t && k < NEURON_TRANSLATE_RECORDS; k++) {
        const _map_record_t *r = &t->records[k];
        if ((addr & r->mask) != r->ptr)
            continue;
        unsigned long long block = (r->mask - 1) & ~r->mask;
        unsigned long long run = block - (addr & block);
        run = run == ~0ull ? run : run + 1;
        uint32_t local = r->window + ((uint32_t)addr - (uint32_t)r->ptr);
        unsigned long long room = (1ull << 32) - local;
        span = len < run ? len : run;
        span = span < room ? span : room;
        for (int j = 0; j < k; j++) {
            int none;
            unsigned long long a = nt_next_member(&t->records[j], addr, &none);
            if (!none && a - addr < span)
                span = a - addr;
        }
        break;
    }
    if (out_span)
        *out_span = span;
    return p;
}
