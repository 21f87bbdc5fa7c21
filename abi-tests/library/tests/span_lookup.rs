//! The device runtime's span for a translation object without `neuron_translate_span`
//! (sdk/device/span.c, which ntx links in its place for the original's object) against the
//! library's (`TranslationCtx::span_at`): the same span for every hit, on random tables of
//! each shape, lengths from 0 to 2^64 - 1, and the cases span_at's own tests name.

use core::ffi::c_void;
use neuron_translate::{MapRecord, TranslationCtx};
use nt_support::gen::{address, any_shape, span_len, table, Rng};

extern "C" {
    /// sdk/device/span.c, built for the host by nt-support (abi-tests/csrc/span_host.c).
    fn nt_span_by_lookup(ctx: *mut c_void, addr: u64, len: u64, out_span: *mut u64) -> *mut c_void;
}

/// span.c's span of `addr` on `t`, which `addr` hits.
fn c_span(t: &TranslationCtx, addr: u64, len: u64) -> u64 {
    let mut copy = *t;
    let mut span = u64::MAX;
    let ctx = (&mut copy as *mut TranslationCtx).cast::<c_void>();
    // SAFETY: a table laid out as the C struct (the header's layout tests hold it); the
    // stand-in lookup reads nothing and span.c only reads the table.
    let p = unsafe { nt_span_by_lookup(ctx, addr, len, &mut span) };
    assert_eq!(p, ctx, "the stand-in lookup's answer passes through");
    assert_eq!(copy, *t, "span.c changed the table");
    span
}

fn check(t: &TranslationCtx, addr: u64, len: u64) -> bool {
    let Some(k) = t.find(addr) else {
        return false;
    };
    let want = t.span_at(k, addr, t.records[k].local(addr), len);
    assert_eq!(
        c_span(t, addr, len),
        want,
        "addr {addr:#x}, len {len:#x}, record {k} of {t:?}"
    );
    true
}

#[test]
fn span_c_gives_the_librarys_span_on_random_tables() {
    let mut rng = Rng(0x6c6f_6f6b);
    let mut hits = 0;
    for _ in 0..4000 {
        let shape = any_shape(&mut rng);
        let t = table(&mut rng, shape);
        for _ in 0..4 {
            let addr = address(&mut rng, &t);
            let len = span_len(&mut rng);
            hits += usize::from(check(&t, addr, len));
        }
    }
    assert!(
        hits > 8000,
        "only {hits} of 16000 addresses hit: the test proves little"
    );
}

#[test]
fn span_c_cuts_at_an_earlier_window_and_stops_at_the_32_bit_top() {
    let rec = |ptr, window, mask| MapRecord {
        ptr,
        window,
        _pad: 0,
        mask,
        reg_location: 0,
    };
    let mut t = TranslationCtx::empty();
    t.records[0] = rec(0x40_0010_0000, 0x10_0000, !0xFFF);
    t.records[3] = rec(0x40_0000_0000, 0x100_0000, !0xFF_FFFF);
    assert!(check(&t, 0x40_000F_F000, 1 << 30));
    assert_eq!(c_span(&t, 0x40_000F_F000, 1 << 30), 0x1000);
    assert!(check(&t, 0x40_0010_1000, 1 << 30));
    let mut t = TranslationCtx::empty();
    t.records[2] = rec(0x7_0000_0000, 0xFFFF_0000, !0xFFFF);
    for addr in [0x7_0000_0100, 0x7_0000_FFFF] {
        assert!(check(&t, addr, u64::MAX));
    }
    t.records[2] = rec(0x7_0000_0000, 0xFFFF_0000, !0xFF_FFFF);
    assert!(check(&t, 0x7_0000_0000, u64::MAX));
    assert_eq!(c_span(&t, 0x7_0000_0000, u64::MAX), 0x1_0000);
    // A mask of 0: one record matching every address, the whole space its run.
    let mut t = TranslationCtx::empty();
    t.records[1] = rec(0, 0x100, 0);
    assert!(check(&t, 0x1234_5678_9abc, u64::MAX));
}
