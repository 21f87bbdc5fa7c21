//! `_ctx`, `_sbuf_window`, `neuron_translate_ctx` and `_init_translate_ctx` against the NX
//! register block mapped where the device has it (docs/contract.md §3, §5). A test binary
//! of its own: "NULL before init" can only be seen in a process where nothing has called
//! init yet, the globals are shared by every test of a binary, and the block is one fixed
//! address.

use neuron_translate::abi::{
    _init_translate_ctx, neuron_translate, neuron_translate_ctx, CTX, SBUF_WINDOW,
};
use neuron_translate::regs::{MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6};
use neuron_translate::{initial_table, sbuf_window, InitInputs, TranslationCtx};
use nt_support::nx::{stores_of, RegisterPage, WORDS};
use nt_support::start_exit::set_hbm_scratch;
use nt_support::GLOBAL_LOCK;

fn ctx_symbol() -> *mut TranslationCtx {
    // SAFETY: a plain read of the exported pointer.
    unsafe { core::ptr::addr_of!(CTX).read() }
}

fn sbuf_symbol() -> u64 {
    // SAFETY: a plain read of the exported u64.
    unsafe { core::ptr::addr_of!(SBUF_WINDOW).read() }
}

/// An engine base 41 MiB above a 4 GiB boundary's neighbourhood, so `_sbuf_window`'s
/// borrow reaches the high word.
const ENGINE_BASE: u64 = 0x0028_0100_0000;
const HBM_SCRATCH: u64 = 0x0042_1234_5678;

#[test]
fn init_reads_the_register_block_builds_the_table_and_refills_program_mem_windows() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let page = RegisterPage::map();
    let (ctx, block_before) = first_init(&page);
    refills(&page, ctx, &block_before);
    reinit(&page, ctx);
}

/// The first init: it only reads the block, builds the documented table, and the pinned
/// windows translate; returns the table and the block as init left it.
fn first_init(page: &RegisterPage) -> (*mut TranslationCtx, Vec<u32>) {
    // Before init: no table, no SBUF address.
    assert!(neuron_translate_ctx().is_null(), "NULL before init");
    assert!(ctx_symbol().is_null());
    assert_eq!(sbuf_symbol(), 0);

    page.set_engine_base(ENGINE_BASE);
    set_hbm_scratch(HBM_SCRATCH);
    let block_before = page.snapshot();
    _init_translate_ctx();
    assert_eq!(page.snapshot(), block_before, "init only reads the block");
    let ctx = neuron_translate_ctx();
    assert!(!ctx.is_null());
    assert_eq!(ctx, ctx_symbol(), "neuron_translate_ctx() returns _ctx");
    assert_eq!(ctx as usize % 8, 0, "the table is 8-aligned");
    assert_eq!(sbuf_symbol(), 0x0027_FE70_0000, "ENGINE_BASE_ADDR - 41 MiB");
    let inputs = InitInputs {
        engine_base: ENGINE_BASE,
        hbm_scratch: HBM_SCRATCH,
    };
    assert_eq!(sbuf_symbol(), sbuf_window(ENGINE_BASE));
    // SAFETY: _ctx points at the library's table.
    let table = unsafe { ctx.read() };
    assert_eq!(
        table,
        initial_table(&inputs),
        "init builds the documented table"
    );
    for (k, reg) in [MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6].iter().enumerate() {
        assert_eq!(
            table.records[k].reg_location,
            u64::from(reg.lo()),
            "slot {k}"
        );
    }
    assert_eq!(
        (table.records[3].reg_location, table.records[4].reg_location),
        (0, 0)
    );

    // The pinned windows translate without touching the block.
    // SAFETY: hits need no register.
    unsafe {
        let p = neuron_translate(ctx.cast(), sbuf_symbol() + 0x40);
        assert_eq!(p as usize, 0x8000_0000 + 0x270_0040, "SBUF");
        let p = neuron_translate(ctx.cast(), HBM_SCRATCH);
        assert_eq!(p as usize, 0x8400_0000 + 0x234_5678, "HBM scratch");
    }
    (ctx, block_before)
}

/// Three misses: the stores to the block in order, and the table after them.
fn refills(page: &RegisterPage, ctx: *mut TranslationCtx, block_before: &[u32]) {
    // Three misses in three new 16 MiB regions take slots 0, 1, 2: each stores the tag's
    // high word to MEM_WINDOWn_HI, then its low word to MEM_WINDOWn_LO, and nothing else in
    // the block. The stores are logged in order, each as it happens.
    let regions = [0x0033_0200_0000u64, 0x0033_0500_0000, 0x0034_0700_0000];
    let locals = [0x0700_0000usize, 0x0900_0000, 0x0A00_0000];
    let stores = stores_of(page, || {
        for (a, want) in regions.iter().zip(locals) {
            // SAFETY: the victims' registers are the mapped block.
            let p = unsafe { neuron_translate(ctx.cast(), a + 0x1234) };
            assert_eq!(p as usize, want + 0x1234);
        }
    });
    let mut want = Vec::new();
    for (reg, a) in [MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6].iter().zip(regions) {
        want.push((reg.offset + 4, (a >> 32) as u32));
        want.push((reg.offset, a as u32));
    }
    assert_eq!(stores, want, "stores to the register block, in order");
    // The child's stores landed in the shared page: exactly those six words changed.
    let after = page.snapshot();
    for i in 0..WORDS {
        let off = 4 * i as u32;
        match want.iter().find(|(o, _)| *o == off) {
            Some(&(_, v)) => assert_eq!(after[i], v, "word {off:#x}"),
            None => assert_eq!(after[i], block_before[i], "word {off:#x} untouched"),
        }
    }

    // The same refills in this process leave the table as the contract says.
    for a in regions {
        // SAFETY: as above.
        unsafe { neuron_translate(ctx.cast(), a + 0x1234) };
    }
    // SAFETY: as above.
    let refilled = unsafe { ctx.read() };
    for (k, (r, a)) in refilled.records.iter().zip(regions).enumerate() {
        assert_eq!(r.ptr, a, "slot {k}'s tag");
    }
    assert_eq!(
        refilled.next_alloc, 0,
        "three refills: the cursor went round"
    );
}

/// Init again with another engine base.
fn reinit(page: &RegisterPage, ctx: *mut TranslationCtx) {
    // Init again with another engine base: the block is re-read and the table reset in
    // place.
    let engine2 = 0x0050_0000_0000u64;
    page.set_engine_base(engine2);
    _init_translate_ctx();
    assert_eq!(neuron_translate_ctx(), ctx, "same storage");
    assert_eq!(sbuf_symbol(), engine2 - (41 << 20));
    let inputs2 = InitInputs {
        engine_base: engine2,
        hbm_scratch: HBM_SCRATCH,
    };
    assert_eq!(
        // SAFETY: as above.
        unsafe { ctx.read() },
        initial_table(&inputs2),
        "init resets the table"
    );
}
