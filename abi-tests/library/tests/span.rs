//! neuron_translate_span (this library's addition): the span never crosses a window's end,
//! agrees with translate at every address in it, is as long as it may be, handles a window
//! ending exactly at the 32-bit top and `len == 0`.

use core::mem::offset_of;
use neuron_translate::abi::neuron_translate_span;
use neuron_translate::translate::next_member;
use neuron_translate::RegisterLog;
use neuron_translate::{MapRecord, TranslationCtx};
use nt_support::gen::{address, any_shape, span_len, table, Rng, TableShape};
use nt_support::RegisterBank;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

fn translate_hit(t: &TranslationCtx, a: u64) -> Option<u32> {
    t.find(a).map(|k| t.records[k].local(a))
}

/// Checks one span against its definition on the table as it is after the call.
fn check_span(t: &TranslationCtx, addr: u64, len: u64, local: u32, span: u64) {
    assert!(span <= len);
    let k = t.find(addr).expect("after the call the address hits");
    assert_eq!(t.records[k].local(addr), local);
    // Every address of the span translates, without a refill, to local + i.
    let probe = |i: u64| {
        assert_eq!(
            translate_hit(t, addr + i),
            Some(local.wrapping_add(i as u32)),
            "addr {addr:#x} + {i:#x}, span {span:#x}"
        );
        assert_eq!(t.find(addr + i), Some(k), "same window at +{i:#x}");
    };
    if span <= 4096 {
        (0..span).for_each(probe);
    } else {
        for i in [0, 1, span / 3, span / 2, span - 2, span - 1] {
            probe(i);
        }
    }
    // And it is maximal: unless len or the 32-bit top stopped it, the next address leaves.
    let top = (1u64 << 32) - u64::from(local);
    if span < len && span < top && addr.checked_add(span).is_some() {
        let next = addr + span;
        assert_ne!(
            t.find(next),
            Some(k),
            "span {span:#x} from {addr:#x} could have been longer"
        );
    }
}

#[test]
fn spans_of_random_tables_are_exact() {
    let mut rng = Rng(0x7370_616e);
    let mut checked = 0;
    for _ in 0..3000 {
        let shape = any_shape(&mut rng);
        let mut bank = RegisterBank::default();
        let mut t = bank.bind(&table(&mut rng, shape));
        for _ in 0..4 {
            let addr = address(&mut rng, &t);
            let len = span_len(&mut rng);
            let mut log = RegisterLog::default();
            let (local, span) = t.translate_span(addr, len, &mut log).unwrap();
            if len == 0 {
                assert_eq!(span, 0);
            }
            check_span(&t, addr, len, local, span);
            checked += 1;
        }
    }
    assert_eq!(checked, 12_000);
}

#[test]
fn an_earlier_window_inside_a_later_one_ends_the_span() {
    let mut t = TranslationCtx::empty();
    t.records[0] = MapRecord {
        ptr: 0x40_0010_0000,
        window: 0x10_0000,
        _pad: 0,
        mask: !0xFFF,
        reg_location: 0,
    };
    t.records[3] = MapRecord {
        ptr: 0x40_0000_0000,
        window: 0x100_0000,
        _pad: 0,
        mask: !0xFF_FFFF,
        reg_location: 0,
    };
    let mut log = RegisterLog::default();
    let (local, span) = t.translate_span(0x40_000F_F000, 1 << 30, &mut log).unwrap();
    assert_eq!(local, 0x100_0000 + 0xF_F000);
    assert_eq!(span, 0x1000, "record 0 wins from 0x40_0010_0000 on");
    // Past the small window, record 3 again, to its end.
    let (_, span) = t.translate_span(0x40_0010_1000, 1 << 30, &mut log).unwrap();
    assert_eq!(span, 0x100_0000 - 0x10_1000);
    assert!(log.0.is_empty());
}

