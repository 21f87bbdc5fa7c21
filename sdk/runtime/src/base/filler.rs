//! Filling a window view's page tables ahead of a core's copies, on a thread of the core's
//! own. A core is a fresh process, so the first pass over a tensor maps every page once;
//! `MADV_POPULATE_*` maps a whole view in one call, and on this thread it does so while the
//! kernel copies the view's first pages, on another CPU when there is one. Only a speed-up:
//! no value, count or report depends on it (the thread never translates, and populating a
//! mapping changes no memory), and a view the model moves meanwhile is simply mapped again
//! by the kernel's own accesses.

use core::ffi::c_void;
use std::sync::mpsc::{channel, Sender};

/// One request: populate `[lo, lo + len)` with `advice`.
type FillRequest = (u64, u64, i32);

/// The filler of one process (a forked core has its own: a thread does not survive fork).
#[derive(Debug)]
pub struct Filler {
    pid: u32,
    tx: Sender<FillRequest>,
}

fn populate((lo, len, advice): FillRequest) {
    // SAFETY: [lo, lo + len) is a window view the model maps (or maps no more, which makes
    // madvise fail); populating page tables changes no memory.
    unsafe { libc::madvise(lo as *mut c_void, usize::try_from(len).unwrap_or(0), advice) };
}

/// How much of a view the kernel's own thread populates before handing the rest over: the
/// pages its next copies touch.
const FIRST: u64 = 256 * 1024;

/// Populates `[lo, hi)`: its first pages now, the rest on the process's filler thread
/// (started on first use in each process).
pub fn fill(slot: &mut Option<Filler>, lo: u64, hi: u64, advice: i32) {
    let now = (hi - lo).min(FIRST);
    populate((lo, now, advice));
    if now == hi - lo {
        return;
    }
    let pid = std::process::id();
    if slot.as_ref().is_none_or(|f| f.pid != pid) {
        let (tx, rx) = channel::<FillRequest>();
        let spawned = std::thread::Builder::new()
            .name("nt-customop-filler".into())
            .spawn(move || rx.into_iter().for_each(populate));
        *slot = spawned.ok().map(|_| Filler { pid, tx });
    }
    let rest = (lo + now, hi - lo - now, advice);
    match slot {
        Some(f) if f.tx.send(rest).is_ok() => {}
        _ => populate(rest),
    }
}
