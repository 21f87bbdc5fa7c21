//! The host side of the contract (feature `std`): the device reads a 168-byte table that
//! host code fills. [`TableBuilder`] makes such a table from a description of its windows
//! and refuses tables the device would misuse; [`describe`] turns any 168 bytes back into a
//! description, listing what is wrong with them.

use std::fmt;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

pub mod trace;

/// The machine the host model simulates unless told otherwise, and the inputs `ntx
/// simulate` builds the original table from: HBM at 256 GiB, 1 GiB of it, the HBM scratch
/// window in its top 64 MiB, and an engine base that puts SBUF at `0x50_0000_0000`.
pub mod model_defaults {
    use crate::init::{PINNED_WINDOW_SIZE, SBUF_BELOW_ENGINE_BASE};

    /// First SoC address of the HBM region.
    pub const HBM_BASE: u64 = 0x40_0000_0000;
    /// Its size.
    pub const HBM_SIZE: u64 = 1 << 30;
    /// `extended_isa::sdk::hbm_scratch`.
    pub const HBM_SCRATCH: u64 = HBM_BASE + HBM_SIZE - PINNED_WINDOW_SIZE;
    /// `ENGINE_BASE_ADDR`.
    pub const ENGINE_BASE: u64 = 0x50_0000_0000 + SBUF_BELOW_ENGINE_BASE;
}

use crate::init::{Aperture, InitInputs, TagSource, APERTURES};
use crate::layout::{
    mask_is_contiguous, offsets, MapRecord, TranslationCtx, RECORDS, REUSABLE_SLOTS,
};
use crate::regs::{pair_at, RegPair};
use crate::window_reg::RegisterAddress;

/// How the device uses a slot: 0..3 are refilled round-robin, 3 and 4 never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotUse {
    /// Slots 0, 1, 2: a refill may retarget them (and program their register).
    Reusable,
    /// Slots 3, 4: never evicted.
    Pinned,
}

impl SlotUse {
    /// The use of `slot` (0..5).
    pub fn of(slot: usize) -> SlotUse {
        if slot < usize::from(REUSABLE_SLOTS) {
            SlotUse::Reusable
        } else {
            SlotUse::Pinned
        }
    }
}

