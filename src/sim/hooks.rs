//! The two calls the library makes into the host model, compiled in with feature `sim`
//! only (the device object never has them). Each is one relaxed load and a return while no
//! [`super::Machine`] runs.

use core::sync::atomic::{AtomicBool, Ordering};

use crate::host::trace::Event;
use crate::layout::TranslationCtx;

static ACTIVE: AtomicBool = AtomicBool::new(false);

pub(super) fn set_active(on: bool) {
    ACTIVE.store(on, Ordering::SeqCst);
}

/// A refill stored `tag` to the register block at `reg` (`_HI` at `reg + 4`, then `_LO`):
/// the model logs both stores and remaps the window that register programs.
#[inline]
pub(crate) fn stored(reg: usize, tag: u64) {
    if ACTIVE.load(Ordering::Relaxed) {
        if let Some(s) = super::lock().as_mut() {
            s.on_store(reg, tag);
        }
    }
}

/// A translate call finished on `table` (every store of it done): the model counts a hit
/// or a refill of its slot and traces the call.
#[inline]
pub(crate) fn translated(table: *const TranslationCtx, event: Event) {
    if ACTIVE.load(Ordering::Relaxed) && !table.is_null() {
        if let Some(s) = super::lock().as_mut() {
            // SAFETY: the table the call just used, valid by the caller's contract, and no
            // longer written.
            s.on_translate(unsafe { &*table }, event);
        }
    }
}
