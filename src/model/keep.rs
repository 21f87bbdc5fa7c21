//! Which views of SoC memory the host model keeps when a reusable window moves away, as
//! pure decisions the model and `ntx simulate` share (docs/host-model.md, "Kept views").
//!
//! After a refill moves a window onto another region, a fresh view of that region has no
//! page table: every 4 KiB page the kernel then touches faults once, paid again each time
//! the region comes back. A view the kernel has streamed through is therefore worth more
//! than the microseconds it takes to move it aside: the model parks it (its page table
//! travels with it) and moves it back in when a refill brings its region back. A view the
//! kernel touched at a few places is not: the refill replaces it, as a lone refill always
//! did. What is kept is bounded; past the limit, the view parked longest ago goes.

use std::collections::VecDeque;

use crate::init::REFILL_WINDOW_SIZE;
use crate::layout::{MapRecord, REUSABLE_SLOTS};

/// The default limit of kept views, in bytes of SoC memory they show: 1 GiB, 64 views of
/// a reusable window (16 MiB each). Their pages belong to SoC memory anyway; a kept view
/// costs its page table (up to 32 KiB) and address space.
pub const KEEP_DEFAULT: u64 = 1 << 30;

/// A view is worth keeping once the kernel has touched this much through it (an estimate,
/// [`Keeper::spanned`] and [`Keeper::refill`]'s hits): 64 pages, whose faults cost more
/// than moving the view out and back in twice over.
pub const WORTH_KEEPING: u64 = 256 << 10;

/// Bytes a hit is taken to touch (one element of at least 4 bytes).
pub const BYTES_PER_HIT: u64 = 4;

/// How many views fit in `keep_bytes`.
pub fn views_for(keep_bytes: u64) -> usize {
    usize::try_from(keep_bytes / REFILL_WINDOW_SIZE).unwrap_or(usize::MAX)
}

/// The bytes a span call of `len` from `addr` goes through the window of `record` (which
/// maps `addr`): at most to the window's end.
pub fn spanned_bytes(record: &MapRecord, addr: u64, len: u64) -> u64 {
    let left = u128::from(!record.mask) + 1 - u128::from(addr & !record.mask);
    u64::try_from(left.min(u128::from(len))).unwrap_or(u64::MAX)
}

/// What a reusable window shows now, and how much the kernel touched through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shown {
    soc: u64,
    /// Bytes spanned through it since it was shown.
    spanned: u64,
    /// The slot's hit count when it was shown.
    hits_at_show: u64,
}

/// What a refill does with the views.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Move {
    /// The outgoing view (its SoC base) is parked.
    pub park: Option<u64>,
    /// A parked view (its SoC base) is dropped to make room.
    pub evict: Option<u64>,
    /// The incoming region was parked: its view moves back in.
    pub reuse: bool,
}

/// The decisions, over the three reusable windows and the parked views.
#[derive(Debug, Clone)]
pub struct Keeper {
    limit: usize,
    /// Parked views by SoC base, the longest parked first.
    parked: VecDeque<u64>,
    shown: [Option<Shown>; REUSABLE_SLOTS as usize],
}

impl Keeper {
    /// No view shown, none parked; at most `limit` parked (0: never park).
    pub fn new(limit: usize) -> Keeper {
        Keeper {
            limit,
            parked: VecDeque::new(),
            shown: [None; REUSABLE_SLOTS as usize],
        }
    }

    /// The most views it parks.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Views parked now.
    pub fn kept(&self) -> usize {
        self.parked.len()
    }

    /// Whether the view of `soc` is parked.
    pub fn is_kept(&self, soc: u64) -> bool {
        self.parked.contains(&soc)
    }

    /// The view of `soc` could not be parked after all: it is not kept.
    pub fn forget(&mut self, soc: u64) {
        self.parked.retain(|&p| p != soc);
    }