impl fmt::Display for SlotUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SlotUse::Reusable => "reusable",
            SlotUse::Pinned => "pinned",
        })
    }
}

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
        if reg_location > u64::from(u32::MAX) {
            errors.push(BuildError::RegisterPast32Bits { slot, reg_location });
        } else if SlotUse::of(slot) == SlotUse::Reusable
            && RegisterAddress::on_device(reg_location).is_none()
        {
            errors.push(BuildError::RegisterUnusable { slot, reg_location });
        }
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
        if u64::from(local_base) & !mask != 0 {
            errors.push(BuildError::LocalBaseMisaligned {
                slot,
                local_base,
                size,
            });
        }
        if u128::from(local_base) + size > 1u128 << 32 {
            errors.push(BuildError::LocalRangePast32Bits {
                slot,
                local_base,
                size,
            });
        }
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
    /// The local base is not a multiple of the size.
    LocalBaseMisaligned {
        slot: usize,
        local_base: u32,
        size: u128,
    },
    /// The local range ends past 2^32.
    LocalRangePast32Bits {
        slot: usize,
        local_base: u32,
        size: u128,
    },
    /// Two windows share SoC addresses.
    SocOverlap { first: usize, second: usize },
    /// A window meant to be pinned in a reusable slot (a refill would evict it).
    PinnedInReusableSlot { slot: usize },
    /// A window meant to be reusable in a pinned slot (no refill ever takes it).
    ReusableInPinnedSlot { slot: usize },
    /// A reusable slot without a usable register: a refill that picks it would trap.
    RegisterUnusable { slot: usize, reg_location: u64 },
    /// A register location with high bits set: the device's addresses are 32-bit.
    RegisterPast32Bits { slot: usize, reg_location: u64 },
    /// A reusable slot left undescribed: a refill that picks it would trap.
    ReusableSlotMissing { slot: usize },
    /// A cursor of 3 or more.
    NextAllocOutOfRange { next_alloc: u8 },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use BuildError::*;
        match *self {
            SlotOutOfRange { slot } => write!(f, "slot {slot}: there are only slots 0 to 4"),
            DuplicateSlot { slot } => write!(f, "slot {slot}: described twice"),
            SizeNotPowerOfTwo { slot, size } => write!(f, "slot {slot}: size {size:#x} is not a power of two"),
            MaskNotContiguous { slot, mask } => {
                write!(f, "slot {slot}: mask {mask:#018x} is not contiguous (it must be !(size - 1))")
            }
            SocBaseMisaligned { slot, soc_base, size } => {
                write!(f, "slot {slot}: SoC base {soc_base:#x} is not aligned to the window size {size:#x}")
            }
            LocalBaseMisaligned { slot, local_base, size } => {
                write!(f, "slot {slot}: local base {local_base:#x} is not aligned to the window size {size:#x}")
            }
            LocalRangePast32Bits { slot, local_base, size } => write!(
                f,
                "slot {slot}: local range {local_base:#x} + {size:#x} ends past the 32-bit local address space"
            ),
            SocOverlap { first, second } => {
                write!(f, "slots {first} and {second}: their SoC ranges overlap (slot {first} would shadow slot {second})")
            }
            PinnedInReusableSlot { slot } => {
                write!(f, "slot {slot}: a pinned window in a reusable slot (slots 0-2 are retargeted by refills)")
            }
            ReusableInPinnedSlot { slot } => {
                write!(f, "slot {slot}: a reusable window in a pinned slot (refills only use slots 0-2)")
            }
            RegisterUnusable { slot, reg_location } => write!(
                f,
                "slot {slot}: register location {reg_location:#x} is null or not 4-aligned; a refill of this slot would trap"
            ),
            RegisterPast32Bits { slot, reg_location } => write!(
                f,
                "slot {slot}: register location {reg_location:#x} does not fit the device's 32-bit address space"
            ),
            ReusableSlotMissing { slot } => {
                write!(f, "slot {slot}: reusable slot not described; a refill that picks it would trap")
            }
            NextAllocOutOfRange { next_alloc } => {
                write!(f, "next_alloc {next_alloc} is out of range (0 to 2)")
            }
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

/// Size in bytes of a window with a contiguous mask (2^64 for mask 0).
fn size_of_mask(mask: u64) -> u128 {
    u128::from(!mask) + 1
}

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
            for &(other, o) in &placed {
                if r.overlaps(&o) {
                    errors.push(BuildError::SocOverlap {
                        first: other.min(slot),
                        second: other.max(slot),
                    });
                }
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
        if self.next_alloc >= REUSABLE_SLOTS {
            errors.push(BuildError::NextAllocOutOfRange {
                next_alloc: self.next_alloc,
            });
        }
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

/// What a record is, as far as matching goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordShape {
    /// A block of SoC addresses `[soc_start, soc_start + size)`, translated to
    /// `[local_start, local_start + size)` (the local end may pass 2^32 and wrap).
    Window {
        /// First SoC address.
        soc_start: u64,
        /// Bytes (up to 2^64).
        size: u128,
        /// First local address.
        local_start: u32,
    },
    /// The tag has a bit outside the mask: no address matches.
    Empty,
    /// A mask that is not contiguous: the matching addresses are scattered.
    Scattered,
}

/// One record, described.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordDescription {
    /// 0..5.
    pub slot: usize,
    /// Reusable or pinned.
    pub use_: SlotUse,
    /// The raw record.
    pub record: MapRecord,
    /// What it matches.
    pub shape: RecordShape,
    /// The row of the original's table this record is (same slot, local base, mask and
    /// register; any tag), if any: `reusable-0`, ..., `sbuf`, `hbm-scratch`, with where its
    /// values come from.
    pub original: Option<&'static Aperture>,
    /// The NX register pair whose `_LO` the record's register address (as the device
    /// uses it) is, if it is one the library knows (`MEM_WINDOW3`, ...).
    pub register: Option<RegPair>,
}

/// How serious a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The device will misbehave or trap.
    Error,
    /// Legal, but probably not what was meant.
    Warning,
}

/// Something wrong with a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Error or warning.
    pub severity: Severity,
    /// The slot concerned, if one.
    pub slot: Option<usize>,
    /// A stable identifier (`next-alloc-out-of-range`, `register-unusable`, ...).
    pub kind: &'static str,
    /// A sentence for a person.
    pub message: String,
}

/// A whole table, described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDescription {
    /// The five records.
    pub records: Vec<RecordDescription>,
    /// The raw cursor.
    pub next_alloc: u8,
    /// The slot the next refill takes (`next_alloc % 3`).
    pub victim: usize,
    /// Everything found wrong, errors first.
    pub problems: Vec<Problem>,
}

/// Problems as they are found.
#[derive(Default)]
struct Problems(Vec<Problem>);

impl Problems {
    fn push(
        &mut self,
        severity: Severity,
        slot: Option<usize>,
        kind: &'static str,
        message: String,
    ) {
        self.0.push(Problem {
            severity,
            slot,
            kind,
            message,
        });
    }
}

/// Describes any table; never fails.
pub fn describe(t: &TranslationCtx) -> TableDescription {
    let mut problems = Problems::default();
    let records = (0..RECORDS)
        .map(|slot| describe_record(slot, &t.records[slot], &mut problems))
        .collect();
    table_problems(t, &mut problems);
    let mut problems = problems.0;
    problems.sort_by_key(|p| p.severity);
    TableDescription {
        records,
        next_alloc: t.next_alloc,
        victim: t.victim(),
        problems,
    }
}

