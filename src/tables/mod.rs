//! The table tools, the producer side of the contract (feature `std`): the device reads a
//! 168-byte table that host code fills. [`TableBuilder`] (builder.rs) makes such a table from a description of
//! its windows and refuses tables the device would misuse; [`describe`] (describe.rs) turns
//! any 168 bytes back into a description, listing what is wrong with them. The rules both
//! hold a table to are stated once, in [`rules`].

use std::fmt;

mod builder;
mod describe;
pub mod rules;

pub use builder::{BuildError, BuildErrors, Extent, TableBuilder, Window};
pub use describe::{
    describe, describe_bytes, Problem, RecordDescription, RecordShape, Severity, TableDescription,
};
pub use rules::Breach;

use crate::layout::REUSABLE_SLOTS;

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

/// Size in bytes of a window with a contiguous mask (2^64 for mask 0).
fn size_of_mask(mask: u64) -> u128 {
    u128::from(!mask) + 1
}
