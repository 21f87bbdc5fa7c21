//! Property tests of the contract's invariants, on arbitrary tables and address streams.

use neuron_translate::layout::{offsets::CTX_SIZE, REUSABLE_SLOTS};
use neuron_translate::RegisterLog;
use neuron_translate::{MapRecord, TranslationCtx};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

/// Arbitrary records; reusable slots get a non-null, 4-aligned register so refills happen.
fn arb_table() -> impl Strategy<Value = TranslationCtx> {
    let rec = (
        any::<u64>(),
        any::<u32>(),
        0u32..=64,
        any::<u64>(),
        any::<bool>(),
        any::<u32>(),
    );
    (proptest::array::uniform5(rec), any::<u8>()).prop_map(|(recs, next_alloc)| {
        let mut t = TranslationCtx::default();
        for (k, (r, (base, window, bits, rnd, contiguous, reg))) in
            t.records.iter_mut().zip(recs).enumerate()
        {
            let mask = if contiguous {
                if bits == 64 {
                    0
                } else {
                    !((1u64 << bits) - 1)
                }
            } else {
                rnd
            };
            let reg_location = if k < usize::from(REUSABLE_SLOTS) {
                u64::from(reg | 4) & !3
            } else {
                u64::from(reg)
            };
            *r = MapRecord {
                ptr: base & mask,
                window,
                _pad: 0,
                mask,
                reg_location,
            };
        }
        t.next_alloc = next_alloc;
        t
    })
}

/// Addresses, half of them inside one of the table's windows.
fn arb_addrs() -> impl Strategy<Value = Vec<(u64, usize, bool)>> {
    proptest::collection::vec((any::<u64>(), 0usize..5, any::<bool>()), 1..40)
}

fn pick(t: &TranslationCtx, (raw, k, inside): (u64, usize, bool)) -> u64 {
    if inside {
        let r = &t.records[k];
        (r.ptr & r.mask) | (raw & !r.mask)
    } else {
        raw
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, rng_seed: RngSeed::Fixed(nt_support::PROPTEST_SEED), ..ProptestConfig::default() })]

    #[test]
    fn after_translate_lookup_hits_with_the_same_low_word(t in arb_table(), addrs in arb_addrs()) {
        let mut t = t;
        let mut log = RegisterLog::default();
        for x in addrs {
            let a = pick(&t, x);
            let got = t.translate(a, &mut log).unwrap();
            let m = t.lookup(a);
            prop_assert!(m.is_some(), "lookup({a:#x}) misses right after translate");
            // The range the lookup reports holds the address, and the local address is
            // the window's base plus the offset from the range's start (low word).
            let m = m.unwrap();
            prop_assert!(m.start <= a && a <= m.end, "{a:#x} outside {m:x?}");
            let r = &t.records[m.slot];
            prop_assert_eq!(r.window.wrapping_add((a as u32).wrapping_sub(m.start as u32)), got);
        }
    }

    #[test]
    fn slots_3_and_4_never_change(t in arb_table(), addrs in arb_addrs()) {
        let mut t = t;
        let pinned = [t.records[3], t.records[4]];
        let mut log = RegisterLog::default();
        for x in addrs {
            let a = pick(&t, x);
            t.translate(a, &mut log).unwrap();
            prop_assert_eq!([t.records[3], t.records[4]], pinned);
        }
        let reusable = [t.records[0].reg_location, t.records[1].reg_location, t.records[2].reg_location];
        prop_assert!(log.0.iter().all(|&(reg, _)| reusable.contains(&(reg as u64))),
            "only reusable slots' registers are programmed");
    }

    #[test]
    fn next_alloc_stays_below_3_after_a_refill(t in arb_table(), addrs in arb_addrs()) {
        let mut t = t;
        let mut log = RegisterLog::default();
        for x in addrs {
            let a = pick(&t, x);
            let n = log.0.len();
            t.translate(a, &mut log).unwrap();
            if log.0.len() > n {
                prop_assert!(t.next_alloc < REUSABLE_SLOTS);
            }
        }
        if t.next_alloc >= 3 {
            prop_assert!(log.0.is_empty(), "a large next_alloc survives only if nothing refilled");
        }
    }

    #[test]
    fn a_hit_changes_nothing_and_a_miss_changes_only_the_victim(t in arb_table(), addrs in arb_addrs()) {
        let mut t = t;
        let mut log = RegisterLog::default();
        for x in addrs {
            let a = pick(&t, x);
            let before = t;
            let n = log.0.len();
            let hit = t.find(a).is_some();
            t.translate(a, &mut log).unwrap();
            if hit {
                prop_assert_eq!(t, before);
                prop_assert_eq!(log.0.len(), n);
            } else {
                let v = before.victim();
                prop_assert_eq!(log.0.len(), n + 1);
                for k in 0..5 {
                    if k != v {
                        prop_assert_eq!(t.records[k], before.records[k]);
                    }
                }
                prop_assert_eq!(t.records[v].ptr, a & before.records[v].mask);
                prop_assert_eq!(log.0[n], (before.records[v].reg_location as usize, a & before.records[v].mask));
            }
        }
    }

    #[test]
    fn lookup_never_changes_the_table(t in arb_table(), addrs in arb_addrs()) {
        for x in addrs {
            let a = pick(&t, x);
            let before = t;
            let m = t.lookup(a);
            prop_assert_eq!(t, before);
            prop_assert_eq!(m.map(|m| m.slot), t.find(a));
        }
    }

    #[test]
    fn the_one_step_hit_forms_equal_the_definitions(
        ptr in any::<u64>(), window in any::<u32>(), mask in any::<u64>(), raw in any::<u64>(), inside in any::<bool>()
    ) {
        // try_local / try_mapping (the device's hot paths) against match + local and the
        // contract's (ptr, ptr + !mask), for any record, inside it or not.
        let r = MapRecord { ptr, window, _pad: 0, mask, reg_location: 0 };
        let a = if inside { (ptr & mask) | (raw & !mask) } else { raw };
        prop_assert_eq!(r.try_local(a), r.matches(a).then(|| r.local(a)));
        prop_assert_eq!(r.try_mapping(a), r.matches(a).then(|| (ptr, ptr.wrapping_add(!mask))));
    }

    #[test]
    fn byte_image_round_trips(bytes in proptest::collection::vec(any::<u8>(), CTX_SIZE)) {
        let arr: [u8; CTX_SIZE] = bytes.try_into().unwrap();
        prop_assert_eq!(TranslationCtx::from_bytes(&arr).to_bytes(), arr);
    }
}
