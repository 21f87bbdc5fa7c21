/*
 * Replays the standard vectors (vectors.h, written by the host from the same generator the
 * host differential test uses) on the device: through the unmodified device object, and,
 * for the vectors without the library's deliberate deviations, through the seed's reference
 * C compiled for the device. Every result, every register store, the cursor after every
 * call and the final table are checked against what the host library computed.
 * Prints a summary line; a mismatch prints the implementation, vector and call index.
 */
#include "neuron_translate.h"
#include "support.h"
#include "vectors.h"

void *ref_translate(void *ctx, unsigned long long addr);
int ref_mapping_lookup(void *ctx, unsigned long long addr, unsigned long long *out_window,
                       unsigned long long *out_local);

/* Stand-ins for start_exit.o. */
unsigned char data_scratch_map[4096] __attribute__((aligned(4096)));
unsigned long long hbm_scratch __asm__("_ZN12extended_isa3sdk11hbm_scratchE") = 0x0000004212345678ull;

static uint32_t bank[2][2 * NT_RECORDS];
static _translation_ctx_t table[2];
static const char *const impl_name[2] = {"device object", "reference C"};

static void load(unsigned v, int which)
{
    unsigned k;
    memcpy(&table[which], nt_tables[v], sizeof table[which]);
    for (k = 0; k < NT_RECORDS; ++k)
        table[which].records[k].reg_location =
            (uint64_t)(uintptr_t)&bank[which][2 * table[which].records[k].reg_location];
    memset(bank[which], 0, sizeof bank[which]);
}

static int fail(int which, unsigned v, unsigned i, const char *what, unsigned long long got,
                unsigned long long want)
{
    put_str("MISMATCH ");
    put_str(impl_name[which]);
    put_str(" vector ");
    put_dec(v);
    put_str(" op ");
    put_dec(i);
    put_str(": ");
    put_str(what);
    put_str(" got ");
    put_hex(got);
    put_str(" want ");
    put_hex(want);
    put_str("\n");
    return 1;
}

static int run_op(int which, unsigned v, unsigned i, const struct nt_op *op)
{
    uint32_t before[2 * NT_RECORDS];
    _translation_ctx_t *t = &table[which];
    unsigned k;
    memcpy(before, bank[which], sizeof before);
    if (op->kind == 0) {
        void *r = which == 0 ? neuron_translate(t, op->addr) : ref_translate(t, op->addr);
        if ((uint32_t)(uintptr_t)r != (uint32_t)op->result)
            return fail(which, v, i, "translate", (uintptr_t)r, (unsigned long long)op->result);
    } else {
        unsigned long long w = 0xAAAAu, l = 0xBBBBu;
        int rc = which == 0 ? neuron_translate_mapping_lookup(t, op->addr, &w, &l)
                            : ref_mapping_lookup(t, op->addr, &w, &l);
        if (rc != (int)op->result)
            return fail(which, v, i, "lookup status", (unsigned)rc, (unsigned long long)op->result);
        if (rc == 0 && (w != op->window || l != op->local))
            return fail(which, v, i, "lookup outputs", w ^ l, op->window ^ op->local);
        if (rc != 0 && (w != 0xAAAAu || l != 0xBBBBu))
            return fail(which, v, i, "lookup miss wrote its outputs", w, 0xAAAAu);
    }
    if (t->next_alloc != op->next_alloc)
        return fail(which, v, i, "next_alloc", t->next_alloc, op->next_alloc);
    for (k = 0; k < NT_RECORDS; ++k) {
        uint32_t lo = before[2 * k], hi = before[2 * k + 1];
        if ((int)k == op->block) {
            lo = op->lo;
            hi = op->hi;
        }
        if (bank[which][2 * k] != lo || bank[which][2 * k + 1] != hi)
            return fail(which, v, i, "register block", ((unsigned long long)bank[which][2 * k + 1] << 32) | bank[which][2 * k],
                        ((unsigned long long)hi << 32) | lo);
    }
    return 0;
}

static int check_final(int which, unsigned v)
{
    _translation_ctx_t t = table[which];
    unsigned k;
    for (k = 0; k < NT_RECORDS; ++k)
        t.records[k].reg_location = (t.records[k].reg_location - (uint64_t)(uintptr_t)&bank[which][0]) / 8;
    if (memcmp(&t, nt_finals[v], sizeof t) != 0)
        return fail(which, v, nt_vectors[v].ops, "final table bytes", 0, 0);
    return 0;
}

static int check_init(void)
{
    void *p;
    if (neuron_translate_ctx() != 0 || _ctx != 0)
        return fail(0, 0, 0, "_ctx before init", (uintptr_t)_ctx, 0);
    _init_translate_ctx();
    if (neuron_translate_ctx() == 0 || neuron_translate_ctx() != _ctx)
        return fail(0, 0, 0, "_ctx after init", (uintptr_t)_ctx, 0);
    if (_ctx->next_alloc != 0)
        return fail(0, 0, 0, "next_alloc after init", _ctx->next_alloc, 0);
    /* The HBM scratch region translates through the pinned window init built. */
    p = neuron_translate(_ctx, hbm_scratch + 0x10);
    if ((uintptr_t)p != 0x03000000u + ((uint32_t)hbm_scratch & 0xFFFFFFu) + 0x10)
        return fail(0, 0, 0, "translate(hbm_scratch)", (uintptr_t)p, 0);
    return 0;
}

int test_main(void)
{
    unsigned v, i, failures = 0, ops[2] = {0, 0};
    failures += check_init();
    for (v = 0; v < NT_VECTORS && failures < 10; ++v) {
        int which;
        for (which = 0; which < 2; ++which) {
            if (which == 1 && !nt_vectors[v].check_reference)
                continue;
            load(v, which);
            for (i = 0; i < nt_vectors[v].ops; ++i) {
                if (run_op(which, v, i, &nt_ops[nt_vectors[v].first_op + i])) {
                    ++failures;
                    break;
                }
                ++ops[which];
            }
            if (i == nt_vectors[v].ops)
                failures += check_final(which, v);
        }
    }
    put_str("qemu: ");
    put_dec(NT_VECTORS);
    put_str(" vectors; device object agreed on ");
    put_dec(ops[0]);
    put_str(" calls, reference C on ");
    put_dec(ops[1]);
    put_str(" calls; failures ");
    put_dec(failures);
    put_str("\n");
    return failures ? 1 : 0;
}
