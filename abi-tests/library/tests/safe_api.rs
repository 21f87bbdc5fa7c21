//! The safe API against docs/contract.md, one test per row of §3 and §4 that the safe API
//! carries. The FFI rows (NULL pointers, traps, MMIO store order, `_ctx`) are tested on the
//! exported symbols in ffi_contract.rs and init_global.rs.

use neuron_translate::init::{
    initial_table, sbuf_window, InitInputs, Provenance, APERTURES, REFILL_MASK,
};
use neuron_translate::layout::{offsets, MapRecord, TranslationCtx, REUSABLE_SLOTS};
use neuron_translate::translate::{Mapping, Refill, RefillError};
use neuron_translate::window_reg::RegisterAddress;
use neuron_translate::RegisterLog as Log;
use nt_support::gen::disjoint_table;

const REG: u64 = 0x1000;

/// The disjoint table with registers at `REG + 8k`.
fn table() -> TranslationCtx {
    disjoint_table(core::array::from_fn(|k| REG + 8 * k as u64))
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
    // The lookup reports the SoC range, which the local wrap does not touch.
    let m = t.lookup(0x40_0020_0020).unwrap();
    assert_eq!((m.start, m.end), (0x40_0020_0000, 0x40_002F_FFFF));
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
    // The SoC range spans the high word: end = tag + !mask, all 64 bits.
    let m = t.lookup(a).unwrap();
    assert_eq!((m.start, m.end), (0, (1u64 << 40) - 1));
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
        let v = usize::from(n % REUSABLE_SLOTS);
        assert_eq!(
            log.0,
            [((REG + 8 * v as u64) as usize, 0x99_0000_0000)],
            "next_alloc {n}"
        );
        assert_eq!(
            t.next_alloc,
            ((v + 1) % usize::from(REUSABLE_SLOTS)) as u8,
            "next_alloc {n}"
        );
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
fn lookup_reports_the_windows_soc_range_without_side_effects() {
    let t = table();
    let before = t;
    assert_eq!(
        t.lookup(0x40_0030_0007),
        Some(Mapping {
            slot: 3,
            start: 0x40_0030_0000,
            end: 0x40_003F_FFFF,
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
        let tag = MapRecord::empty(a.window, m, 0).ptr;
        assert_ne!(
            tag & !m,
            0,
            "{}: the empty tag has a bit outside the mask",
            a.name
        );
    }
}

/// An engine base whose SBUF lies 41 MiB below it, across a 4 GiB boundary: the borrow of
/// `engine_base - 41 MiB` reaches the high word.
const ENGINE_BASE: u64 = 0x28_0100_0000;

#[test]
fn sbuf_window_is_41_mib_below_the_engine_base_in_64_bits() {
    assert_eq!(sbuf_window(ENGINE_BASE), 0x27_FE70_0000);
    assert_eq!(sbuf_window(0x1_0000_0000), 0xFD70_0000);
    assert_eq!(sbuf_window(0), 0u64.wrapping_sub(41 << 20), "wraps");
}

#[test]
fn initial_table_is_the_originals() {
    let inputs = InitInputs {
        engine_base: ENGINE_BASE,
        hbm_scratch: 0x44_5566_7788,
    };
    let t = initial_table(&inputs);
    assert_eq!(t.next_alloc, 0);
    assert_eq!(t._pad, [0; 7]);
    // The rows, record by record (docs/contract.md §3).
    let rows: [(u32, u64, u64); 5] = [
        (0x0700_0000, 0xFFFF_FFFF_FF00_0000, 0x0010_0218),
        (0x0900_0000, 0xFFFF_FFFF_FF00_0000, 0x0010_0228),
        (0x0A00_0000, 0xFFFF_FFFF_FF00_0000, 0x0010_0230),
        (0x8000_0000, 0xFFFF_FFFF_FC00_0000, 0),
        (0x8400_0000, 0xFFFF_FFFF_FC00_0000, 0),
    ];
    for (k, (r, (window, mask, reg))) in t.records.iter().zip(rows).enumerate() {
        assert_eq!(
            (r.window, r.mask, r.reg_location, r._pad),
            (window, mask, reg, 0),
            "slot {k}"
        );
        assert_eq!(*r, APERTURES[k].record(&inputs), "slot {k}");
    }
    // Slots 0..2 start empty: nothing matches them before a refill.
    for k in 0..usize::from(REUSABLE_SLOTS) {
        assert!(t.records[k].is_empty(), "slot {k} starts empty");
    }
    // SBUF: 64 MiB from _sbuf_window rounded down, at NX 0x8000_0000.
    assert_eq!(t.records[3].ptr, 0x27_FC00_0000);
    let sbuf = sbuf_window(ENGINE_BASE);
    assert_eq!(t.find(sbuf + 0x10), Some(3));
    assert_eq!(t.hit(sbuf + 0x10), Some(0x8000_0000 + 0x270_0010));
    // HBM scratch: 64 MiB from hbm_scratch rounded down, at NX 0x8400_0000.
    assert_eq!(t.records[4].ptr, 0x44_5400_0000);
    assert_eq!(t.find(inputs.hbm_scratch), Some(4));
    assert_eq!(t.hit(inputs.hbm_scratch), Some(0x8400_0000 + 0x166_7788));
    assert_eq!(
        t.lookup(inputs.hbm_scratch),
        Some(Mapping {
            slot: 4,
            start: 0x44_5400_0000,
            end: 0x44_57FF_FFFF
        })
    );
}

#[test]
fn the_contracts_worked_example_refills_slot_0_through_mem_window3() {
    // docs/contract.md §5: translate(0x28_0201_2345) on a fresh table takes slot 0,
    // writes 0x28 to MEM_WINDOW3_HI, then 0x0200_0000 to MEM_WINDOW3_LO, returns
    // 0x0701_2345.
    let mut t = initial_table(&InitInputs {
        engine_base: 0x40_0000_0000,
        hbm_scratch: 0x50_0000_0000,
    });
    let mut log = Log::default();
    assert_eq!(t.translate(0x28_0201_2345, &mut log), Ok(0x0701_2345));
    assert_eq!(log.0, [(0x0010_0218, 0x28_0200_0000)]);
    assert_eq!(t.records[0].ptr, 0x28_0200_0000);
    assert_eq!(t.next_alloc, 1);
    // The next two distinct regions take slots 1 and 2, through MEM_WINDOW5 and 6.
    assert_eq!(t.translate(0x28_0300_0001, &mut log), Ok(0x0900_0001));
    assert_eq!(t.translate(0x28_0400_0002, &mut log), Ok(0x0A00_0002));
    assert_eq!(
        log.0[1..],
        [(0x0010_0228, 0x28_0300_0000), (0x0010_0230, 0x28_0400_0000)]
    );
    assert_eq!(t.next_alloc, 0);
}

#[test]
fn register_rows_name_the_window_registers() {
    use neuron_translate::regs::{
        pair_at, ENGINE_BASE_ADDR, MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6,
    };
    for (k, reg) in [MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6].iter().enumerate() {
        assert_eq!(APERTURES[k].register, Some(*reg), "slot {k}");
        assert_eq!(pair_at(APERTURES[k].reg_location()), Some(*reg));
        assert_eq!(reg.hi(), reg.lo() + 4);
    }
    assert_eq!(APERTURES[3].register, None);
    assert_eq!(APERTURES[4].reg_location(), 0);
    assert_eq!(
        pair_at(u64::from(ENGINE_BASE_ADDR.lo())),
        Some(ENGINE_BASE_ADDR)
    );
    assert_eq!(
        pair_at(0x0010_021C),
        None,
        "a _HI address is not a pair's start"
    );
}

#[test]
fn initial_table_windows_do_not_overlap_locally() {
    let t = initial_table(&InitInputs::default());
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

#[test]
fn the_refill_error_says_which_slot_and_register() {
    let e = RefillError::BadRegister {
        slot: 2,
        reg_location: 0x10_0231,
    };
    assert_eq!(
        e.to_string(),
        "refill victim slot 2 has an unusable register location 0x100231 (null or not 4-aligned)"
    );
}

#[test]
fn an_empty_record_matches_no_address_whatever_its_mask() {
    // Masks with one zero bit, contiguous ones of every width, and scattered ones: the empty
    // tag has a bit outside the mask, so `addr & mask` can never equal it.
    let mut masks: Vec<u64> = (0..64).map(|b| !(1u64 << b)).collect();
    masks.extend((0..64).map(|k| !((1u64 << k) - 1)));
    masks.extend([
        0,
        0xFFFF_0000_FFFF_0000,
        0x8000_0000_0000_0001,
        0x5555_5555_5555_5555,
    ]);
    for mask in masks {
        let r = MapRecord::empty(0x1000, mask, 0);
        assert_eq!((r.window, r.mask), (0x1000, mask));
        if mask == u64::MAX {
            // No bit outside the mask: the tag is 0, which matches address 0 alone.
            assert_eq!(r.ptr, 0);
            continue;
        }
        assert!(r.is_empty(), "mask {mask:#x}: tag {:#x}", r.ptr);
        assert_ne!(r.ptr & !mask, 0);
        assert_eq!(r.ptr.count_ones(), 1, "the lowest bit outside the mask");
        assert_eq!(r.ptr, (!mask) & (!mask).wrapping_neg(), "mask {mask:#x}");
        for a in [0, u64::MAX, r.ptr, r.ptr | mask, !r.ptr, mask, !mask] {
            assert!(!r.matches(a), "mask {mask:#x} matched {a:#x}");
        }
    }
}

#[test]
fn provenance_labels_are_the_contracts_tags() {
    let labels = [
        Provenance::Observed,
        Provenance::Public,
        Provenance::Inferred,
        Provenance::Decided,
    ]
    .map(Provenance::label);
    assert_eq!(labels, ["OBSERVED", "PUBLIC", "INFERRED", "DECIDED"]);
    assert!(APERTURES.iter().all(|a| a.provenance.label() == "PUBLIC"));
}

#[test]
fn a_hand_made_refill_of_no_record_changes_nothing() {
    // Refill's fields are public, so a caller can make one whose slot is not a record:
    // apply_refill must then touch neither the table (whose next_alloc and padding follow
    // the records) nor the registers.
    for slot in [5, 6, usize::MAX] {
        let mut t = table();
        let before = t;
        let plan = Refill {
            slot,
            tag: 0x77_7700_0000,
            register: RegisterAddress::new(0x1000).unwrap(),
            local: 0,
            next_alloc: 9,
        };
        let mut log = Log::default();
        t.apply_refill(&plan, &mut log);
        assert_eq!(t, before, "slot {slot}");
        assert!(log.0.is_empty(), "slot {slot}");
    }
}