/// One record: its shape, names, and the problems it has on its own.
fn describe_record(slot: usize, r: &MapRecord, problems: &mut Problems) -> RecordDescription {
    let use_ = SlotUse::of(slot);
    let shape = if r.is_empty() {
        RecordShape::Empty
    } else if !r.has_contiguous_mask() {
        RecordShape::Scattered
    } else {
        RecordShape::Window {
            soc_start: r.ptr,
            size: size_of_mask(r.mask),
            local_start: r.window,
        }
    };
    let warn = Severity::Warning;
    match shape {
        RecordShape::Empty if use_ == SlotUse::Pinned => problems.push(
            warn,
            Some(slot),
            "pinned-empty",
            format!("slot {slot}: pinned but empty (its tag {:#x} has bits outside its mask): it never matches", r.ptr),
        ),
        RecordShape::Scattered => problems.push(
            warn,
            Some(slot),
            "mask-not-contiguous",
            format!("slot {slot}: mask {:#018x} is not contiguous: the addresses it matches are scattered", r.mask),
        ),
        RecordShape::Window {
            size, local_start, ..
        } => local_range_problems(slot, size, local_start, problems),
        _ => {}
    }
    register_problems(slot, use_, r, problems);
    if r._pad != 0 {
        problems.push(
            warn,
            Some(slot),
            "padding-nonzero",
            format!("slot {slot}: padding bytes 12..16 are {:#x}, not 0", r._pad),
        );
    }
    let a = &APERTURES[slot];
    let original = (r.window == a.window
        && r.mask == a.mask()
        && u64::from(r.reg_location as u32) == a.reg_location())
    .then_some(a);
    RecordDescription {
        slot,
        use_,
        record: *r,
        shape,
        original,
        register: RegisterAddress::on_device(r.reg_location).and_then(|x| pair_at(u64::from(x))),
    }
}

/// A window's local range: past 2^32 it wraps; not aligned to its size, it is unusual.
fn local_range_problems(slot: usize, size: u128, local_start: u32, problems: &mut Problems) {
    if u128::from(local_start) + size.min(1u128 << 33) > 1u128 << 32 {
        problems.push(
            Severity::Warning,
            Some(slot),
            "local-range-wraps",
            format!("slot {slot}: local range from {local_start:#x} ({size:#x} bytes) passes 2^32: local addresses wrap"),
        );
    }
    if size <= 1u128 << 32 && u128::from(local_start) % size != 0 {
        problems.push(
            Severity::Warning,
            Some(slot),
            "local-base-misaligned",
            format!("slot {slot}: local base {local_start:#x} is not aligned to the window size {size:#x}"),
        );
    }
}

/// A record's register: high bits the device ignores; for a reusable slot, one a refill
/// cannot use.
fn register_problems(slot: usize, use_: SlotUse, r: &MapRecord, problems: &mut Problems) {
    if r.reg_location >> 32 != 0 {
        problems.push(
            Severity::Warning,
            Some(slot),
            "register-high-bits",
            format!(
                "slot {slot}: register location {:#x} has high bits set; the device uses only the low 32 ({:#x})",
                r.reg_location, r.reg_location as u32
            ),
        );
    }
    if use_ == SlotUse::Reusable && RegisterAddress::on_device(r.reg_location).is_none() {
        problems.push(
            Severity::Error,
            Some(slot),
            "register-unusable",
            format!(
                "slot {slot}: register location {:#x} is null or not 4-aligned on the device: a refill of this slot traps",
                r.reg_location as u32
            ),
        );
    }
}

/// The problems of the table as a whole: overlaps, the cursor, the tail padding.
fn table_problems(t: &TranslationCtx, problems: &mut Problems) {
    for i in 0..RECORDS {
        for j in i + 1..RECORDS {
            if t.records[i].overlaps(&t.records[j]) {
                problems.push(
                    Severity::Warning,
                    Some(j),
                    "shadowed",
                    format!("slots {i} and {j} overlap: where both match, slot {i} wins"),
                );
            }
        }
    }
    if t.next_alloc >= REUSABLE_SLOTS {
        problems.push(
            Severity::Error,
            None,
            "next-alloc-out-of-range",
            format!(
                "next_alloc is {} (0 to 2 expected): the original would refill outside the table; this library uses slot {}",
                t.next_alloc,
                t.victim()
            ),
        );
    }
    if t._pad != [0; 7] {
        problems.push(
            Severity::Warning,
            None,
            "padding-nonzero",
            "tail padding bytes 161..168 are not 0".to_string(),
        );
    }
}

/// Describes a 168-byte image; never fails.
pub fn describe_bytes(bytes: &[u8; offsets::CTX_SIZE]) -> TableDescription {
    describe(&TranslationCtx::from_bytes(bytes))
}
