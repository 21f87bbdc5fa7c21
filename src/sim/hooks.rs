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

use core::ffi::c_void;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::host::trace::Event;
use crate::layout::{MapRecord, TranslationCtx, RECORDS};

static ACTIVE: AtomicBool = AtomicBool::new(false);
/// A trace file is open: every call takes the lock to write its line.
static TRACING: AtomicBool = AtomicBool::new(false);

/// The counts a call makes, apart from the model's locked state.
pub(super) struct Tally {
    /// Calls that hit or refilled no slot the table names (a span's, at most); the
    /// translates are these, the hits and the refills, added up when read.
    unslotted: AtomicU64,
    hits: [AtomicU64; RECORDS],
    refills: [AtomicU64; RECORDS],
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);

pub(super) static TALLY: Tally = Tally {
    unslotted: ZERO,
    hits: [ZERO; RECORDS],
    refills: [ZERO; RECORDS],
};

impl Tally {
    /// (translates, hits, refills) now.
    pub(super) fn snapshot(&self) -> (u64, [u64; RECORDS], [u64; RECORDS]) {
        let load = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let (hits, refills) = (
            self.hits.each_ref().map(load),
            self.refills.each_ref().map(load),
        );
        let translates = hits
            .iter()
            .chain(&refills)
            .fold(load(&self.unslotted), |a, b| a.wrapping_add(*b));
        (translates, hits, refills)
    }

    pub(super) fn reset(&self) {
        for c in core::iter::once(&self.unslotted)
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

/// A model runs: `neuron_translate` takes its observed path.
#[inline(always)]
pub(crate) fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// `neuron_translate` hit `slot` of `table` for `addr` while a model runs: counts the hit
/// (and traces it while a trace file is open) and returns the local address. It derives
/// that address from the table rather than being handed it, so that the call can be the
/// caller's tail call: a callee that returned its argument would make the code generator
/// keep it in a saved register across a plain call.
#[inline(always)]
pub(crate) fn count_hit(record: &MapRecord, slot: usize, addr: u64) -> *mut c_void {
    count(true, Some(slot));
    if TRACING.load(Ordering::Relaxed) {
        return traced_hit(record, addr);
    }
    record.local(addr) as usize as *mut c_void
}

/// [`count_hit`]'s end while a trace file is open (out of line: the untraced count then
/// needs no stack frame).
#[cold]
#[inline(never)]
fn traced_hit(record: &MapRecord, addr: u64) -> *mut c_void {
    trace(Event::Translate(addr));
    record.local(addr) as usize as *mut c_void
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
    let per_slot = if hit { &TALLY.hits } else { &TALLY.refills };
    bump(
        slot.and_then(|k| per_slot.get(k))
            .unwrap_or(&TALLY.unslotted),
    );
}
