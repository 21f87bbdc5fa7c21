//! The exported C symbols against contract §3 and §4: NULL handling, the trap on a bad
//! register, the order of the register stores, lookup's lack of side effects.

use core::ffi::c_void;
use core::ptr::null_mut;

use neuron_translate::abi::{
    neuron_translate, neuron_translate_mapping_lookup, neuron_translate_span,
};
use neuron_translate::layout::REUSABLE_SLOTS;
use neuron_translate::TranslationCtx;
use nt_support::gen::disjoint_table;
use nt_support::guard::{page, GuardedPages};
use nt_support::in_child;

fn as_ctx(t: &mut TranslationCtx) -> *mut c_void {
    (t as *mut TranslationCtx).cast()
}

#[test]
fn null_ctx_translate_returns_null_and_lookup_returns_minus_one() {
    let (mut w, mut l) = (7u64, 9u64);
    // SAFETY: NULL is allowed; outputs valid.
    unsafe {
        assert!(neuron_translate(null_mut(), 0x1234).is_null());
        assert_eq!(
            neuron_translate_mapping_lookup(null_mut(), 0x1234, &mut w, &mut l),
            -1
        );
    }
    assert_eq!((w, l), (7, 9), "outputs untouched");
}

#[test]
fn lookup_hit_writes_the_windows_soc_range_and_returns_0() {
    let mut t = disjoint_table([0; 5]);
    let (mut start, mut end) = (0u64, 0u64);
    // SAFETY: valid table and outputs.
    let rc = unsafe {
        neuron_translate_mapping_lookup(as_ctx(&mut t), 0x40_0020_0042, &mut start, &mut end)
    };
    assert_eq!((rc, start, end), (0, 0x40_0020_0000, 0x40_002F_FFFF));
}

#[test]
fn lookup_skips_null_outputs() {
    let mut t = disjoint_table([0; 5]);
    let before = t;
    let mut w = 0u64;
    let mut l = 0u64;
    // SAFETY: valid table; NULL outputs are allowed.
    unsafe {
        assert_eq!(
            neuron_translate_mapping_lookup(as_ctx(&mut t), 0x40_0000_0005, null_mut(), null_mut()),
            0
        );
        assert_eq!(
            neuron_translate_mapping_lookup(as_ctx(&mut t), 0x40_0000_0005, &mut w, null_mut()),
            0
        );
        assert_eq!(w, 0x40_0000_0000, "start alone");
        assert_eq!(
            neuron_translate_mapping_lookup(as_ctx(&mut t), 0x40_0000_0005, null_mut(), &mut l),
            0
        );
        assert_eq!(l, 0x40_000F_FFFF, "end alone");
    }
    assert_eq!(t, before);
}

#[test]
fn lookup_miss_returns_minus_one_touches_nothing_and_never_refills() {
    let mut regs = [0u32; 10];
    let base = regs.as_mut_ptr() as u64;
    let mut t = disjoint_table([base, base + 8, base + 16, base + 24, base + 32]);
    let before = t;
    let (mut w, mut l) = (0xAAu64, 0xBBu64);
    for a in [0u64, 0x41_0000_0000, 0x40_0050_0000, u64::MAX] {
        // SAFETY: valid table and outputs.
        let rc = unsafe { neuron_translate_mapping_lookup(as_ctx(&mut t), a, &mut w, &mut l) };
        assert_eq!(rc, -1, "{a:#x}");
    }
    assert_eq!((w, l), (0xAA, 0xBB));
    assert_eq!(t, before);
    assert_eq!(regs, [0; 10]);
}

#[test]
fn translate_hit_returns_the_local_address_as_a_pointer() {
    let mut t = disjoint_table([0; 5]);
    // SAFETY: valid table; a hit needs no register.
    let p = unsafe { neuron_translate(as_ctx(&mut t), 0x40_0040_1234) };
    assert_eq!(p as usize, 0x50_1234);
}

#[test]
fn refill_stores_hi_then_lo_after_the_record_and_before_the_cursor() {
    // The victim's register block straddles two pages: +0 is the last word of page 1
    // (inaccessible), +4 the first word of page 2. If the high word is stored first (the
    // contract's order), it lands and then the low store faults; stored the other way
    // round, nothing lands. The table lives in page 0, shared with the child, so the
    // parent sees how far the refill got: the record's tag written, the cursor not yet.
    let m = GuardedPages::new(3);
    m.protect(1);
    let reg = m.page_ptr(2) as u64 - 4;
    let ctx = m.page_ptr(0).cast::<TranslationCtx>();
    // SAFETY: page 0 is read-write and 8-aligned.
    unsafe { ctx.write(disjoint_table([reg, 0x1000, 0x1000, 0, 0])) };
    let addr = 0x0123_4567_89AB_CDEFu64;
    let end = in_child(|| {
        // SAFETY: valid table; the register block is the straddling one.
        unsafe { neuron_translate(ctx.cast(), addr) };
        0
    });
    assert_eq!(end, Err(libc::SIGSEGV), "the low-word store must fault");
    let tag = addr & !0xF_FFFF;
    // SAFETY: page 2 is readable.
    let hi = unsafe { m.page_ptr(2).cast::<u32>().read() };
    assert_eq!(
        hi,
        (tag >> 32) as u32,
        "the high word is stored first, at +4"
    );
    // SAFETY: page 0 holds the table.
    let t = unsafe { ctx.read() };
    assert_eq!(
        t.records[0].ptr, tag,
        "the record's tag is written before the register"
    );
    assert_eq!(
        t.next_alloc, 0,
        "the cursor moves after the register is programmed"
    );
}

