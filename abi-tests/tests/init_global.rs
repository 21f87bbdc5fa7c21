//! `_ctx`, `neuron_translate_ctx` and `_init_translate_ctx` (contract §3). A test binary
//! of its own: "NULL before init" can only be seen in a process where nothing has called
//! init yet, and the globals are shared by every test of a binary.

use abi_tests::start_exit::{data_scratch_map_addr, set_hbm_scratch};
use abi_tests::GLOBAL_LOCK;
use neuron_translate::abi::{_init_translate_ctx, neuron_translate, neuron_translate_ctx, CTX};
use neuron_translate::{initial_table, InitInputs, TranslationCtx};

fn read_ctx_symbol() -> *mut TranslationCtx {
    // SAFETY: a plain read of the exported pointer.
    unsafe { core::ptr::addr_of!(CTX).read() }
}

#[test]
fn ctx_is_null_before_init_then_points_at_a_reset_table() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    assert!(
        neuron_translate_ctx().is_null(),
        "NULL before _init_translate_ctx"
    );
    assert!(read_ctx_symbol().is_null());

    set_hbm_scratch(0x0000_0042_1234_5678);
    _init_translate_ctx();
    let ctx = neuron_translate_ctx();
    assert!(!ctx.is_null());
    assert_eq!(
        ctx,
        read_ctx_symbol(),
        "neuron_translate_ctx() returns _ctx"
    );
    assert_eq!(ctx as usize % 8, 0, "the table is 8-aligned");
    let inputs = InitInputs {
        data_scratch_map: data_scratch_map_addr(),
        hbm_scratch: 0x0000_0042_1234_5678,
    };
    // SAFETY: _ctx points at the library's table.
    assert_eq!(
        unsafe { ctx.read() },
        initial_table(&inputs),
        "init builds the documented table"
    );

    // The HBM scratch address translates through the table init built.
    // SAFETY: a hit needs no register.
    let p = unsafe { neuron_translate(ctx.cast(), 0x0000_0042_1234_5678) };
    assert_eq!(p as usize as u32, 0x0300_0000 + 0x34_5678);

    // Dirty the table, change an input, and init again: the table is rebuilt in place.
    // SAFETY: single-threaded under the lock; nothing else holds the table.
    unsafe {
        (*ctx).records[1].ptr = 0xDEAD;
        (*ctx).next_alloc = 2;
    }
    set_hbm_scratch(0x0000_0077_0000_0000);
    _init_translate_ctx();
    assert_eq!(neuron_translate_ctx(), ctx, "same storage");
    let inputs = InitInputs {
        hbm_scratch: 0x0000_0077_0000_0000,
        ..inputs
    };
    // SAFETY: as above.
    assert_eq!(
        unsafe { ctx.read() },
        initial_table(&inputs),
        "init resets the table"
    );
}
