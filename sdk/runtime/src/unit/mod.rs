//! Unit tests of the runtime's checks: the accessors' checks and the TCM copies
//! ([`crate::percore::access`]), the written-element tracking ([`crate::percore::tensors`]) and the checks
//! across cores ([`crate::run::checks`]), each driven on a runtime of its own without the host
//! model, and the messages between the runner and its workers. `cargo test -p
//! neuron-customop-host` runs them; `make mutants-sdk` holds them to
//! catching mutations of that code (docs/testing.md).

mod access;
mod c_heap;
mod checks;
mod hbm;
mod messages;
mod protocol;
mod tcm;
mod tcm_pool;
mod tensors;
mod watch;
mod wire;
mod xmem;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use crate::base::dtype::DType;
use crate::percore::state::Runtime;

/// What [`Runtime::for_tests`] panics with when an error stops the core.
const STOPPED: &str = "the core stopped";

/// A runtime whose errors panic, op `t` on core 0 of `cores`, in a kernel.
fn runtime(cores: u32) -> Runtime {
    static QUIET: Once = Once::new();
    QUIET.call_once(|| {
        // The expected stops say nothing; any other panic (a failed assertion) is printed.
        let print = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&STOPPED) {
                print(info)
            }
        }));
    });
    let mut rt = Runtime::for_tests();
    let stop = rt.job.on_error;
    rt.begin_job("t", 0, cores, crate::percore::state::Phase::Kernel, stop);
    rt
}

/// A float tensor of `sizes` with its storage at HBM `addr` (no model behind it: the
/// checks read only its meta).
fn tensor(rt: &mut Runtime, sizes: &[i64], addr: u64) -> u32 {
    let bytes = crate::percore::tensors::numel(sizes).unwrap() * 4;
    crate::percore::tensors::insert(rt, DType::Float, sizes, Some((addr, bytes)))
}

/// Runs `f`; whether it stopped the core.
fn stops(rt: &mut Runtime, f: impl FnOnce(&mut Runtime)) -> bool {
    match catch_unwind(AssertUnwindSafe(|| f(rt))) {
        Ok(()) => false,
        Err(e) if e.downcast_ref::<&str>() == Some(&STOPPED) => true,
        Err(e) => std::panic::resume_unwind(e),
    }
}

/// The reports so far, as printed.
fn lines(rt: &Runtime) -> Vec<String> {
    rt.job.reports.iter().map(|r| r.line()).collect()
}

/// The reports as printed, emptied.
fn take(rt: &mut Runtime) -> Vec<String> {
    let l = lines(rt);
    rt.job.reports.clear();
    l
}
