/*
 * Replays a trace (trace.h, written by the host test from the same events it runs through
 * the host model) on the device: ENGINE_BASE_ADDR in the emulated register block, the
 * unmodified _init_translate_ctx, then every call through the unmodified device object.
 * Prints, per call, the local address, the span (0 for neuron_translate) and the six words
 * of MEM_WINDOW3/5/6 (lo, hi each) after it; then the final table's bytes.
 */
#include "neuron_translate.h"
#include "support.h"
#include "trace.h"

unsigned long long extended_isa_sdk_hbm_scratch = NT_TRACE_HBM_SCRATCH;

static const unsigned nt_windows[6] = {
    NEURON_TRANSLATE_MEM_WINDOW3_LO, NEURON_TRANSLATE_MEM_WINDOW3_HI,
    NEURON_TRANSLATE_MEM_WINDOW5_LO, NEURON_TRANSLATE_MEM_WINDOW5_HI,
    NEURON_TRANSLATE_MEM_WINDOW6_LO, NEURON_TRANSLATE_MEM_WINDOW6_HI,
};

int test_main(void)
{
    unsigned i, k;
    const unsigned char *bytes;
    NT_NXREG(NEURON_TRANSLATE_ENGINE_BASE_ADDR_LO) = (uint32_t)NT_TRACE_ENGINE_BASE;
    NT_NXREG(NEURON_TRANSLATE_ENGINE_BASE_ADDR_HI) = (uint32_t)(NT_TRACE_ENGINE_BASE >> 32);
    _init_translate_ctx();
    for (i = 0; i < NT_TRACE_EVENTS; ++i) {
        unsigned long long span = 0;
        void *p;
        if (nt_trace[i].is_span)
            p = neuron_translate_span(neuron_translate_ctx(), nt_trace[i].addr, nt_trace[i].len, &span);
        else
            p = neuron_translate(neuron_translate_ctx(), nt_trace[i].addr);
        put_str("call ");
        put_hex((uintptr_t)p);
        put_str(" ");
        put_hex(span);
        for (k = 0; k < 6; ++k) {
            put_str(" ");
            put_hex(NT_NXREG(nt_windows[k]));
        }
        put_str("\n");
    }
    put_str("table ");
    bytes = (const unsigned char *)neuron_translate_ctx();
    for (i = 0; i < sizeof(_translation_ctx_t); ++i)
        put_hex(bytes[i]);
    put_str("\n");
    return 0;
}
