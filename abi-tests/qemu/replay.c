/*
 * Replays one counterexample of the validator (prove/validate.py) on the device: the
 * vector (replay.h, written by abi-tests/tests/prove_replay.rs from the validator's JSON)
 * gives the function, its arguments and the bytes of the memory area the table, the
 * register locations and the outputs live in (linked at the address the validator chose).
 * Prints what the call returned and the area afterwards (init: the table and _sbuf_window).
 */
#include "neuron_translate.h"
#include "support.h"
#include "replay.h"

unsigned long long extended_isa_sdk_hbm_scratch = NT_REPLAY_HBM_SCRATCH;

unsigned char nt_area[sizeof nt_area_init] __attribute__((section(".replay"), aligned(8)));

static void put_bytes(const unsigned char *p, unsigned n)
{
    unsigned i;
    for (i = 0; i < n; ++i)
        put_hex(p[i]);
    put_str("\n");
}

int test_main(void)
{
    memcpy(nt_area, nt_area_init, sizeof nt_area);
    if (NT_REPLAY_FUNCTION == 2) {
        NT_NXREG(NEURON_TRANSLATE_ENGINE_BASE_ADDR_LO) = (uint32_t)NT_REPLAY_ENGINE_BASE;
        NT_NXREG(NEURON_TRANSLATE_ENGINE_BASE_ADDR_HI) = (uint32_t)(NT_REPLAY_ENGINE_BASE >> 32);
        _init_translate_ctx();
        put_str("ret ");
        put_hex(_sbuf_window);
        put_str("\narea ");
        put_bytes((const unsigned char *)_ctx, sizeof *_ctx);
        return 0;
    }
    put_str("ret ");
    if (NT_REPLAY_FUNCTION == 0)
        put_hex((uintptr_t)neuron_translate(nt_area, NT_REPLAY_ADDR));
    else if (NT_REPLAY_FUNCTION == 3)
        put_hex((uintptr_t)neuron_translate_span(nt_area, NT_REPLAY_ADDR, NT_REPLAY_LEN,
                                                 (unsigned long long *)NT_REPLAY_OUT_SPAN));
    else
        put_hex((unsigned)neuron_translate_mapping_lookup(nt_area, NT_REPLAY_ADDR,
                                                          (unsigned long long *)NT_REPLAY_OUT_START,
                                                          (unsigned long long *)NT_REPLAY_OUT_END));
    put_str("\narea ");
    put_bytes(nt_area, sizeof nt_area);
    return 0;
}
