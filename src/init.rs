//! The initial window table (docs/contract.md §3, `_init_translate_ctx`).
//!
//! `_init_translate_ctx` reads the engine's SoC base from the NX register block
//! ([`crate::regs::ENGINE_BASE_ADDR`]), derives `_sbuf_window` from it, and fills the five
//! records from [`APERTURES`]: three reusable 16 MiB windows, each programming its own
//! `MEM_WINDOW` register on a refill, and two pinned 64 MiB windows over SBUF and the HBM
//! scratch region. Every value of the table is in [`APERTURES`] or in the named constants
//! beside it, each with its tag (PUBLIC: the public decode of the same archive; DECIDED:
//! this project's choice, with the reason): a user holding the real object corrects the
//! table in one edit.

use crate::layout::{MapRecord, TranslationCtx, RECORDS};
use crate::regs::{RegPair, MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6};

/// Where a value comes from (the tags of docs/contract.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    /// Read by the seed page from the binary.
    Observed,
    /// From the public decode of the same archive (its symbol tables, constants and
    /// register map).
    Public,
    /// Derived by the seed page or by this project from observed facts.
    Inferred,
    /// This project's choice.
    Decided,
}

impl Provenance {
    /// The tag as docs/contract.md writes it (`PUBLIC`, ...). Inline, so that the device
    /// object, which never calls it, carries no copy.
    #[inline]
    pub const fn label(self) -> &'static str {
        match self {
            Provenance::Observed => "OBSERVED",
            Provenance::Public => "PUBLIC",
            Provenance::Inferred => "INFERRED",
            Provenance::Decided => "DECIDED",
        }
    }
}

/// What `_init_translate_ctx` reads: one register and one global of the rest of the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InitInputs {
    /// `ENGINE_BASE_ADDR` of the NX register block: the engine's SoC base address.
    pub engine_base: u64,
    /// Value of `extended_isa::sdk::hbm_scratch` (start_exit.o): SoC address of the HBM
    /// scratch region.
    pub hbm_scratch: u64,
}

/// How far below the engine base SBUF starts, in the SoC address space: 41 MiB. PUBLIC /
/// OBSERVED: the original forms it as `movi a7, -41; slli a7, a7, 20` and adds it to the
/// base, in 64 bits (the borrow crosses into the high word).
pub const SBUF_BELOW_ENGINE_BASE: u64 = 41 << 20;

/// `_sbuf_window` for an engine base: the SoC address of SBUF, `engine_base - 41 MiB`
/// (wrapping, 64-bit).
#[inline(always)]
pub const fn sbuf_window(engine_base: u64) -> u64 {
    engine_base.wrapping_sub(SBUF_BELOW_ENGINE_BASE)
}

/// 16 MiB: the size of the reusable windows, and the page the original's miss path maps
/// (its constant refill mask). PUBLIC.
pub const REFILL_WINDOW_SIZE: u64 = 1 << 24;

/// The mask of a 16 MiB window, `0xFFFF_FFFF_FF00_0000`.
pub const REFILL_MASK: u64 = !(REFILL_WINDOW_SIZE - 1);

/// 64 MiB: the size of the pinned SBUF and HBM scratch windows. PUBLIC.
pub const PINNED_WINDOW_SIZE: u64 = 1 << 26;

/// Where a record's initial SoC tag comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagSource {
    /// No SoC range yet: the record starts *empty* (a tag no address matches), so the
    /// first touch of any region refills it and programs its register. DECIDED: the
    /// original's initial tags of the reusable slots are run-time values nobody recorded;
    /// starting empty can cost one refill, never a wrong translation.
    Empty,
    /// SBUF: `_sbuf_window`, masked.
    SbufWindow,
    /// The HBM scratch region: `hbm_scratch`, masked.
    HbmScratch,
}

/// One row of the initial table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aperture {
    /// Name, for diagnostics and `ntx explain`.
    pub name: &'static str,
    /// Window size in bytes, a power of two; `mask = !(size - 1)`.
    pub size: u64,
    /// The NX-local base.
    pub window: u32,
    /// The initial SoC tag.
    pub tag: TagSource,
    /// The window register a refill of this record programs; `None` for the pinned
    /// records, whose `reg_location` is 0 (so that a refill of one, which `% 3` never
    /// picks, would trap instead of storing: DECIDED, the original leaves it unset).
    pub register: Option<RegPair>,
    /// How sure the row is.
    pub provenance: Provenance,
    /// Where its values come from.
    pub source: &'static str,
}

