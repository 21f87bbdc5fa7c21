//! Deterministic generators of window tables and address streams.
//!
//! One generator serves the host differential tests and the device (qemu) runs, so that the
//! three implementations are checked on the same vectors. Register locations are given as
//! indices into a register bank (one 8-byte block per record); whoever runs a vector places
//! the bank and turns indices into addresses.

use neuron_translate::init::APERTURES;
use neuron_translate::init::REFILL_MASK;
use neuron_translate::layout::{RECORDS, REUSABLE_SLOTS};
use neuron_translate::tables::{Extent, SlotUse, TableBuilder, Window};
use neuron_translate::{MapRecord, TranslationCtx};

/// SplitMix64: tiny, fast, and the same everywhere.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0; the tiny modulo bias does not matter here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

/// How the windows of a generated table differ from each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableShape {
    /// Tags differ in the low word (the usual case: windows below 4 GiB apart).
    LowWord,
    /// Tags differ only in the high word (windows exactly 4 GiB multiples apart).
    HighWordOnly,
    /// Anything: random masks (contiguous or not), random tags, overlaps.
    Wild,
}

/// A table whose register locations are bank indices (record k uses block k).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableVector {
    /// The table, with `reg_location` = block index (0..5) for every record.
    pub table: TranslationCtx,
    /// Addresses to translate or look up, in order.
    pub ops: Vec<LibCall>,
}

/// One call of the library (a differential test's step).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LibCall {
    /// `neuron_translate(ctx, addr)`.
    Translate(u64),
    /// `neuron_translate_mapping_lookup(ctx, addr, ..)`.
    Lookup(u64),
}

impl LibCall {
    /// The address of the call.
    pub fn addr(self) -> u64 {
        match self {
            LibCall::Translate(a) | LibCall::Lookup(a) => a,
        }
    }
}

fn contiguous_mask(rng: &mut Rng, min_bits: u64, max_bits: u64) -> u64 {
    let bits = min_bits + rng.below(max_bits - min_bits + 1);
    if bits >= 64 {
        0
    } else {
        !((1u64 << bits) - 1)
    }
}

/// A random table of the given shape. Reusable slots (0..3) keep the seed's refill mask
/// unless the shape is [`TableShape::Wild`], so that refills are comparable with the seed's
/// model (which always maps a 16 MiB page).
pub fn table(rng: &mut Rng, shape: TableShape) -> TranslationCtx {
    let mut t = TranslationCtx::default();
    let hi_base = rng.next_u64() & 0xFFFF_FF00_0000_0000;
    for (k, r) in t.records.iter_mut().enumerate() {
        let mask = match shape {
            TableShape::Wild if rng.chance(1, 4) => rng.next_u64(),
            TableShape::Wild => contiguous_mask(rng, 0, 64),
            _ if k < usize::from(REUSABLE_SLOTS) => REFILL_MASK,
            _ => contiguous_mask(rng, 12, 28),
        };
        let base = match shape {
            TableShape::LowWord => hi_base | (rng.next_u64() & 0xFFFF_FFFF),
            TableShape::HighWordOnly => (hi_base + ((k as u64 + 1) << 32)) | 0x1234_5000,
            TableShape::Wild => rng.next_u64(),
        };
        let ptr = if shape == TableShape::Wild && rng.chance(1, 8) {
            rng.next_u64()
        } else {
            base & mask
        };
        let window = match shape {
            TableShape::Wild => rng.next_u64() as u32,
            _ => 0x0010_0000u32.wrapping_mul(k as u32 + 1) | (rng.next_u64() as u32 & 0xF000_0000),
        };
        *r = MapRecord {
            ptr,
            window,
            _pad: 0,
            mask,
            reg_location: k as u64,
        };
    }
    t.next_alloc = match shape {
        TableShape::Wild => rng.next_u64() as u8,
        _ => rng.below(3) as u8,
    };
    t
}

