//! [`TableBuilder`]: a table from a description of its windows, refused (with every
//! reason) when the device would misuse it.

use std::fmt;
use std::vec::Vec;

use super::rules::{self, Breach};
use super::{size_of_mask, SlotUse};
use crate::init::{InitInputs, TagSource, APERTURES};
use crate::layout::{
    mask_is_contiguous, offsets, MapRecord, TranslationCtx, RECORDS, REUSABLE_SLOTS,
};

/// How big a window is: a size (a power of two) or, equivalently, its mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extent {
    /// Bytes, a power of two.
    Size(u64),
    /// The record's mask; must be contiguous (`!(size - 1)`).
    Mask(u64),
}

/// One window, as host code describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// The slot, 0..5.
    pub slot: usize,
    /// What the window is meant to be; must agree with the slot.
    pub kind: SlotUse,
    /// First SoC address of the window; `None` for a window with no SoC range yet (an
    /// *empty* record: no address matches it, so the first touch of any region refills it).
    pub soc_base: Option<u64>,
    /// Its size.
    pub extent: Extent,
    /// First NX-local address.
    pub local_base: u32,
    /// The SoC window register a refill of this slot programs.
    pub reg_location: u64,
}

impl Window {
    /// The record this window is (its slot already checked to be in range), with every
    /// problem of the window on its own pushed to `errors`; `None` when it has no usable
    /// size.
    fn record(&self, errors: &mut Vec<BuildError>) -> Option<MapRecord> {
        let slot = self.slot;
        match (self.kind, SlotUse::of(slot)) {
            (SlotUse::Pinned, SlotUse::Reusable) => {
                errors.push(BuildError::PinnedInReusableSlot { slot })
            }
            (SlotUse::Reusable, SlotUse::Pinned) => {
                errors.push(BuildError::ReusableInPinnedSlot { slot })
            }
            _ => {}
        }
        let reg_location = self.reg_location;
        // A register past 32 bits is refused for that alone (what the device would make of
        // its low bits is beside the point).
        let register = rules::register_past_32_bits(slot, reg_location)
            .or_else(|| rules::register_unusable(slot, reg_location));
        errors.extend(register.map(BuildError::Rule));
        let mask = match self.extent {
            Extent::Size(size) if size == 0 || !size.is_power_of_two() => {
                errors.push(BuildError::SizeNotPowerOfTwo { slot, size });
                return None;
            }
            Extent::Size(size) => !(size - 1),
            Extent::Mask(mask) if !mask_is_contiguous(mask) => {
                errors.push(BuildError::MaskNotContiguous { slot, mask });
                return None;
            }
            Extent::Mask(mask) => mask,
        };
        let size = size_of_mask(mask);
        if let Some(soc_base) = self.soc_base.filter(|b| b & !mask != 0) {
            errors.push(BuildError::SocBaseMisaligned {
                slot,
                soc_base,
                size,
            });
        }
        let local_base = self.local_base;
        let local = [
            rules::local_base_misaligned(slot, local_base, size),
            rules::local_range_past_32_bits(slot, local_base, size),
        ];
        errors.extend(local.into_iter().flatten().map(BuildError::Rule));
        Some(match self.soc_base {
            Some(soc_base) => MapRecord {
                ptr: soc_base & mask,
                window: local_base,
                _pad: 0,
                mask,
                reg_location,
            },
            None => MapRecord::empty(local_base, mask, reg_location),
        })
    }
}