impl Aperture {
    /// A reusable 16 MiB window at NX `window`, programming `register`, empty at first.
    const fn reusable(
        name: &'static str,
        window: u32,
        register: RegPair,
        source: &'static str,
    ) -> Self {
        Aperture {
            name,
            size: REFILL_WINDOW_SIZE,
            window,
            tag: TagSource::Empty,
            register: Some(register),
            provenance: Provenance::Public,
            source,
        }
    }

    /// A pinned 64 MiB window at NX `window`, its tag from `tag`, no register.
    const fn pinned(name: &'static str, window: u32, tag: TagSource, source: &'static str) -> Self {
        Aperture {
            name,
            size: PINNED_WINDOW_SIZE,
            window,
            tag,
            register: None,
            provenance: Provenance::Public,
            source,
        }
    }
}

/// The five rows, slot by slot.
pub const APERTURES: [Aperture; RECORDS] = [
    Aperture::reusable(
        "reusable-0",
        0x0700_0000,
        MEM_WINDOW3,
        "public decode: reusable 16 MiB window at NX 0x0700_0000 through MEM_WINDOW3; \
         initial tag empty (DECIDED)",
    ),
    Aperture::reusable(
        "reusable-1",
        0x0900_0000,
        MEM_WINDOW5,
        "public decode: reusable 16 MiB window at NX 0x0900_0000 through MEM_WINDOW5; \
         initial tag empty (DECIDED)",
    ),
    Aperture::reusable(
        "reusable-2",
        0x0A00_0000,
        MEM_WINDOW6,
        "public decode: reusable 16 MiB window at NX 0x0A00_0000 through MEM_WINDOW6; \
         initial tag empty (DECIDED)",
    ),
    Aperture::pinned(
        "sbuf",
        0x8000_0000,
        TagSource::SbufWindow,
        "public decode: pinned 64 MiB SBUF window at NX 0x8000_0000, tag \
         _sbuf_window = ENGINE_BASE_ADDR - 41 MiB; reg_location 0 (DECIDED)",
    ),
    Aperture::pinned(
        "hbm-scratch",
        0x8400_0000,
        TagSource::HbmScratch,
        "public decode: pinned 64 MiB HBM scratch window at NX 0x8400_0000, tag \
         hbm_scratch & ~0x3FF_FFFF; reg_location 0 (DECIDED)",
    ),
];

impl Aperture {
    /// `!(size - 1)`.
    #[inline(always)]
    pub const fn mask(&self) -> u64 {
        !(self.size.wrapping_sub(1))
    }

    /// The record's `reg_location`: its register's `_LO` address, or 0.
    #[inline(always)]
    pub const fn reg_location(&self) -> u64 {
        match self.register {
            Some(r) => r.lo() as u64,
            None => 0,
        }
    }

    /// The record this row describes, for the given inputs.
    #[inline(always)]
    pub const fn record(&self, inputs: &InitInputs) -> MapRecord {
        let mask = self.mask();
        let ptr = match self.tag {
            TagSource::Empty => {
                return MapRecord::empty(self.window, mask, self.reg_location());
            }
            TagSource::SbufWindow => sbuf_window(inputs.engine_base) & mask,
            TagSource::HbmScratch => inputs.hbm_scratch & mask,
        };
        MapRecord {
            ptr,
            window: self.window,
            _pad: 0,
            mask,
            reg_location: self.reg_location(),
        }
    }
}

/// The initial table for `inputs` (a pure function): the five rows of [`APERTURES`],
/// `next_alloc = 0`.
#[inline(always)]
pub fn initial_table(inputs: &InitInputs) -> TranslationCtx {
    let mut ctx = TranslationCtx::default();
    for (r, a) in ctx.records.iter_mut().zip(APERTURES.iter()) {
        *r = a.record(inputs);
    }
    ctx
}
