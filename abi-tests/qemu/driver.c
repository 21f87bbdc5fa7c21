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
int ref_mapping_lookup(void *ctx, unsigned long long addr, unsigned long long *out_start,
                       unsigned long long *out_end);

/* The stand-in for what start_exit.o defines and the library needs. */
unsigned long long extended_isa_sdk_hbm_scratch = NT_HBM_SCRATCH;

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

/* The device object's lookup again with each output NULL (skipped, the other one written
 * as before: contract §4) and with a NULL table (-1); the lookup only reads, so calling it
 * again changes nothing the vector checks next. */
static int lookup_null_outputs(unsigned v, unsigned i, _translation_ctx_t *t,
                               unsigned long long addr, int rc, unsigned long long w,
                               unsigned long long l)
{
    unsigned long long start = 0xAAAAu, end = 0xBBBBu;
    if (neuron_translate_mapping_lookup(t, addr, 0, &end) != rc || end != l)
        return fail(0, v, i, "lookup with out_start NULL: out_end", end, l);
    if (neuron_translate_mapping_lookup(t, addr, &start, 0) != rc || start != w)
        return fail(0, v, i, "lookup with out_end NULL: out_start", start, w);
    if (neuron_translate_mapping_lookup(0, addr, &start, &end) != -1)
        return fail(0, v, i, "lookup with a NULL table", 0, (unsigned long long)-1);
    return 0;
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
        if (rc == 0 && w != op->start)
            return fail(which, v, i, "lookup start", w, op->start);
        if (rc == 0 && l != op->end)
            return fail(which, v, i, "lookup end", l, op->end);
        if (rc != 0 && (w != 0xAAAAu || l != 0xBBBBu))
            return fail(which, v, i, "lookup miss wrote its outputs", w, 0xAAAAu);
        if (which == 0 && lookup_null_outputs(v, i, t, op->addr, rc, w, l))
            return 1;
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

static void set_engine_base(unsigned long long v)
{
    NT_NXREG(NEURON_TRANSLATE_ENGINE_BASE_ADDR_LO) = (uint32_t)v;
    NT_NXREG(NEURON_TRANSLATE_ENGINE_BASE_ADDR_HI) = (uint32_t)(v >> 32);
}

/* _init_translate_ctx against the emulated register block: the table it builds, the
 * _sbuf_window it sets, the block left as it was; then three refills of the initial table,
 * each programming its MEM_WINDOW register and nothing else in the block; then a re-init
 * with another engine base. Every expectation comes from the host library (vectors.h). */
static int check_init(void)
{
    static uint32_t want[NEURON_TRANSLATE_NX_REG_BLOCK_SIZE / 4];
    unsigned i;
    if (neuron_translate_ctx() != 0 || _ctx != 0)
        return fail(0, 0, 0, "_ctx before init", (uintptr_t)_ctx, 0);
    if (_sbuf_window != 0)
        return fail(0, 0, 0, "_sbuf_window before init", _sbuf_window, 0);
    set_engine_base(nt_engine_base[0]);
    for (i = 0; i < sizeof want / sizeof want[0]; ++i)
        want[i] = nt_nxregs[i];
    _init_translate_ctx();
    if (neuron_translate_ctx() == 0 || neuron_translate_ctx() != _ctx)
        return fail(0, 0, 0, "_ctx after init", (uintptr_t)_ctx, 0);
    if (_sbuf_window != nt_sbuf_window[0])
        return fail(0, 0, 0, "_sbuf_window", _sbuf_window, nt_sbuf_window[0]);
    if (memcmp(_ctx, nt_init_table, sizeof *_ctx) != 0)
        return fail(0, 0, 0, "initial table bytes", 0, 0);
    for (i = 0; i < NT_INIT_REFILLS; ++i) {
        void *p = neuron_translate(_ctx, nt_refill_addr[i]);
        if ((uint32_t)(uintptr_t)p != nt_refill_local[i])
            return fail(0, 0, i, "refill of the initial table", (uintptr_t)p, nt_refill_local[i]);
    }
    if (memcmp(_ctx, nt_init_refilled, sizeof *_ctx) != 0)
        return fail(0, 0, 0, "table after the refills", 0, 0);
    for (i = 0; i < NT_INIT_STORES; ++i)
        want[(nt_init_stores[i][0] - NEURON_TRANSLATE_NX_REG_BASE) / 4] = nt_init_stores[i][1];
    for (i = 0; i < sizeof want / sizeof want[0]; ++i)
        if (nt_nxregs[i] != want[i])
            return fail(0, 0, i, "register block word", nt_nxregs[i], want[i]);
    set_engine_base(nt_engine_base[1]);
    _init_translate_ctx();
    if (_sbuf_window != nt_sbuf_window[1])
        return fail(0, 0, 1, "_sbuf_window after re-init", _sbuf_window, nt_sbuf_window[1]);
    if (memcmp(_ctx, nt_init_table2, sizeof *_ctx) != 0)
        return fail(0, 0, 1, "table after re-init", 0, 0);
    put_str("qemu: init and refills through MEM_WINDOW3/5/6 agreed\n");
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