/// Why a table cannot be built. Every variant names the slot(s) concerned; the fields
/// are the offending values.
#[allow(missing_docs)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildError {
    /// A slot number of 5 or more.
    SlotOutOfRange { slot: usize },
    /// Two windows for one slot.
    DuplicateSlot { slot: usize },
    /// A size of 0 or not a power of two.
    SizeNotPowerOfTwo { slot: usize, size: u64 },
    /// A mask that is not `!(2^k - 1)`.
    MaskNotContiguous { slot: usize, mask: u64 },
    /// The SoC base is not a multiple of the size.
    SocBaseMisaligned {
        slot: usize,
        soc_base: u64,
        size: u128,
    },
    /// A window meant to be pinned in a reusable slot (a refill would evict it).
    PinnedInReusableSlot { slot: usize },
    /// A window meant to be reusable in a pinned slot (no refill ever takes it).
    ReusableInPinnedSlot { slot: usize },
    /// A reusable slot left undescribed: a refill that picks it would trap.
    ReusableSlotMissing { slot: usize },
    /// A rule `describe` reports too: a register the device cannot use, a local base or
    /// range that does not fit, overlapping windows, a cursor out of range.
    Rule(Breach),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use BuildError::*;
        match *self {
            SlotOutOfRange { slot } => write!(f, "slot {slot}: there are only slots 0 to 4"),
            DuplicateSlot { slot } => write!(f, "slot {slot}: described twice"),
            SizeNotPowerOfTwo { slot, size } => {
                write!(f, "slot {slot}: size {size:#x} is not a power of two")
            }
            MaskNotContiguous { slot, mask } => {
                write!(
                    f,
                    "slot {slot}: mask {mask:#018x} is not contiguous (it must be !(size - 1))"
                )
            }
            SocBaseMisaligned {
                slot,
                soc_base,
                size,
            } => {
                write!(f, "slot {slot}: SoC base {soc_base:#x} is not aligned to the window size {size:#x}")
            }
            PinnedInReusableSlot { slot } => {
                write!(f, "slot {slot}: a pinned window in a reusable slot (slots 0-2 are retargeted by refills)")
            }
            ReusableInPinnedSlot { slot } => {
                write!(
                    f,
                    "slot {slot}: a reusable window in a pinned slot (refills only use slots 0-2)"
                )
            }
            ReusableSlotMissing { slot } => {
                write!(
                    f,
                    "slot {slot}: reusable slot not described; a refill that picks it would trap"
                )
            }
            Rule(breach) => write!(f, "{breach}"),
        }
    }
}

/// All the reasons a table cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildErrors(pub Vec<BuildError>);

impl fmt::Display for BuildErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for BuildErrors {}

/// Builds the table the device reads.
#[derive(Debug, Clone, Default)]
pub struct TableBuilder {
    windows: Vec<Window>,
    next_alloc: u8,
}

impl TableBuilder {
    /// An empty builder (cursor 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a window.
    pub fn window(mut self, w: Window) -> Self {
        self.windows.push(w);
        self
    }

    /// Sets the refill cursor (0..3).
    pub fn next_alloc(mut self, n: u8) -> Self {
        self.next_alloc = n;
        self
    }

    /// The original's initial table (docs/contract.md §3), as `_init_translate_ctx` builds it
    /// for `inputs`: one window per row of [`crate::init::APERTURES`], the reusable ones
    /// empty. `TableBuilder::original(i).build()` equals [`crate::initial_table`]`(i)`
    /// unless the two pinned windows overlap (then it says so).
    pub fn original(inputs: &InitInputs) -> Self {
        let mut b = TableBuilder::new();
        for (slot, a) in APERTURES.iter().enumerate() {
            let record = a.record(inputs);
            b = b.window(Window {
                slot,
                kind: SlotUse::of(slot),
                soc_base: (a.tag != TagSource::Empty).then_some(record.ptr),
                extent: Extent::Size(a.size),
                local_base: a.window,
                reg_location: a.reg_location(),
            });
        }
        b
    }

    /// The table, or every reason it cannot be built.
    pub fn build(&self) -> Result<TranslationCtx, BuildErrors> {
        let mut errors = Vec::new();
        let mut t = TranslationCtx::empty();
        let mut described = [false; RECORDS];
        let mut placed: Vec<(usize, MapRecord)> = Vec::new();
        for w in &self.windows {
            let slot = w.slot;
            if slot >= RECORDS {
                errors.push(BuildError::SlotOutOfRange { slot });
                continue;
            }
            if described[slot] {
                errors.push(BuildError::DuplicateSlot { slot });
                continue;
            }
            described[slot] = true;
            let Some(r) = w.record(&mut errors) else {
                continue;
            };
            for (other, o) in &placed {
                errors.extend(rules::overlap((*other, o), (slot, &r)).map(BuildError::Rule));
            }
            placed.push((slot, r));
            t.records[slot] = r;
        }
        for (slot, d) in described
            .iter()
            .enumerate()
            .take(usize::from(REUSABLE_SLOTS))
        {
            if !d {
                errors.push(BuildError::ReusableSlotMissing { slot });
            }
        }
        errors.extend(rules::next_alloc_out_of_range(self.next_alloc).map(BuildError::Rule));
        t.next_alloc = self.next_alloc;
        if errors.is_empty() {
            Ok(t)
        } else {
            Err(BuildErrors(errors))
        }
    }

    /// The exact 168-byte little-endian image the device reads.
    pub fn build_image(&self) -> Result<[u8; offsets::CTX_SIZE], BuildErrors> {
        self.build().map(|t| t.to_bytes())
    }
}
