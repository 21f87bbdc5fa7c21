//! The table tools: the builder's rejections and the decoder on any bytes (the `ntx
//! build` / `explain` / `translate` commands over them: ntx_tables.rs).

use neuron_translate::tables::{
    describe, describe_bytes, Breach, BuildError, Extent, RecordShape, Severity, SlotUse,
    TableBuilder, Window,
};
use neuron_translate::{MapRecord, TranslationCtx};
use proptest::prelude::*;
use proptest::test_runner::RngSeed;

use neuron_translate::layout::{offsets::CTX_SIZE, REUSABLE_SLOTS};
use nt_support::gen::{sample_table as good, sample_window as w, sample_windows};

fn errors(b: TableBuilder) -> Vec<BuildError> {
    b.build().expect_err("must be refused").0
}

#[test]
fn a_good_table_builds_to_the_image_the_device_reads() {
    let t = good().build().unwrap();
    let image = good().build_image().unwrap();
    assert_eq!(image, t.to_bytes());
    assert_eq!(t.records[1].mask, !0xFF_FFFF);
    assert_eq!(t.records[1].ptr, 0x40_0100_0000);
    let mut log = neuron_translate::RegisterLog::default();
    let mut t2 = t;
    assert_eq!(t2.translate(0x40_0100_1234, &mut log), Ok(0x100_1234));
    let d = describe(&t);
    assert!(
        d.problems.iter().all(|p| p.severity == Severity::Warning),
        "{:?}",
        d.problems
    );
    assert_eq!(
        d.records[4].shape,
        RecordShape::Window {
            soc_start: 0x42_0000_0000,
            size: 1 << 24,
            local_start: 0x300_0000
        }
    );
    assert_eq!(d.records[3].shape, RecordShape::Empty);
}

/// Descriptions with one thing wrong each, and the error that names it.
fn bad_descriptions() -> Vec<(TableBuilder, BuildError)> {
    use BuildError::*;
    vec![
        (
            good().window(w(3, 0x50_0000_0000, 3000, 0)),
            SizeNotPowerOfTwo {
                slot: 3,
                size: 3000,
            },
        ),
        (
            good().window(w(3, 0x50_0000_0000, 0, 0)),
            SizeNotPowerOfTwo { slot: 3, size: 0 },
        ),
        (
            good().window(w(3, 0x50_0000_1000, 1 << 16, 0x40_0000)),
            SocBaseMisaligned {
                slot: 3,
                soc_base: 0x50_0000_1000,
                size: 1 << 16,
            },
        ),
        (
            good().window(w(3, 0x50_0000_0000, 1 << 16, 0x40_1000)),
            Rule(Breach::LocalBaseMisaligned {
                slot: 3,
                local_base: 0x40_1000,
                size: 1 << 16,
            }),
        ),
        (
            good().window(Window {
                extent: Extent::Mask(!0xFF00),
                ..w(3, 0x50_0000_0000, 0, 0)
            }),
            MaskNotContiguous {
                slot: 3,
                mask: !0xFF00,
            },
        ),
        (
            good().window(w(3, 0x60_0000_0000, 1 << 33, 0)),
            Rule(Breach::LocalRangePast32Bits {
                slot: 3,
                local_base: 0,
                size: 1 << 33,
            }),
        ),
        (
            good().window(w(3, 0x40_0100_0000, 1 << 16, 0x40_0000)),
            Rule(Breach::Overlap {
                first: 1,
                second: 3,
            }),
        ),
        (
            good().window(Window {
                kind: SlotUse::Reusable,
                ..w(3, 0x50_0000_0000, 1 << 16, 0x40_0000)
            }),
            ReusableInPinnedSlot { slot: 3 },
        ),
        (
            good().window(w(7, 0x50_0000_0000, 1 << 16, 0)),
            SlotOutOfRange { slot: 7 },
        ),
        (
            good().window(w(1, 0x50_0000_0000, 1 << 16, 0)),
            DuplicateSlot { slot: 1 },
        ),
        (
            good().next_alloc(3),
            Rule(Breach::NextAllocOutOfRange { next_alloc: 3 }),
        ),
    ]
}

#[test]
fn every_bad_description_is_refused_precisely() {
    for (b, want) in bad_descriptions() {
        let got = errors(b);
        assert!(got.contains(&want), "expected {want:?} in {got:?}");
        assert!(!want.to_string().is_empty());
    }
}