    /// A span call went `bytes` through reusable `slot`'s window.
    pub fn spanned(&mut self, slot: usize, bytes: u64) {
        if let Some(Some(s)) = self.shown.get_mut(slot) {
            s.spanned = s.spanned.saturating_add(bytes);
        }
    }

    /// A refill moves reusable `slot`'s window onto `soc`; `hits` is the slot's hit count
    /// now, `parkable` whether the outgoing view can be moved (one view of one region).
    /// Decides what happens to the outgoing view and where the incoming one comes from,
    /// and records the outcome.
    pub fn refill(&mut self, slot: usize, soc: u64, hits: u64, parkable: bool) -> Move {
        let Some(entry) = self.shown.get_mut(slot) else {
            return Move::default();
        };
        let mut m = Move::default();
        if let Some(out) = entry.take() {
            let touched = out.spanned.saturating_add(
                hits.saturating_sub(out.hits_at_show)
                    .saturating_mul(BYTES_PER_HIT),
            );
            if parkable && out.soc != soc && touched >= WORTH_KEEPING && self.limit > 0 {
                m.park = Some(out.soc);
            }
        }
        if let Some(i) = self.parked.iter().position(|&p| p == soc) {
            self.parked.remove(i);
            m.reuse = true;
        }
        if let Some(out) = m.park {
            // The same region parked twice (two windows showed it): the older view goes.
            if let Some(i) = self.parked.iter().position(|&p| p == out) {
                self.parked.remove(i);
                m.evict = Some(out);
            } else if self.parked.len() == self.limit {
                m.evict = self.parked.pop_front();
            }
            self.parked.push_back(out);
        }
        self.shown[slot] = Some(Shown {
            soc,
            spanned: 0,
            hits_at_show: hits,
        });
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: u64 = REFILL_WINDOW_SIZE;

    #[test]
    fn a_streamed_view_is_parked_and_comes_back_and_a_touched_one_is_not() {
        let mut k = Keeper::new(2);
        assert_eq!(
            k.refill(0, 0, 0, true),
            Move::default(),
            "nothing shown before"
        );
        k.spanned(0, WORTH_KEEPING);
        let m = k.refill(0, R, 10, true);
        assert_eq!((m.park, m.evict, m.reuse), (Some(0), None, false));
        // One element touched: not worth keeping.
        let m = k.refill(0, 0, 11, true);
        assert_eq!((m.park, m.evict, m.reuse), (None, None, true));
        assert_eq!(k.kept(), 0);
    }

    #[test]
    fn hits_count_as_touched_bytes_and_the_oldest_goes_past_the_limit() {
        let mut k = Keeper::new(2);
        let per_view = WORTH_KEEPING / BYTES_PER_HIT;
        let mut hits = 0;
        for n in 0..4u64 {
            hits += per_view;
            let m = k.refill(1, n * R, hits, true);
            let parked = (n > 0).then(|| (n - 1) * R);
            assert_eq!(m.park, parked, "refill {n}");
            assert_eq!(m.evict, (n == 3).then_some(0), "refill {n}");
        }
        assert_eq!(k.kept(), 2);
        assert!(k.is_kept(R) && k.is_kept(2 * R) && !k.is_kept(0));
    }

    #[test]
    fn a_limit_of_zero_never_parks() {
        let mut k = Keeper::new(0);
        k.refill(2, 0, 0, true);
        k.spanned(2, u64::MAX);
        assert_eq!(k.refill(2, R, 0, true), Move::default());
        let mut k = Keeper::new(1);
        k.refill(2, 0, 0, true);
        k.spanned(2, u64::MAX);
        assert_eq!(k.refill(2, R, 0, false), Move::default(), "not parkable");
        k.spanned(2, u64::MAX);
        assert_eq!(k.refill(2, 0, 0, true).park, Some(R));
        k.forget(R);
        assert_eq!(k.kept(), 0);
        assert_eq!(views_for(KEEP_DEFAULT), 64);
        assert_eq!(views_for(R - 1), 0);
    }
}
