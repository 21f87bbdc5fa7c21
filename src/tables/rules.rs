//! The rules a window table is held to that both sides of the host tools check, each
//! stated once: what breaks it (one function each below) and how it is said (a
//! [`Breach`]'s words, and the kind string [`describe`](super::describe) reports it by).
//!
//! The builder ([`TableBuilder`](super::TableBuilder)) refuses a table that breaks a rule;
//! `describe` reports a table that does, at the severity the breach has on the device. The
//! two sides differ in what they do about a breach, never in what a breach is.

use core::fmt;

use super::SlotUse;
use crate::layout::{MapRecord, REUSABLE_SLOTS};
use crate::translate::victim_of;
use crate::window_reg::RegisterAddress;

/// A table rule broken, with the values that break it.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breach {
    /// A reusable slot whose register is null or not 4-aligned as the device uses it (its
    /// low 32 bits): a refill of the slot traps.
    RegisterUnusable { slot: usize, reg_location: u64 },
    /// A register location with bits above the 32 the device uses.
    RegisterPast32Bits { slot: usize, reg_location: u64 },
    /// A local base that is not a multiple of the window's size (asked of windows up to
    /// 4 GiB: a larger one passes 2^32 whatever its base).
    LocalBaseMisaligned {
        slot: usize,
        local_base: u32,
        size: u128,
    },
    /// A local range that passes 2^32: local addresses wrap.
    LocalRangePast32Bits {
        slot: usize,
        local_base: u32,
        size: u128,
    },
    /// Two windows that share SoC addresses: where both match, the first wins.
    Overlap { first: usize, second: usize },
    /// A refill cursor of 3 or more.
    NextAllocOutOfRange { next_alloc: u8 },
}

impl Breach {
    /// The stable identifier `describe` reports the breach by (documented in
    /// abi-tests/README.md; `ntx explain --format json` prints it).
    pub fn kind(&self) -> &'static str {
        match self {
            Breach::RegisterUnusable { .. } => "register-unusable",
            Breach::RegisterPast32Bits { .. } => "register-high-bits",
            Breach::LocalBaseMisaligned { .. } => "local-base-misaligned",
            Breach::LocalRangePast32Bits { .. } => "local-range-wraps",
            Breach::Overlap { .. } => "shadowed",
            Breach::NextAllocOutOfRange { .. } => "next-alloc-out-of-range",
        }
    }
}

impl fmt::Display for Breach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Breach::RegisterUnusable { slot, reg_location } => write!(
                f,
                "slot {slot}: register location {:#x} is null or not 4-aligned on the device: a refill of this slot traps",
                reg_location as u32
            ),
            Breach::RegisterPast32Bits { slot, reg_location } => write!(
                f,
                "slot {slot}: register location {reg_location:#x} has high bits set; the device uses only the low 32 ({:#x})",
                reg_location as u32
            ),
            Breach::LocalBaseMisaligned { slot, local_base, size } => {
                write!(f, "slot {slot}: local base {local_base:#x} is not aligned to the window size {size:#x}")
            }
            Breach::LocalRangePast32Bits { slot, local_base, size } => write!(
                f,
                "slot {slot}: local range from {local_base:#x} ({size:#x} bytes) passes 2^32: local addresses wrap"
            ),
            Breach::Overlap { first, second } => {
                write!(f, "slots {first} and {second} overlap: where both match, slot {first} wins")
            }
            Breach::NextAllocOutOfRange { next_alloc } => write!(
                f,
                "next_alloc is {next_alloc} (0 to 2 expected): the original would refill outside the table; this library uses slot {}",
                victim_of(next_alloc)
            ),
        }
    }
}

/// A reusable slot's register must be usable on the device.
pub(crate) fn register_unusable(slot: usize, reg_location: u64) -> Option<Breach> {
    (SlotUse::of(slot) == SlotUse::Reusable && RegisterAddress::on_device(reg_location).is_none())
        .then_some(Breach::RegisterUnusable { slot, reg_location })
}

/// A register location fits the device's 32-bit addresses.
pub(crate) fn register_past_32_bits(slot: usize, reg_location: u64) -> Option<Breach> {
    (reg_location >> 32 != 0).then_some(Breach::RegisterPast32Bits { slot, reg_location })
}

/// A window of up to 4 GiB starts at a local address that is a multiple of its size.
pub(crate) fn local_base_misaligned(slot: usize, local_base: u32, size: u128) -> Option<Breach> {
    (size <= 1u128 << 32 && u128::from(local_base) % size != 0).then_some(
        Breach::LocalBaseMisaligned {
            slot,
            local_base,
            size,
        },
    )
}

/// A window's local range ends at or below 2^32 (`size` is at most 2^64).
pub(crate) fn local_range_past_32_bits(slot: usize, local_base: u32, size: u128) -> Option<Breach> {
    (u128::from(local_base) + size > 1u128 << 32).then_some(Breach::LocalRangePast32Bits {
        slot,
        local_base,
        size,
    })
}

/// No two windows share SoC addresses (`first` < `second`, the order the device searches).
pub(crate) fn overlap(first: (usize, &MapRecord), second: (usize, &MapRecord)) -> Option<Breach> {
    first.1.overlaps(second.1).then_some(Breach::Overlap {
        first: first.0.min(second.0),
        second: first.0.max(second.0),
    })
}

/// The refill cursor names a reusable slot.
pub(crate) fn next_alloc_out_of_range(next_alloc: u8) -> Option<Breach> {
    (next_alloc >= REUSABLE_SLOTS).then_some(Breach::NextAllocOutOfRange { next_alloc })
}