#[test]
fn misplaced_and_missing_windows_and_bad_registers_are_refused() {
    use BuildError::*;
    // A pinned window in a reusable slot, a reusable slot missing, bad registers.
    let b = TableBuilder::new()
        .window(Window {
            kind: SlotUse::Pinned,
            ..w(0, 0x40_0000_0000, 1 << 16, 0)
        })
        .window(Window {
            reg_location: 0,
            ..w(1, 0x41_0000_0000, 1 << 16, 0x10_0000)
        });
    let got = errors(b);
    for e in [
        PinnedInReusableSlot { slot: 0 },
        Rule(Breach::RegisterUnusable {
            slot: 1,
            reg_location: 0,
        }),
        ReusableSlotMissing { slot: 2 },
    ] {
        assert!(got.contains(&e), "{e:?} in {got:?}");
    }
    let got = errors(good().window(Window {
        reg_location: 0x1_0000_0000,
        ..w(3, 0x50_0000_0000, 1 << 16, 0x40_0000)
    }));
    assert!(
        got.contains(&Rule(Breach::RegisterPast32Bits {
            slot: 3,
            reg_location: 0x1_0000_0000
        })),
        "{got:?}"
    );
    let got = errors(
        TableBuilder::new()
            .window(Window {
                reg_location: 0x0010_0002,
                ..w(0, 0x40_0000_0000, 1 << 16, 0)
            })
            .window(w(1, 0x41_0000_0000, 1 << 16, 0x10_0000))
            .window(w(2, 0x42_0000_0000, 1 << 16, 0x20_0000)),
    );
    assert_eq!(
        got,
        vec![Rule(Breach::RegisterUnusable {
            slot: 0,
            reg_location: 0x0010_0002
        })]
    );
}

#[test]
fn the_decoder_lists_what_is_wrong() {
    let mut t = good().build().unwrap();
    t.next_alloc = 9;
    t.records[1].reg_location = 0;
    t.records[2].mask = !0xF0F0;
    t.records[4].ptr = 0x40_0000_0000; // overlaps slot 0
    t.records[4].mask = !0xFFFF_FFFF;
    let d = describe(&t);
    let kinds: Vec<&str> = d.problems.iter().map(|p| p.kind).collect();
    for k in [
        "next-alloc-out-of-range",
        "register-unusable",
        "mask-not-contiguous",
        "shadowed",
    ] {
        assert!(kinds.contains(&k), "{k} in {kinds:?}");
    }
    assert_eq!(d.victim, 0);
    assert!(
        d.problems.first().unwrap().severity == Severity::Error,
        "errors first"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, rng_seed: RngSeed::Fixed(nt_support::PROPTEST_SEED), ..ProptestConfig::default() })]

    #[test]
    fn the_decoder_describes_any_168_bytes(bytes in proptest::collection::vec(any::<u8>(), CTX_SIZE)) {
        let arr: [u8; CTX_SIZE] = bytes.try_into().unwrap();
        let d = describe_bytes(&arr);
        let t = TranslationCtx::from_bytes(&arr);
        prop_assert_eq!(d.records.len(), 5);
        prop_assert_eq!(d.next_alloc >= 3, d.problems.iter().any(|p| p.kind == "next-alloc-out-of-range"));
        for r in &d.records {
            prop_assert_eq!(r.record, t.records[r.slot]);
            prop_assert_eq!(r.shape == RecordShape::Empty, r.record.ptr & !r.record.mask != 0);
        }
        let text = ntx::tables::explain_text(&d);
        prop_assert!(text.contains("slot 4"));
    }
}

