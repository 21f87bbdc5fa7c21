//! The initial window table (contract §3, `_init_translate_ctx`; seed §5).
//!
//! The seed's table of constants was lost: only fragments of the builder survive (a
//! `movi a7, -41; slli a7, a7, 20` base delta, stores into records 3 and 4 fed by
//! `data_scratch_map` and `hbm_scratch`, the TCM staging range of §9, the refill's 16 MiB
//! page of §6). Every value below is therefore tagged, and every one lives in [`APERTURES`]
//! or in the few named constants next to it, so that a user holding the real object can
//! correct the table in one edit.
//!
//! The shape that *is* known: slots 0..2 are the reusable, preloaded apertures (one of them
//! the TCM staging window, local `[0x80000, 0x90000)`); slots 3 and 4 are pinned and built at
//! run time from the two imports; `next_alloc` starts at 0.

use crate::layout::{MapRecord, TranslationCtx, RECORDS};
use crate::symbols::Provenance;

/// What `_init_translate_ctx` reads from the rest of the image (start_exit.o).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InitInputs {
    /// NX-local address of the `data_scratch_map` object (only its address is used).
    pub data_scratch_map: u32,
    /// Value of `extended_isa::sdk::hbm_scratch`: SoC/HBM address of the HBM scratch region.
    pub hbm_scratch: u64,
}

/// Where a record's SoC tag comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagSource {
    /// No SoC range yet: the record starts *empty* (a tag no address can match) and is
    /// filled by the first refill that picks it.
    Empty,
    /// The SoC view of the data scratch map: `data_scratch_map + DATA_SCRATCH_SOC_DELTA`.
    DataScratchMap,
    /// The HBM scratch region: `hbm_scratch`.
    HbmScratch,
}

/// Where a record's NX-local window base comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowSource {
    /// A fixed NX-local address.
    Fixed(u32),
    /// The address of `data_scratch_map`, rounded down to the window size.
    DataScratchMap,
}

/// One row of the initial table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aperture {
    /// Human name, used by diagnostics and `ntx explain`.
    pub name: &'static str,
    /// Window size in bytes, a power of two; `mask = !(size - 1)`.
    pub size: u64,
    /// The NX-local base.
    pub window: WindowSource,
    /// The SoC tag.
    pub tag: TagSource,
    /// The SoC window register this record programs on a refill.
    pub reg_location: u64,
    /// How sure the row is.
    pub provenance: Provenance,
    /// Why these values.
    pub source: &'static str,
}

/// 16 MiB: the page a refill maps. INFERRED from seed §6, where the miss path masks the
/// address with an `0xFF000000`-like constant and forms the offset mask as `a11 >> 8`.
pub const REFILL_WINDOW_SIZE: u64 = 1 << 24;

/// The mask of a 16 MiB window, which the seed's miss path uses for every refill.
pub const REFILL_MASK: u64 = !(REFILL_WINDOW_SIZE - 1);

/// SoC address of NX-local address 0, for the data scratch window: DECIDED. The seed's
/// builder forms a base from `-41 << 20` (`0xFD70_0000`) and adds it to a scratch base
/// (§5, 0xb4..0xc4); read as `local = soc + 0xFD70_0000` (mod 2^32), the SoC address of a
/// local address is `local + 0x0290_0000`. LOW confidence.
pub const DATA_SCRATCH_SOC_DELTA: u64 = 0x0290_0000;

/// Base of the window register blocks (8 bytes each, one per record): DECIDED. The real
/// register map (`aws_neuron_isa_tpb_nx_map.h`, `regs.hpp`) is not in the seed.
pub const WINDOW_REG_BASE: u64 = 0xFFFE_0000;

/// The five rows, slot by slot.
pub const APERTURES: [Aperture; RECORDS] = [
    Aperture {
        name: "tcm-staging",
        size: 0x1_0000,
        window: WindowSource::Fixed(0x0008_0000),
        tag: TagSource::Empty,
        reg_location: WINDOW_REG_BASE,
        provenance: Provenance::Inferred,
        source: "seed §9: TensorTcmAccessor stages HBM<->TCM through local [0x80000, 0x90000), \
                 one of the static apertures; its SoC side is chosen at run time (empty)",
    },
    Aperture {
        name: "dynamic-1",
        size: REFILL_WINDOW_SIZE,
        window: WindowSource::Fixed(0x0100_0000),
        tag: TagSource::Empty,
        reg_location: WINDOW_REG_BASE + 8,
        provenance: Provenance::Decided,
        source: "seed §6: reusable 16 MiB refill window; local base chosen clear of the others",
    },
    Aperture {
        name: "dynamic-2",
        size: REFILL_WINDOW_SIZE,
        window: WindowSource::Fixed(0x0200_0000),
        tag: TagSource::Empty,
        reg_location: WINDOW_REG_BASE + 16,
        provenance: Provenance::Decided,
        source: "seed §6: reusable 16 MiB refill window; local base chosen clear of the others",
    },
    Aperture {
        name: "data-scratch",
        size: 1 << 20,
        window: WindowSource::DataScratchMap,
        tag: TagSource::DataScratchMap,
        reg_location: WINDOW_REG_BASE + 24,
        provenance: Provenance::Decided,
        source: "seed §5: record 3 is written from data_scratch_map (stores at +96/+100); \
                 1 MiB matches the 1 MiB granularity of the -41<<20 delta",
    },
    Aperture {
        name: "hbm-scratch",
        size: REFILL_WINDOW_SIZE,
        window: WindowSource::Fixed(0x0300_0000),
        tag: TagSource::HbmScratch,
        reg_location: WINDOW_REG_BASE + 32,
        provenance: Provenance::Decided,
        source: "seed §5: record 4 is written from hbm_scratch (store at +144)",
    },
];

/// The tag of [`MapRecord::empty`]: the lowest bit outside `mask`.
#[inline(always)]
pub const fn empty_tag(mask: u64) -> u64 {
    MapRecord::empty(0, mask, 0).ptr
}

impl Aperture {
    /// `!(size - 1)`.
    #[inline(always)]
    pub const fn mask(&self) -> u64 {
        !(self.size.wrapping_sub(1))
    }

    /// The record this row describes, for the given inputs.
    #[inline(always)]
    pub fn record(&self, inputs: &InitInputs) -> MapRecord {
        let mask = self.mask();
        let window = match self.window {
            WindowSource::Fixed(w) => w,
            WindowSource::DataScratchMap => inputs.data_scratch_map & (mask as u32),
        };
        let ptr = match self.tag {
            TagSource::Empty => empty_tag(mask),
            TagSource::DataScratchMap => {
                (u64::from(inputs.data_scratch_map) + DATA_SCRATCH_SOC_DELTA) & mask
            }
            TagSource::HbmScratch => inputs.hbm_scratch & mask,
        };
        MapRecord {
            ptr,
            window,
            _pad: 0,
            mask,
            reg_location: self.reg_location,
        }
    }
}

/// The initial table for `inputs`: a pure function.
#[inline(always)]
pub fn initial_table(inputs: &InitInputs) -> TranslationCtx {
    let mut ctx = TranslationCtx::default();
    for (r, a) in ctx.records.iter_mut().zip(APERTURES.iter()) {
        *r = a.record(inputs);
    }
    ctx.next_alloc = 0;
    ctx
}