#[test]
fn a_window_ending_at_the_32_bit_top() {
    let mut t = TranslationCtx::empty();
    t.records[2] = MapRecord {
        ptr: 0x7_0000_0000,
        window: 0xFFFF_0000,
        _pad: 0,
        mask: !0xFFFF,
        reg_location: 0,
    };
    let mut log = RegisterLog::default();
    let (local, span) = t.translate_span(0x7_0000_0100, u64::MAX, &mut log).unwrap();
    assert_eq!(local, 0xFFFF_0100);
    assert_eq!(span, 0xFF00, "to the top exactly, not wrapped to 0");
    let (local, span) = t.translate_span(0x7_0000_FFFF, u64::MAX, &mut log).unwrap();
    assert_eq!((local, span), (0xFFFF_FFFF, 1));
    // A window larger than what is left of the local space stops at the top.
    t.records[2] = MapRecord {
        ptr: 0x7_0000_0000,
        window: 0xFFFF_0000,
        _pad: 0,
        mask: !0xFF_FFFF,
        reg_location: 0,
    };
    let (_, span) = t.translate_span(0x7_0000_0000, u64::MAX, &mut log).unwrap();
    assert_eq!(span, 0x1_0000);
}

#[test]
fn len_zero_translates_as_usual() {
    let mut regs = [0u32; 2];
    let mut t = TranslationCtx::empty();
    t.records[0].reg_location = regs.as_mut_ptr() as u64;
    let before = t;
    let mut out = 99u64;
    // SAFETY: valid table; slot 0's register is `regs`.
    let p = unsafe {
        neuron_translate_span(
            (&mut t as *mut TranslationCtx).cast(),
            0x1234_5678,
            0,
            &mut out,
        )
    };
    assert_eq!(out, 0);
    assert_eq!(
        p as usize as u32,
        before.records[0].window.wrapping_add(0x678),
        "a refill, as translate does"
    );
    assert_eq!(t.next_alloc, 1);
}

#[test]
fn the_c_entry_point_agrees_with_the_safe_api_and_handles_null() {
    let mut rng = Rng(0x6666_6969);
    for _ in 0..500 {
        let mut bank = RegisterBank::default();
        let base = bank.bind(&table(&mut rng, TableShape::Wild));
        let addr = address(&mut rng, &base);
        let len = rng.next_u64() >> rng.below(64);
        let mut a = base;
        let mut b = base;
        let want = a
            .translate_span(addr, len, &mut RegisterLog::default())
            .unwrap();
        let mut span = 0u64;
        // SAFETY: valid table, registers in `bank`.
        let p = unsafe {
            neuron_translate_span((&mut b as *mut TranslationCtx).cast(), addr, len, &mut span)
        };
        assert_eq!((p as usize as u32, span), want);
        // NULL out_span: skipped.
        // SAFETY: as above.
        unsafe {
            neuron_translate_span(
                (&mut b as *mut TranslationCtx).cast(),
                addr,
                len,
                core::ptr::null_mut(),
            )
        };
    }
    let mut span = 5u64;
    // SAFETY: NULL ctx is allowed.
    let p = unsafe { neuron_translate_span(core::ptr::null_mut(), 1, 2, &mut span) };
    assert!(p.is_null());
    assert_eq!(span, 0);
}

/// The address both aliasing tests refill for.
const ALIASED_ADDR: u64 = 0x28_0201_2345;

/// A span call on a fresh table (16 MiB windows at 0x0700_0000) whose slot-0 register
/// block is `offset` bytes into record 0 itself: the returned address, the span, and the
/// table after the call.
fn span_with_register_block_in_record_0(offset: usize) -> (usize, u64, TranslationCtx) {
    let mut t = TranslationCtx::empty();
    for r in t.records.iter_mut() {
        r.mask = 0xFFFF_FFFF_FF00_0000;
        r.window = 0x0700_0000;
    }
    let ctx: *mut TranslationCtx = &mut t;
    // SAFETY: a place inside the table.
    let record = unsafe { core::ptr::addr_of_mut!((*ctx).records[0]) } as u64;
    // SAFETY: as above.
    unsafe { (*ctx).records[0].reg_location = record + offset as u64 };
    let mut span = 77u64;
    // SAFETY: the table is valid; its register block is 8 bytes inside it.
    let p = unsafe { neuron_translate_span(ctx.cast(), ALIASED_ADDR, 0x1000, &mut span) };
    // SAFETY: the call is over; nothing else holds the table.
    (p as usize, span, unsafe { ctx.read() })
}

