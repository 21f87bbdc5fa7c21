//! Unit tests of the safe API, one per row of contract §3 and §4 that the safe API carries.
//! The FFI rows (NULL pointers, traps, MMIO store order, `_ctx`) are tested on the exported
//! symbols in abi-tests/tests/ffi_contract.rs.

use std::vec::Vec;

use crate::init::{empty_tag, initial_table, InitInputs, APERTURES, REFILL_MASK};
use crate::layout::{offsets, MapRecord, TranslationCtx};
use crate::translate::{Mapping, RefillError};
use crate::window_reg::{RegisterAddress, WindowRegisters};

#[derive(Default)]
struct Log(Vec<(usize, u64)>);
impl WindowRegisters for Log {
    fn program(&mut self, reg: RegisterAddress, tag: u64) {
        self.0.push((reg.get(), tag));
    }
}

const REG: u64 = 0x1000;

/// Five disjoint 1 MiB windows at SoC 0x40_0000_0000 + k MiB, local 0x10_0000 * (k + 1),
/// registers at REG + 8k; records 0..3 use the refill mask so they look like the seed's.
fn table() -> TranslationCtx {
    let mut t = TranslationCtx::default();
    for (k, r) in t.records.iter_mut().enumerate() {
        let mask = !0xF_FFFFu64;
        *r = MapRecord {
            ptr: 0x40_0000_0000 + ((k as u64) << 20),
            window: 0x10_0000 * (k as u32 + 1),
            _pad: 0,
            mask,
            reg_location: REG + 8 * k as u64,
        };
    }
    t
}

#[test]
fn hit_in_each_slot_returns_window_plus_offset_and_changes_nothing() {
    for k in 0..5u64 {
        let mut t = table();
        let before = t;
        let mut log = Log::default();
        let addr = 0x40_0000_0000 + (k << 20) + 0xABCDE;
        let got = t.translate(addr, &mut log).unwrap();
        assert_eq!(got, 0x10_0000 * (k as u32 + 1) + 0xABCDE, "slot {k}");
        assert_eq!(t, before, "a hit changes nothing (slot {k})");
        assert!(log.0.is_empty());
        assert_eq!(t.find(addr), Some(k as usize));
    }
}

#[test]
fn first_match_wins_on_overlap() {
    let mut t = table();
    // Record 3 covers 16 MiB that include record 1's 1 MiB; record 1 comes first.
    t.records[3].mask = REFILL_MASK;
    t.records[3].ptr = 0x40_0000_0000;
    let mut log = Log::default();
    assert_eq!(t.translate(0x40_0010_0004, &mut log), Ok(0x20_0004));
    // Where only record 3 matches, it is record 3.
    assert_eq!(
        t.translate(0x40_0090_0004, &mut log),
        Ok(0x40_0000 + 0x90_0004)
    );
    // And the earliest of several: move record 3 in front by making record 0 cover all.
    t.records[0].mask = REFILL_MASK;
    t.records[0].ptr = 0x40_0000_0000;
    assert_eq!(
        t.translate(0x40_0010_0004, &mut log),
        Ok(0x10_0000 + 0x10_0004)
    );
    assert!(log.0.is_empty());
}

#[test]
fn match_uses_all_64_bits() {
    let mut t = table();
    let mut log = Log::default();
    // Same low word as record 0, different high word: a miss.
    let a = 0x41_0000_0000u64 + 0x10;
    assert_eq!(t.find(a), None);
    assert!(t.translate(a, &mut log).is_ok());
    assert_eq!(log.0.len(), 1, "the miss refilled");
}

#[test]
fn local_address_wraps_at_32_bits() {
    let mut t = table();
    t.records[2].window = 0xFFFF_FFF0;
    let mut log = Log::default();
    assert_eq!(t.translate(0x40_0020_0020, &mut log), Ok(0x10));
    assert_eq!(
        t.lookup(0x40_0020_0020).unwrap().local,
        0x1_0000_0010,
        "lookup keeps the carry"
    );
}