#[test]
fn refill_programs_the_register_and_moves_the_cursor() {
    let mut regs = [0u32; 4];
    let base = regs.as_mut_ptr() as u64;
    let mut t = disjoint_table([0x1000, base, 0x1000, 0, 0]);
    t.next_alloc = 1;
    let addr = 0x0123_4567_89AB_CDEFu64;
    // SAFETY: the victim (slot 1) has a valid block.
    let p = unsafe { neuron_translate(as_ctx(&mut t), addr) };
    let tag = addr & !0xF_FFFF;
    assert_eq!(p as usize, 0x20_0000 + 0xB_CDEF);
    assert_eq!(regs, [tag as u32, (tag >> 32) as u32, 0, 0]);
    assert_eq!(t.records[1].ptr, tag);
    assert_eq!(t.next_alloc, 2);
}

fn traps_without_storing(bad: u64) {
    let m = GuardedPages::new(1);
    let ctx = m.page_ptr(0).cast::<TranslationCtx>();
    let mut t = disjoint_table([bad, bad, bad, 0, 0]);
    t.next_alloc = 2;
    // SAFETY: the page is read-write.
    unsafe { ctx.write(t) };
    let end = in_child(|| {
        // SAFETY: valid table; the victim's register is bad on purpose.
        unsafe { neuron_translate(ctx.cast(), 0x99_0000_0000) };
        0
    });
    assert_eq!(
        end,
        Err(libc::SIGILL),
        "reg_location {bad:#x}: a deterministic trap"
    );
    assert_eq!(
        // SAFETY: the page holds the table.
        unsafe { ctx.read() },
        t,
        "reg_location {bad:#x}: nothing was written"
    );
}

#[test]
fn refill_with_null_register_traps_without_storing() {
    traps_without_storing(0);
}

#[test]
fn refill_with_misaligned_register_traps_without_storing() {
    traps_without_storing(page() as u64 + 2);
}

#[test]
fn refill_with_next_alloc_out_of_range_stays_inside_the_records() {
    // The table ends exactly where an inaccessible page begins: records[next_alloc] for
    // next_alloc >= 5 would be past it.
    let m = GuardedPages::new(3);
    m.protect(1);
    let mut regs = [0u32; 6];
    let base = regs.as_mut_ptr() as u64;
    let ctx = m
        .page_ptr(1)
        .wrapping_sub(core::mem::size_of::<TranslationCtx>())
        .cast::<TranslationCtx>();
    for n in 0..=255u8 {
        let mut t = disjoint_table([base, base + 8, base + 16, 0, 0]);
        t.next_alloc = n;
        // SAFETY: the table's bytes lie inside page 0.
        unsafe { ctx.write(t) };
        // SAFETY: as above; the victims' blocks are valid.
        let p = unsafe { neuron_translate(ctx.cast(), 0x77_0000_0000 + u64::from(n)) };
        let v = usize::from(n % REUSABLE_SLOTS);
        assert_eq!(
            p as usize,
            0x10_0000 * (v + 1) + usize::from(n),
            "next_alloc {n}"
        );
        // SAFETY: as above.
        let after = unsafe { ctx.read() };
        assert_eq!(
            after.next_alloc,
            ((v + 1) % usize::from(REUSABLE_SLOTS)) as u8
        );
        assert_eq!(after.records[v].ptr, 0x77_0000_0000);
    }
}

#[test]
fn a_register_block_inside_the_table_itself_is_written_like_any_other() {
    // Any table contents are allowed, including a victim whose register block is the
    // table's own memory: the refill then overwrites those bytes, in the contract's order
    // (record tag, register hi, register lo, cursor), through raw places only.
    let mut t = disjoint_table([0; 5]);
    let base = &mut t as *mut TranslationCtx as u64;
    // Slot 0's register block is slot 2's tag (+64): hi then lo of the new tag land there.
    t.records[0].reg_location = base + 64;
    let addr = 0x0123_4567_89AB_CDEFu64;
    // SAFETY: the register block is 8 writable bytes of the table itself.
    let p = unsafe { neuron_translate(as_ctx(&mut t), addr) };
    let tag = addr & !0xF_FFFF;
    assert_eq!(p as usize, 0x10_0000 + 0xB_CDEF);
    assert_eq!(t.records[0].ptr, tag);
    assert_eq!(
        t.records[2].ptr, tag,
        "slot 2's tag bytes were the register block"
    );
    assert_eq!(t.next_alloc, 1);
    // The span still answers: addr hits slot 0 (first match) after the refill.
    let mut span = 0u64;
    // SAFETY: a valid table; a hit, so no register is written.
    let q = unsafe { neuron_translate_span(as_ctx(&mut t), addr, 64, &mut span) };
    assert_eq!((q as usize, span), (0x10_0000 + 0xB_CDEF, 64));
}
