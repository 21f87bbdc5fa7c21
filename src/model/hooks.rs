//! Where the library meets the host model, compiled in with feature `sim` only (the device
//! object never has them): the register sink the ABI layer writes through while the model
//! is compiled in ([`Observed`]), and the calls it makes after each translate. Each is one
//! relaxed load and a return while no [`super::Machine`] runs.
//!
//! A hit, the path a kernel takes millions of times, is counted without the lock: the
//! library names the slot, and the counts are plain relaxed loads and stores of atomics
//! (not read-modify-writes). The table they count is not safe to share between threads
//! anyway (a refill writes it), so neither are the counts: two threads translating at once
//! may lose a count, never corrupt memory. A refill, a span and a hit while a trace file is
//! open take the model's lock.

use core::ffi::c_void;

use super::machine::MODEL;
use super::trace::Event;
use crate::layout::{MapRecord, TranslationCtx};
use crate::window_reg::{Mmio, RegisterAddress, WindowRegisters};

/// The register sink of a host build with the model compiled in: the same ordered stores
/// as the device's [`Mmio`], then, while a model runs, the model moves the window that
/// register programs.
#[derive(Debug)]
pub struct Observed(Mmio);

impl Observed {
    /// A handle to the window registers, observed by the model.
    ///
    /// # Safety
    ///
    /// As [`Mmio::new`].
    #[inline(always)]
    pub const unsafe fn new() -> Self {
        // SAFETY: the caller's contract.
        Observed(unsafe { Mmio::new() })
    }
}

impl WindowRegisters for Observed {
    #[inline(always)]
    fn program(&mut self, reg: RegisterAddress, tag: u64) {
        self.0.program(reg, tag);
        stored(reg.get(), tag);
    }
}

/// A refill stored `tag` to the register block at `reg` (`_HI` at `reg + 4`, then `_LO`):
/// the model logs both stores and moves the window that register programs.
#[inline]
fn stored(reg: usize, tag: u64) {
    if MODEL.active() {
        if let Some(s) = MODEL.lock().state.as_mut() {
            s.on_store(reg, tag);
        }
    }
}

/// A model runs: `neuron_translate` takes its observed path.
#[inline(always)]
pub(crate) fn active() -> bool {
    MODEL.active()
}

/// `neuron_translate` hit `slot` of `table` for `addr` while a model runs: counts the hit
/// (and traces it while a trace file is open) and returns the local address. It derives
/// that address from the table rather than being handed it, so that the call can be the
/// caller's tail call: a callee that returned its argument would make the code generator
/// keep it in a saved register across a plain call.
#[inline(always)]
pub(crate) fn count_hit(record: &MapRecord, slot: usize, addr: u64) -> *mut c_void {
    MODEL.tally.count(true, Some(slot));
    if MODEL.tracing() {
        return traced_hit(record, addr);
    }
    record.local(addr) as usize as *mut c_void
}

/// [`count_hit`]'s end while a trace file is open (out of line: the untraced count then
/// needs no stack frame).
#[cold]
#[inline(never)]
fn traced_hit(record: &MapRecord, addr: u64) -> *mut c_void {
    if let Some(s) = MODEL.lock().state.as_mut() {
        s.trace(Event::Translate(addr));
    }
    record.local(addr) as usize as *mut c_void
}

/// `neuron_translate` refilled `slot` for `addr` (its register stores already made).
#[inline]
pub(crate) fn refilled(slot: usize, addr: u64) {
    if MODEL.active() {
        MODEL.tally.count(false, Some(slot));
        if let Some(s) = MODEL.lock().state.as_mut() {
            s.pending_refill = None;
            s.trace(Event::Translate(addr));
        }
    }
}

/// `neuron_translate_span` finished on `table` (every store of it done): the model counts
/// a hit or a refill of its slot and traces the call.
#[inline]
pub(crate) fn spanned(table: *const TranslationCtx, addr: u64, len: u64) {
    if MODEL.active() && !table.is_null() {
        if let Some(s) = MODEL.lock().state.as_mut() {
            // SAFETY: the table the call just used, valid by the caller's contract, and no
            // longer written.
            s.on_span(unsafe { &*table }, addr, len);
            s.trace(Event::Span(addr, len));
        }
    }
}