#[test]
fn a_register_block_over_the_victims_own_tag_leaves_no_span() {
    // The victim's register block starts at the high word of its own tag: the refill
    // writes the tag, then its high word over the record's window (+8) and its low word
    // over the tag's high word (+4). The record then no longer matches the address it was
    // refilled for, and nothing translates contiguously from it; the local address is the
    // one the refill computed, as neuron_translate returns.
    let (p, span, after) = span_with_register_block_in_record_0(offset_of!(MapRecord, ptr) + 4);
    assert_eq!(p, 0x0701_2345);
    assert_eq!(span, 0, "the record no longer matches: no span");
    assert_eq!(
        after.records[0].ptr, 0x0200_0000_0200_0000,
        "lo over the tag's high word"
    );
    assert_eq!(after.records[0].window, 0x28, "hi over the window");
    assert!(!after.records[0].matches(ALIASED_ADDR));
    assert_eq!(after.next_alloc, 1);
}

#[test]
fn a_register_block_over_the_victims_own_window_leaves_no_span() {
    // The victim's register block is its own window field: the refill's low word lands on
    // the window (+8), its high word on the padding (+12). The record still matches the
    // address, but now gives it another local address than the one returned: nothing
    // translates contiguously from the returned address, so the span is 0 (the span's
    // definition, docs/contract.md §3, which prove/validate.py checks on the object).
    let (p, span, after) = span_with_register_block_in_record_0(offset_of!(MapRecord, window));
    assert_eq!(p, 0x0701_2345, "the local address the refill computed");
    assert!(after.records[0].matches(ALIASED_ADDR));
    assert_eq!(after.records[0].window, 0x0200_0000, "lo over the window");
    assert_eq!(after.records[0].local(ALIASED_ADDR), 0x0201_2345);
    assert_eq!(
        span, 0,
        "the window moved under the returned address: no span"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, rng_seed: RngSeed::Fixed(nt_support::PROPTEST_SEED), ..ProptestConfig::default() })]

    /// next_member against a brute-force search, on 12-bit masks and addresses (the high
    /// 52 bits of the mask set, of the tag and address equal).
    #[test]
    fn next_member_is_the_least_matching_address_at_or_after(mask in 0u64..4096, ptr in 0u64..4096, x in 0u64..4096, hi in any::<u64>()) {
        let high = hi & !0xFFF;
        let r = MapRecord { ptr: high | ptr, window: 0, _pad: 0, mask: !0xFFF | mask, reg_location: 0 };
        let brute = (x..4096).map(|a| high | a).find(|&a| r.matches(a));
        prop_assert_eq!(next_member(&r, high | x), brute);
    }
}

#[test]
fn next_member_of_a_matching_address_is_the_address_itself() {
    // Contiguous and scattered masks, addresses at the start, inside and at the end of what
    // the record matches.
    for (mask, ptr) in [
        (!0xFFFu64, 0x40_0000_1000u64),
        (!0xFF_FFFF, 0x28_0200_0000),
        (0xFFFF_0000_FFFF_00F0, 0x1234_0000_5678_0030),
    ] {
        let r = MapRecord {
            ptr,
            window: 0,
            _pad: 0,
            mask,
            reg_location: 0,
        };
        for x in [ptr, ptr | (!mask & 0x5), ptr | !mask] {
            assert!(r.matches(x));
            assert_eq!(next_member(&r, x), Some(x), "mask {mask:#x}, x {x:#x}");
        }
        // Just below the block of a contiguous mask: the block's start; just past it:
        // nothing.
        if mask == !0xFFF {
            assert_eq!(next_member(&r, ptr - 1), Some(ptr));
            assert_eq!(next_member(&r, (ptr | !mask) + 1), None);
        }
    }
}