#[test]
fn the_original_preset_is_the_table_init_builds() {
    use neuron_translate::{initial_table, InitInputs};
    for (engine_base, hbm_scratch) in [
        (0x28_0100_0000u64, 0x42_1234_5678u64),
        (0x4_0000_0000, 0x8000_0000),
        (41 << 20, 0x7F_FFFF_FFFF),
    ] {
        let inputs = InitInputs {
            engine_base,
            hbm_scratch,
        };
        let t = TableBuilder::original(&inputs).build().unwrap();
        assert_eq!(t, initial_table(&inputs), "{inputs:x?}");
        let d = describe(&t);
        let names: Vec<_> = d
            .records
            .iter()
            .map(|r| r.original.map(|a| a.name))
            .collect();
        assert_eq!(
            names,
            [
                Some("reusable-0"),
                Some("reusable-1"),
                Some("reusable-2"),
                Some("sbuf"),
                Some("hbm-scratch")
            ]
        );
        let regs: Vec<_> = d
            .records
            .iter()
            .map(|r| r.register.map(|p| p.name))
            .collect();
        assert_eq!(
            regs,
            [
                Some("MEM_WINDOW3"),
                Some("MEM_WINDOW5"),
                Some("MEM_WINDOW6"),
                None,
                None
            ]
        );
        assert!(d.problems.is_empty(), "{:?}", d.problems);
        for k in 0..usize::from(REUSABLE_SLOTS) {
            assert_eq!(
                d.records[k].shape,
                RecordShape::Empty,
                "slot {k} starts empty"
            );
        }
    }
    // SBUF and the HBM scratch region in one 64 MiB: the builder says they overlap.
    let clash = InitInputs {
        engine_base: 0x40_0290_0000,
        hbm_scratch: 0x40_0000_1000,
    };
    assert_eq!(
        errors(TableBuilder::original(&clash)),
        vec![BuildError::Rule(Breach::Overlap {
            first: 3,
            second: 4
        })]
    );
    // A record that differs from its row in anything but the tag is not named.
    let mut t = TableBuilder::original(&InitInputs::default())
        .build()
        .unwrap();
    t.records[1].window = 0x0B00_0000;
    assert_eq!(describe(&t).records[1].original, None);
}

#[test]
fn slot_uses_print_as_the_explain_output_names_them() {
    assert_eq!(SlotUse::Reusable.to_string(), "reusable");
    assert_eq!(SlotUse::Pinned.to_string(), "pinned");
}

#[test]
fn the_builders_boundaries_are_exact() {
    // A register location of exactly u32::MAX fits the device's address space (a pinned
    // slot needs no usable register); one more does not.
    let pinned = |reg_location| Window {
        reg_location,
        ..w(3, 0x50_0000_0000, 1 << 24, 0x400_0000)
    };
    assert!(good().window(pinned(u64::from(u32::MAX))).build().is_ok());
    assert_eq!(
        errors(good().window(pinned(1 << 32))),
        vec![BuildError::Rule(Breach::RegisterPast32Bits {
            slot: 3,
            reg_location: 1 << 32
        })]
    );
    // A local range that ends exactly at 2^32 is fine; a byte more is not.
    let top = |local_base| Window {
        local_base,
        ..w(3, 0x50_0000_0000, 1 << 24, 0)
    };
    assert!(good().window(top(0xFF00_0000)).build().is_ok());
    let got = errors(good().window(Window {
        extent: Extent::Size(1 << 25),
        ..top(0xFF00_0000)
    }));
    assert!(
        got.contains(&BuildError::Rule(Breach::LocalRangePast32Bits {
            slot: 3,
            local_base: 0xFF00_0000,
            size: 1 << 25
        }))
    );
    // A contiguous mask is as good as the size it stands for.
    let by_mask = good().window(Window {
        extent: Extent::Mask(!0xFF_FFFF),
        ..w(3, 0x50_0000_0000, 1 << 24, 0x400_0000)
    });
    let by_size = good().window(w(3, 0x50_0000_0000, 1 << 24, 0x400_0000));
    assert_eq!(by_mask.build().unwrap(), by_size.build().unwrap());
}

#[test]
fn build_errors_print_one_per_line() {
    let e = good()
        .window(w(9, 0, 1 << 12, 0))
        .window(w(7, 0, 1 << 12, 0))
        .build()
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "slot 9: there are only slots 0 to 4\nslot 7: there are only slots 0 to 4"
    );
    let one = good().window(w(9, 0, 1 << 12, 0)).build().unwrap_err();
    assert_eq!(one.to_string(), "slot 9: there are only slots 0 to 4");
}

/// The problem kinds `describe` reports for slot `slot`.
fn kinds_of(t: &TranslationCtx, slot: usize) -> Vec<&'static str> {
    describe(t)
        .problems
        .iter()
        .filter(|p| p.slot == Some(slot))
        .map(|p| p.kind)
        .collect()
}

