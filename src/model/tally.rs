//! What the model counts, in one place: the translate calls by slot, counted without the
//! lock (relaxed loads and stores of atomics, not read-modify-writes), and the register
//! writes and window moves, counted under it. The seam ([`super::hooks`]) and the machine
//! ([`super::machine`]) both count here; this module uses neither.

use core::sync::atomic::{AtomicU64, Ordering};

use super::Counters;
use crate::layout::RECORDS;

/// Everything the model counts, in one place: the calls by slot without the lock, the
/// register writes and window moves under it.
pub(super) struct Tally {
    /// Calls that hit or refilled no slot the table names (a span's, at most); the
    /// translates are these, the hits and the refills, added up when read.
    unslotted: AtomicU64,
    hits: [AtomicU64; RECORDS],
    refills: [AtomicU64; RECORDS],
    /// 32-bit stores to window registers (two per refill).
    pub(super) register_writes: AtomicU64,
    /// NX windows remapped onto a new SoC base.
    pub(super) remaps: AtomicU64,
    /// Views kept, brought back, and dropped past the limit (keep.rs).
    pub(super) parked: AtomicU64,
    pub(super) reused: AtomicU64,
    pub(super) evicted: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);

impl Tally {
    pub(super) const fn new() -> Tally {
        Tally {
            unslotted: ZERO,
            hits: [ZERO; RECORDS],
            refills: [ZERO; RECORDS],
            register_writes: ZERO,
            remaps: ZERO,
            parked: ZERO,
            reused: ZERO,
            evicted: ZERO,
        }
    }

    /// The counters now.
    pub(super) fn snapshot(&self) -> Counters {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let (hits, refills) = (
            self.hits.each_ref().map(load),
            self.refills.each_ref().map(load),
        );
        let translates = hits
            .iter()
            .chain(&refills)
            .fold(load(&self.unslotted), |a, b| a.wrapping_add(*b));
        Counters {
            translates,
            hits,
            refills,
            register_writes: load(&self.register_writes),
            remaps: load(&self.remaps),
        }
    }

    pub(super) fn reset(&self) {
        let moves = [&self.parked, &self.reused, &self.evicted];
        for c in [&self.unslotted, &self.register_writes, &self.remaps]
            .into_iter()
            .chain(moves)
            .chain(&self.hits)
            .chain(&self.refills)
        {
            c.store(0, Ordering::Relaxed);
        }
    }

    /// The hits of `slot` so far.
    pub(super) fn hits_of(&self, slot: usize) -> u64 {
        self.hits.get(slot).map_or(0, |c| c.load(Ordering::Relaxed))
    }

    /// Counts a translate call: a hit or a refill of `slot` (`None`: of no slot the table
    /// names).
    #[inline(always)]
    pub(super) fn count(&self, hit: bool, slot: Option<usize>) {
        let per_slot = if hit { &self.hits } else { &self.refills };
        bump(
            slot.and_then(|k| per_slot.get(k))
                .unwrap_or(&self.unslotted),
        );
    }
}

/// Adds `n` to `c`: a relaxed load and store, not a locked read-modify-write.
#[inline(always)]
pub(super) fn add(c: &AtomicU64, n: u64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

#[inline(always)]
fn bump(c: &AtomicU64) {
    add(c, 1);
}
