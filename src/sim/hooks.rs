//! The calls the library makes into the host model, compiled in with feature `sim` only
//! (the device object never has them). Each is one relaxed load and a return while no
//! [`super::Machine`] runs.
//!
//! A hit, the path a kernel takes millions of times, is counted without a lock: the
//! library names the slot, and the counts are plain relaxed loads and stores of atomics
//! (not read-modify-writes). The table they count is not safe to share between threads
//! anyway (a refill writes it), so neither are the counts: two threads translating at once
//! may lose a count, never corrupt memory. A refill, a span and a hit while a trace file is
//! open take the model's lock.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::host::trace::Event;
use crate::layout::{TranslationCtx, RECORDS};

static ACTIVE: AtomicBool = AtomicBool::new(false);
/// A trace file is open: every call takes the lock to write its line.
static TRACING: AtomicBool = AtomicBool::new(false);

/// The counts a call makes, apart from the model's locked state.
pub(super) struct Tally {
    translates: AtomicU64,
    hits: [AtomicU64; RECORDS],
    refills: [AtomicU64; RECORDS],
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);

pub(super) static TALLY: Tally = Tally {
    translates: ZERO,
    hits: [ZERO; RECORDS],
    refills: [ZERO; RECORDS],
};

impl Tally {
    /// (translates, hits, refills) now.
    pub(super) fn snapshot(&self) -> (u64, [u64; RECORDS], [u64; RECORDS]) {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        (
            load(&self.translates),
            self.hits.each_ref().map(load),
            self.refills.each_ref().map(load),
        )
    }

    pub(super) fn reset(&self) {
        for c in core::iter::once(&self.translates)
            .chain(&self.hits)
            .chain(&self.refills)
        {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// Adds one to `c`: a relaxed load and store, not a locked read-modify-write.
#[inline(always)]
fn bump(c: &AtomicU64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(1), Ordering::Relaxed);
}

pub(super) fn set_active(on: bool) {
    ACTIVE.store(on, Ordering::SeqCst);
}

pub(super) fn set_tracing(on: bool) {
    TRACING.store(on, Ordering::SeqCst);
}

/// A refill stored `tag` to the register block at `reg` (`_HI` at `reg + 4`, then `_LO`):
/// the model logs both stores and moves the window that register programs.
#[inline]
pub(crate) fn stored(reg: usize, tag: u64) {
    if ACTIVE.load(Ordering::Relaxed) {
        if let Some(s) = super::lock().as_mut() {
            s.on_store(reg, tag);
        }
    }
}

/// `neuron_translate` hit `slot` for `addr`, giving `local`: returns `local` (so that the
/// call can be the caller's tail call).
#[inline(always)]
pub(crate) fn hit(slot: usize, addr: u64, local: usize) -> usize {
    if ACTIVE.load(Ordering::Relaxed) {
        count_hit(slot, addr, local)
    } else {
        local
    }
}

#[inline(never)]
fn count_hit(slot: usize, addr: u64, local: usize) -> usize {
    count(true, Some(slot));
    if TRACING.load(Ordering::Relaxed) {
        trace(Event::Translate(addr));
    }
    local
}

/// `neuron_translate` refilled `slot` for `addr` (its register stores already made).
#[inline]
pub(crate) fn refilled(slot: usize, addr: u64) {
    if ACTIVE.load(Ordering::Relaxed) {
        count(false, Some(slot));
        if let Some(s) = super::lock().as_mut() {
            s.pending_refill = None;
            s.trace(Event::Translate(addr));
        }
    }
}

/// `neuron_translate_span` finished on `table` (every store of it done): the model counts
/// a hit or a refill of its slot and traces the call.
#[inline]
pub(crate) fn spanned(table: *const TranslationCtx, addr: u64, len: u64) {
    if ACTIVE.load(Ordering::Relaxed) && !table.is_null() {
        if let Some(s) = super::lock().as_mut() {
            // SAFETY: the table the call just used, valid by the caller's contract, and no
            // longer written.
            s.on_span(unsafe { &*table }, addr);
            s.trace(Event::Span(addr, len));
        }
    }
}

/// Writes `event` to the trace file, if one is open.
#[cold]
fn trace(event: Event) {
    if let Some(s) = super::lock().as_mut() {
        s.trace(event);
    }
}

/// Counts a translate call: a hit or a refill of `slot` (`None`: of no slot the table names).
#[inline(always)]
pub(super) fn count(hit: bool, slot: Option<usize>) {
    bump(&TALLY.translates);
    let per_slot = if hit { &TALLY.hits } else { &TALLY.refills };
    if let Some(c) = slot.and_then(|k| per_slot.get(k)) {
        bump(c);
    }
}
