//! The host side: the table builder's rejections, the decoder on any bytes, and the
//! `ntx build` / `explain` / `translate` commands.

use std::process::Command;

use abi_tests::tools::{product, scratch};
use neuron_translate::host::{
    describe, describe_bytes, BuildError, Extent, Severity, Shape, SlotUse, TableBuilder, Window,
};
use neuron_translate::TranslationCtx;
use proptest::prelude::*;

use abi_tests::tables::{sample_table as good, sample_window as w};

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
    let mut log = abi_tests::RegisterLog::default();
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
        Shape::Window {
            soc_start: 0x42_0000_0000,
            size: 1 << 24,
            local_start: 0x300_0000
        }
    );
    assert_eq!(d.records[3].shape, Shape::Empty);
}

#[test]
fn every_bad_description_is_refused_precisely() {
    use BuildError::*;
    let cases: Vec<(TableBuilder, BuildError)> = vec![
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
            LocalBaseMisaligned {
                slot: 3,
                local_base: 0x40_1000,
                size: 1 << 16,
            },
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
            LocalRangePast32Bits {
                slot: 3,
                local_base: 0,
                size: 1 << 33,
            },
        ),
        (
            good().window(w(3, 0x40_0100_0000, 1 << 16, 0x40_0000)),
            SocOverlap {
                first: 1,
                second: 3,
            },
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
        (good().next_alloc(3), NextAllocOutOfRange { next_alloc: 3 }),
    ];
    for (b, want) in cases {
        let got = errors(b);
        assert!(got.contains(&want), "expected {want:?} in {got:?}");
        assert!(!want.to_string().is_empty());
    }
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
        RegisterUnusable {
            slot: 1,
            reg_location: 0,
        },
        ReusableSlotMissing { slot: 2 },
    ] {
        assert!(got.contains(&e), "{e:?} in {got:?}");
    }
    let got = errors(good().window(Window {
        reg_location: 0x1_0000_0000,
        ..w(3, 0x50_0000_0000, 1 << 16, 0x40_0000)
    }));
    assert!(
        got.contains(&RegisterPast32Bits {
            slot: 3,
            reg_location: 0x1_0000_0000
        }),
        "{got:?}"
    );
    let got = errors(
        TableBuilder::new()
            .window(Window {
                reg_location: 0xFFFE_0002,
                ..w(0, 0x40_0000_0000, 1 << 16, 0)
            })
            .window(w(1, 0x41_0000_0000, 1 << 16, 0x10_0000))
            .window(w(2, 0x42_0000_0000, 1 << 16, 0x20_0000)),
    );
    assert_eq!(
        got,
        vec![RegisterUnusable {
            slot: 0,
            reg_location: 0xFFFE_0002
        }]
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
    #![proptest_config(ProptestConfig { cases: 5000, ..ProptestConfig::default() })]

    #[test]
    fn the_decoder_describes_any_168_bytes(bytes in proptest::collection::vec(any::<u8>(), 168)) {
        let arr: [u8; 168] = bytes.try_into().unwrap();
        let d = describe_bytes(&arr);
        let t = TranslationCtx::from_bytes(&arr);
        prop_assert_eq!(d.records.len(), 5);
        prop_assert_eq!(d.next_alloc >= 3, d.problems.iter().any(|p| p.kind == "next-alloc-out-of-range"));
        for r in &d.records {
            prop_assert_eq!(r.record, t.records[r.slot]);
            prop_assert_eq!(r.shape == Shape::Empty, r.record.ptr & !r.record.mask != 0);
        }
        let text = abi_tests::tables::explain_text(&d);
        prop_assert!(text.contains("slot 4"));
    }
}

fn ntx(args: &[&str]) -> std::process::Output {
    Command::new(product("NT_NTX")).args(args).output().unwrap()
}

#[test]
fn ntx_build_explain_translate() {
    let dir = scratch("host_tables_cli");
    let spec = dir.join("spec.toml");
    std::fs::write(
        &spec,
        r#"
next_alloc = 1
[[window]]
slot = 0
kind = "reusable"
soc_base = 0x4000000000
size = 0x10000
local_base = 0x80000
reg_location = 0xfffe0000
[[window]]
slot = 1
kind = "reusable"
soc_base = 0x4001000000
mask = "0xffff_ffff_ff00_0000"
local_base = 0x1000000
reg_location = 0xfffe0008
[[window]]
slot = 2
kind = "reusable"
soc_base = 0x4002000000
size = 0x1000000
local_base = 0x2000000
reg_location = 0xfffe0010
"#,
    )
    .unwrap();
    let table = dir.join("t.bin");
    let out = ntx(&[
        "build",
        spec.to_str().unwrap(),
        "-o",
        table.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&table).unwrap();
    assert_eq!(bytes.len(), 168);
    assert_eq!(bytes[160], 1);

    let out = ntx(&["explain", table.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(text.contains("slot 1  reusable  SoC 0x0000004001000000..=0x0000004001ffffff (16 MiB) -> local 0x01000000..=0x01ffffff"), "{text}");
    assert!(text.contains("next: slot 1, cursor 1"), "{text}");
    let out = ntx(&["explain", "--format", "json", table.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"][0]["shape"], "window");
    assert_eq!(v["records"][0]["size"], "0x10000");
    assert_eq!(v["victim"], 1);

    let out = ntx(&[
        "translate",
        table.to_str().unwrap(),
        "0x4001000042",
        "0x9900001234",
        "0x9900001238",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text.contains("0x0000004001000042: slot 1, local 0x01000042"),
        "{text}"
    );
    assert!(
        text.contains("a refill takes slot 1 (cursor 1), tag 0x0000009900000000, local 0x01001234"),
        "{text}"
    );
    assert!(text.contains("writes 0x00000099 to register 0xfffe000c (+4), then 0x00000000 to 0xfffe0008 (+0); cursor becomes 2"), "{text}");
    assert!(
        text.contains("0x0000009900001238: slot 1, local 0x01001238"),
        "the refill is seen by what follows: {text}"
    );

    // Bad inputs: exit 2 with a message naming the file.
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[[window]]\nslot = 0\nkind = \"pinned\"\nsoc_base = 1\nsize = 3\nlocal_base = 0\nreg_location = 0\n").unwrap();
    let out = ntx(&[
        "build",
        bad.to_str().unwrap(),
        "-o",
        dir.join("x.bin").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.toml")
            && err.contains("size 0x3 is not a power of two")
            && err.contains("pinned window in a reusable slot"),
        "{err}"
    );
    assert!(!dir.join("x.bin").exists());
    let short = dir.join("short.bin");
    std::fs::write(&short, [0u8; 100]).unwrap();
    let out = ntx(&["explain", short.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exactly 168 bytes; this file has 100"));
    let out = ntx(&["translate", table.to_str().unwrap(), "banana"]);
    assert_eq!(out.status.code(), Some(2));
}
