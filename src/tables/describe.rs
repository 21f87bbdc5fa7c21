//! [`describe`]: any 168 bytes as a description of their windows, with everything wrong
//! with them.

use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use super::rules::{self, Breach};
use super::{size_of_mask, SlotUse};
use crate::init::{Aperture, APERTURES};
use crate::layout::{offsets, MapRecord, TranslationCtx, RECORDS};
use crate::regs::{pair_at, RegPair};
use crate::window_reg::RegisterAddress;

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

    /// A broken table rule, about `slot`, in the rule's own kind and words.
    fn breach(&mut self, severity: Severity, slot: usize, breach: Breach) {
        self.push(severity, Some(slot), breach.kind(), breach.to_string());
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
    register_problems(slot, r, problems);
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
    let local = [
        rules::local_range_past_32_bits(slot, local_start, size),
        rules::local_base_misaligned(slot, local_start, size),
    ];
    for breach in local.into_iter().flatten() {
        problems.breach(Severity::Warning, slot, breach);
    }
}

/// A record's register: high bits the device ignores; for a reusable slot, one a refill
/// cannot use.
fn register_problems(slot: usize, r: &MapRecord, problems: &mut Problems) {
    if let Some(breach) = rules::register_past_32_bits(slot, r.reg_location) {
        problems.breach(Severity::Warning, slot, breach);
    }
    if let Some(breach) = rules::register_unusable(slot, r.reg_location) {
        problems.breach(Severity::Error, slot, breach);
    }
}

/// The problems of the table as a whole: overlaps, the cursor, the tail padding.
fn table_problems(t: &TranslationCtx, problems: &mut Problems) {
    for i in 0..RECORDS {
        for j in i + 1..RECORDS {
            let pair = ((i, &t.records[i]), (j, &t.records[j]));
            if let Some(breach) = rules::overlap(pair.0, pair.1) {
                problems.breach(Severity::Warning, j, breach);
            }
        }
    }
    if let Some(breach) = rules::next_alloc_out_of_range(t.next_alloc) {
        problems.push(Severity::Error, None, breach.kind(), breach.to_string());
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