/// An address near the windows of `t`: inside one, just outside one, or anywhere.
pub fn address(rng: &mut Rng, t: &TranslationCtx) -> u64 {
    let r = &t.records[rng.below(RECORDS as u64) as usize];
    match rng.below(8) {
        0..=3 => (r.ptr & r.mask) | (rng.next_u64() & !r.mask),
        4 => (r.ptr & r.mask).wrapping_add(!r.mask).wrapping_add(1) | (rng.next_u64() & !r.mask),
        5 => (r.ptr & r.mask).wrapping_sub(1),
        6 => (r.ptr ^ (1u64 << rng.below(64))) | (rng.next_u64() & !r.mask),
        _ => rng.next_u64(),
    }
}

/// A vector: a table and `n` calls, mostly translates.
pub fn vector(rng: &mut Rng, shape: TableShape, n: usize) -> TableVector {
    let table = table(rng, shape);
    let ops = (0..n)
        .map(|_| {
            let a = address(rng, &table);
            if rng.chance(1, 4) {
                LibCall::Lookup(a)
            } else {
                LibCall::Translate(a)
            }
        })
        .collect();
    TableVector { table, ops }
}

/// Tables per shape and calls per table of the standard set.
pub const STANDARD: (usize, usize) = (200, 64);

/// The standard set of vectors every implementation is run on: `per_shape` tables of each
/// shape, `ops` calls each, from a fixed seed.
pub fn standard_vectors(per_shape: usize, ops: usize) -> Vec<(TableShape, TableVector)> {
    let mut rng = Rng(0x6E65_7572_6F6E_2D74); // "neuron-t"
    let mut out = Vec::new();
    for shape in [
        TableShape::LowWord,
        TableShape::HighWordOnly,
        TableShape::Wild,
    ] {
        for _ in 0..per_shape {
            out.push((shape, vector(&mut rng, shape, ops)));
        }
    }
    out
}

/// Five disjoint 1 MiB windows at SoC `0x40_0000_0000 + k MiB`, local `0x10_0000 * (k + 1)`,
/// with the given register locations: the table most unit tests of the contract start from.
pub fn disjoint_table(regs: [u64; RECORDS]) -> TranslationCtx {
    let mut t = TranslationCtx::empty();
    for (k, r) in t.records.iter_mut().enumerate() {
        *r = MapRecord {
            ptr: 0x40_0000_0000 + ((k as u64) << 20),
            window: 0x10_0000 * (k as u32 + 1),
            _pad: 0,
            mask: !0xF_FFFF,
            reg_location: regs[k],
        };
    }
    t
}

/// A window for examples and tests: slot `slot` used as its slot number says, with the
/// register the original's table gives that slot (`MEM_WINDOW3/5/6` for slots 0..2, none
/// for the pinned ones).
pub fn sample_window(slot: usize, soc_base: u64, size: u64, local_base: u32) -> Window {
    Window {
        slot,
        kind: SlotUse::of(slot),
        soc_base: Some(soc_base),
        extent: Extent::Size(size),
        local_base,
        reg_location: APERTURES.get(slot).map_or(0, |a| a.reg_location()),
    }
}

/// The windows of [`sample_table`], in slot order.
pub fn sample_windows() -> [Window; 4] {
    [
        sample_window(0, 0x40_0000_0000, 1 << 16, 0x8_0000),
        sample_window(1, 0x40_0100_0000, 1 << 24, 0x100_0000),
        sample_window(2, 0x40_0200_0000, 1 << 24, 0x200_0000),
        sample_window(4, 0x42_0000_0000, 1 << 24, 0x300_0000),
    ]
}

/// A valid table for examples and tests: a 64 KiB and two 16 MiB reusable windows and a
/// pinned one; slot 3 left empty.
pub fn sample_table() -> TableBuilder {
    sample_windows()
        .into_iter()
        .fold(TableBuilder::new(), TableBuilder::window)
}

/// One of the three table shapes, at random.
pub fn any_shape(rng: &mut Rng) -> TableShape {
    [
        TableShape::LowWord,
        TableShape::HighWordOnly,
        TableShape::Wild,
    ][rng.below(3) as usize]
}

/// A span request's length: 0, under 64, under 16 MiB or any, a quarter each.
pub fn span_len(rng: &mut Rng) -> u64 {
    match rng.below(4) {
        0 => 0,
        1 => rng.below(64),
        2 => rng.below(1 << 24),
        _ => rng.next_u64(),
    }
}