#[test]
fn only_the_low_word_of_the_offset_counts() {
    let mut t = table();
    // A 2^40-byte window: offset bits reach into the high word.
    t.records[4] = MapRecord {
        ptr: 0,
        window: 0x100,
        _pad: 0,
        mask: !((1u64 << 40) - 1),
        reg_location: REG,
    };
    let mut log = Log::default();
    let a = 0x12_3456_789Au64; // not in records 0..3 (they are at 0x40_xxxx_xxxx)
    assert_eq!(t.translate(a, &mut log), Ok(0x100 + 0x3456_789A));
    assert_eq!(t.lookup(a).unwrap().local, 0x100 + 0x12_3456_789A);
}

#[test]
fn refill_takes_slots_0_1_2_0_in_turn_and_never_3_or_4() {
    let mut t = table();
    let mut log = Log::default();
    let mut slots = Vec::new();
    for i in 0..7u64 {
        let a = 0x80_0000_0000 + (i << 24) + 0x123;
        let v = t.victim();
        let got = t.translate(a, &mut log).unwrap();
        slots.push(v);
        let r = t.records[v];
        assert_eq!(r.ptr, a & r.mask, "the victim's tag is addr & mask");
        assert_eq!(got, r.local(a));
        assert_eq!(t.find(a), Some(v), "the refilled address now hits");
    }
    assert_eq!(slots, [0, 1, 2, 0, 1, 2, 0]);
    assert_eq!(t.next_alloc, 1);
    assert_eq!(t.records[3], table().records[3]);
    assert_eq!(t.records[4], table().records[4]);
}

#[test]
fn refill_programs_the_victims_register_with_the_tag() {
    let mut t = table();
    t.next_alloc = 2;
    let mut log = Log::default();
    let a = 0x1234_5678_9ABC_DEF0u64;
    t.translate(a, &mut log).unwrap();
    assert_eq!(log.0, [((REG + 16) as usize, a & !0xF_FFFF)]);
    assert_eq!(t.next_alloc, 0);
}

#[test]
fn refill_uses_the_victims_own_mask() {
    let mut t = table();
    t.records[0].mask = !0xFFFu64;
    let mut log = Log::default();
    let a = 0x77_0000_1234u64;
    assert_eq!(t.translate(a, &mut log), Ok(0x10_0000 + 0x234));
    assert_eq!(t.records[0].ptr, 0x77_0000_1000);
}

#[test]
fn next_alloc_out_of_range_is_taken_modulo_3() {
    for n in 0..=255u8 {
        let mut t = table();
        t.next_alloc = n;
        let mut log = Log::default();
        t.translate(0x99_0000_0000, &mut log).unwrap();
        let v = usize::from(n % 3);
        assert_eq!(
            log.0,
            [((REG + 8 * v as u64) as usize, 0x99_0000_0000)],
            "next_alloc {n}"
        );
        assert_eq!(t.next_alloc, ((v + 1) % 3) as u8, "next_alloc {n}");
        assert_eq!(t.records[v].ptr, 0x99_0000_0000);
    }
}

#[test]
fn refill_with_a_null_or_misaligned_register_changes_nothing() {
    for bad in [0u64, 1, 2, 3, 0x1002] {
        let mut t = table();
        t.records[1].reg_location = bad;
        t.next_alloc = 1;
        let before = t;
        let mut log = Log::default();
        assert_eq!(
            t.translate(0x99_0000_0000, &mut log),
            Err(RefillError::BadRegister {
                slot: 1,
                reg_location: bad
            })
        );
        assert_eq!(t, before);
        assert!(log.0.is_empty());
    }
    // Only the victim's register matters: a hit never looks at it.
    let mut t = table();
    t.records[0].reg_location = 0;
    assert_eq!(
        t.translate(0x40_0000_0001, &mut Log::default()),
        Ok(0x10_0001)
    );
}

#[cfg(target_pointer_width = "64")]
#[test]
fn register_address_is_pointer_width() {
    // On a 64-bit host all 64 bits form the address; the device uses the low 32.
    assert_eq!(
        RegisterAddress::new(0x1_0000_0000).map(|r| r.get()),
        Some(0x1_0000_0000)
    );
}