#[test]
fn the_decoder_flags_empty_pinned_slots_wrapping_and_misaligned_windows() {
    let mut t = good().build().unwrap();
    // Slot 3 of the sample is left empty: pinned and empty is a warning; an empty
    // reusable slot is not (it fills on the first refill).
    assert_eq!(kinds_of(&t, 3), ["pinned-empty"]);
    t.records[0] = MapRecord::empty(0x8_0000, !0xFFFF, t.records[0].reg_location);
    assert!(kinds_of(&t, 0).is_empty(), "{:?}", kinds_of(&t, 0));
    // A 16 MiB window ending exactly at 2^32: neither wraps nor is misaligned.
    let window = |local: u32, mask: u64| MapRecord {
        ptr: 0x600_0000_0000 & mask,
        window: local,
        _pad: 0,
        mask,
        reg_location: 0,
    };
    t.records[4] = window(0xFF00_0000, !0xFF_FFFF);
    assert!(kinds_of(&t, 4).is_empty(), "{:?}", kinds_of(&t, 4));
    // One 4 KiB page further: it wraps, and it is not aligned to its size.
    t.records[4] = window(0xFF00_1000, !0xFF_FFFF);
    assert_eq!(
        kinds_of(&t, 4),
        ["local-range-wraps", "local-base-misaligned"]
    );
    // A 1 TiB window: it wraps whatever its base; alignment to more than 2^32 is not
    // asked for.
    t.records[4] = window(0x1000, !((1u64 << 40) - 1));
    assert_eq!(kinds_of(&t, 4), ["local-range-wraps"]);
}

/// `w` written into `t` as it is, whatever is wrong with it (the builder would refuse it).
fn place(t: &mut TranslationCtx, w: &Window) {
    let Extent::Size(size) = w.extent else {
        panic!("by size")
    };
    let mask = !(size - 1);
    t.records[w.slot] = MapRecord {
        ptr: w.soc_base.unwrap() & mask,
        window: w.local_base,
        _pad: 0,
        mask,
        reg_location: w.reg_location,
    };
}

/// The sample window of `slot` (0, or a pinned window in 3).
fn sample(slot: usize) -> Window {
    match slot {
        0 => sample_windows()[0],
        _ => w(3, 0x50_0000_0000, 1 << 16, 0x40_0000),
    }
}

/// One window per shared rule, breaking it: (the window, the breach).
fn breaking_windows() -> [(Window, Breach); 5] {
    [
        (
            Window {
                reg_location: 0x0010_0002,
                ..sample(0)
            },
            Breach::RegisterUnusable {
                slot: 0,
                reg_location: 0x0010_0002,
            },
        ),
        (
            Window {
                reg_location: 1 << 32,
                ..sample(3)
            },
            Breach::RegisterPast32Bits {
                slot: 3,
                reg_location: 1 << 32,
            },
        ),
        (
            Window {
                local_base: 0x40_1000,
                ..sample(3)
            },
            Breach::LocalBaseMisaligned {
                slot: 3,
                local_base: 0x40_1000,
                size: 1 << 16,
            },
        ),
        (
            w(3, 0x50_0000_0000, 1 << 25, 0xFF00_0000),
            Breach::LocalRangePast32Bits {
                slot: 3,
                local_base: 0xFF00_0000,
                size: 1 << 25,
            },
        ),
        (
            w(3, 0x40_0100_0000, 1 << 16, 0x40_0000),
            Breach::Overlap {
                first: 1,
                second: 3,
            },
        ),
    ]
}

#[test]
fn the_builder_refuses_and_describe_reports_by_the_same_rule_in_the_same_words() {
    // The sample table with `window` in its slot instead of the sample's own.
    let with = |window: Window| {
        sample_windows()
            .into_iter()
            .filter(|s| s.slot != window.slot)
            .fold(TableBuilder::new().window(window), TableBuilder::window)
    };
    assert_eq!(with(sample(0)).build(), good().build(), "the sample table");
    for (window, breach) in breaking_windows() {
        let refused = errors(with(window));
        assert!(
            refused.contains(&BuildError::Rule(breach)),
            "{breach:?} in {refused:?}"
        );
        let mut t = with(sample(window.slot)).build().unwrap();
        place(&mut t, &window);
        let reported = describe(&t).problems;
        assert!(
            reported.iter().any(|p| p.kind == breach.kind()
                && p.message == breach.to_string()
                && p.message == BuildError::Rule(breach).to_string()),
            "{breach:?} ({}) in {reported:?}",
            breach.kind()
        );
    }
    // The cursor's rule, on the table as a whole.
    let breach = Breach::NextAllocOutOfRange { next_alloc: 3 };
    assert!(errors(good().next_alloc(3)).contains(&BuildError::Rule(breach)));
    let mut t = good().build().unwrap();
    t.next_alloc = 3;
    let reported = describe(&t).problems;
    assert!(reported
        .iter()
        .any(|p| p.kind == breach.kind() && p.message == breach.to_string()));
}