#[test]
fn lookup_reports_window_and_wide_local_without_side_effects() {
    let t = table();
    let before = t;
    assert_eq!(
        t.lookup(0x40_0030_0007),
        Some(Mapping {
            slot: 3,
            window: 0x40_0000,
            local: 0x40_0007
        })
    );
    assert_eq!(t.lookup(0x50_0000_0000), None);
    assert_eq!(t, before);
}

#[test]
fn byte_image_round_trips_at_the_contract_offsets() {
    let mut t = table();
    t.next_alloc = 0xA5;
    let b = t.to_bytes();
    assert_eq!(b.len(), offsets::CTX_SIZE);
    assert_eq!(
        u64::from_le_bytes(b[32..40].try_into().unwrap()),
        t.records[1].ptr
    );
    assert_eq!(
        u32::from_le_bytes(b[40..44].try_into().unwrap()),
        t.records[1].window
    );
    assert_eq!(
        u64::from_le_bytes(b[48..56].try_into().unwrap()),
        t.records[1].mask
    );
    assert_eq!(
        u64::from_le_bytes(b[56..64].try_into().unwrap()),
        t.records[1].reg_location
    );
    assert_eq!(b[160], 0xA5);
    assert_eq!(TranslationCtx::from_bytes(&b), t);
}

#[test]
fn empty_tags_never_match() {
    for a in &APERTURES {
        let m = a.mask();
        let tag = empty_tag(m);
        assert_ne!(
            tag & !m,
            0,
            "{}: the empty tag has a bit outside the mask",
            a.name
        );
    }
}

#[test]
fn initial_table_follows_the_aperture_rows() {
    let inputs = InitInputs {
        data_scratch_map: 0x0012_3400,
        hbm_scratch: 0x44_5566_7788,
    };
    let t = initial_table(&inputs);
    assert_eq!(t.next_alloc, 0);
    for (k, (r, a)) in t.records.iter().zip(APERTURES.iter()).enumerate() {
        assert_eq!(r.mask, a.mask(), "slot {k}");
        assert_eq!(r.reg_location, a.reg_location, "slot {k}");
        assert_eq!(*r, a.record(&inputs), "slot {k}");
    }
    // The TCM staging window: local [0x80000, 0x90000) (seed §9), in a reusable slot.
    let tcm = t.records.iter().position(|r| r.window == 0x8_0000).unwrap();
    assert!(tcm < 3);
    assert_eq!(!t.records[tcm].mask + 1, 0x1_0000);
    // Slots 0..2 start empty: nothing matches them before a refill.
    for k in 0..3 {
        assert_ne!(
            t.records[k].ptr & !t.records[k].mask,
            0,
            "slot {k} starts empty"
        );
    }
    // The HBM scratch address translates through slot 4.
    assert_eq!(t.find(inputs.hbm_scratch), Some(4));
    assert_eq!(
        t.lookup(inputs.hbm_scratch).unwrap().local,
        0x0300_0000 + 0x66_7788
    );
    // The data scratch map's SoC view translates back to its own local address.
    let soc = u64::from(inputs.data_scratch_map) + crate::init::DATA_SCRATCH_SOC_DELTA;
    assert_eq!(t.find(soc + 0x10), Some(3));
    assert_eq!(
        t.records[3].local(soc + 0x10),
        inputs.data_scratch_map + 0x10
    );
}

#[test]
fn initial_table_windows_do_not_overlap_locally() {
    let t = initial_table(&InitInputs {
        data_scratch_map: 0x0040_0000,
        hbm_scratch: 0,
    });
    let ranges: Vec<(u64, u64)> = t
        .records
        .iter()
        .map(|r| (u64::from(r.window), u64::from(r.window) + (!r.mask + 1)))
        .collect();
    for i in 0..5 {
        for j in i + 1..5 {
            let (a, b) = (ranges[i], ranges[j]);
            assert!(
                a.1 <= b.0 || b.1 <= a.0,
                "slots {i} and {j} overlap: {a:x?} {b:x?}"
            );
        }
    }
}
