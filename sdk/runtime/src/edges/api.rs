//! The C ABI behind the C++ runner API (sdk/include/neuron_customop_host/runner.hpp), for
//! authors' own tests: call an op as the runner does, with tensors made in the program;
//! `.npy` files in and out; a tensor's bytes in and out.

use core::ffi::{c_char, c_int};
use std::ffi::CStr;

use crate::base::cabi::Arg;
use crate::base::codes::{ExitStatus, Stats};
use crate::base::npy;
use crate::percore::state::{self, Meta};
use crate::percore::tensors;
use crate::run::options::{Options, StatsFormat};
use crate::run::{self, Session};

/// # Safety
/// `p` is a NUL-terminated string.
unsafe fn text(p: *const c_char) -> String {
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Calls op `op` with `args[0..n]` on `cores` cores (`stats`: a [`Stats`] code, what it
/// prints on stdout): the runner's exit status ([`ExitStatus`]); on `Ran`, `*out` is the
/// output (one reference).
///
/// # Safety
/// `op` is a NUL-terminated string, `args` points to `n` arguments whose tensors live, `out`
/// is valid.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_run(
    op: *const c_char,
    args: *const Arg,
    n: usize,
    cores: u32,
    stats: c_int,
    out: *mut *const Meta,
) -> c_int {
    crate::run::report::panics_as_bugs();
    let o = Options {
        // SAFETY: the caller's contract.
        op: unsafe { text(op) },
        cores,
        timeout: Some(crate::base::limits::DEFAULT_TIMEOUT),
        stats: match Stats::from_code(stats) {
            Some(Stats::None) => None,
            Some(Stats::Text) => Some(StatsFormat::Text),
            Some(Stats::Json) => Some(StatsFormat::Json),
            None => {
                let m = format!("stats {stats}: give 0 (none), 1 (text) or 2 (JSON)");
                let stop = crate::run::report::refuse(m);
                crate::run::report::print_refusal(&stop);
                return stop.status.code();
            }
        },
        ..Options::default()
    };
    // SAFETY: the caller's contract.
    let args = unsafe { std::slice::from_raw_parts(args, n) };
    let mut session = Session::default();
    match run::call(&mut session, &o, args) {
        Ok(ran) => {
            // SAFETY: the caller's contract.
            unsafe { *out = state::with(|rt| &*rt.entry(ran.output).meta as *const Meta) };
            ExitStatus::Ran.code()
        }
        Err(stop) => {
            crate::run::report::print_refusal(&stop);
            stop.status.code()
        }
    }
}

/// A tensor holding the array in `.npy` file `path` (one reference), or null with the
/// reason on stderr.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_load_npy(path: *const c_char) -> *const Meta {
    // SAFETY: the caller's contract.
    let path = unsafe { text(path) };
    let array = npy::read_file(std::path::Path::new(&path));
    match array {
        Ok(a) => state::with(|rt| {
            let h = tensors::from_array(rt, &a);
            &*rt.entry(h).meta as *const Meta
        }),
        Err(e) => {
            eprintln!("error: {path}: {e}");
            core::ptr::null()
        }
    }
}

/// Writes tensor `m` to `.npy` file `path`: 0, or -1 with the reason on stderr.
///
/// # Safety
/// `m` is live; `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_save_npy(m: *const Meta, path: *const c_char) -> c_int {
    // SAFETY: the caller's contract.
    let (h, path) = unsafe { ((*m).handle, text(path)) };
    let array = state::with(|rt| tensors::to_array(rt, h));
    match std::fs::write(&path, npy::to_bytes(&array)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: cannot write {path}: {e}");
            -1
        }
    }
}

/// Copies all of tensor `m`'s bytes to `data` (`write` 0) or from `data` (`write` 1), not
/// through a window: `bytes` must be the tensor's size. 0, or -1 if it is not.
///
/// # Safety
/// `m` is live; `data` is valid for `bytes` bytes.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_bytes(
    m: *const Meta,
    data: *mut u8,
    bytes: usize,
    write: c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    let h = unsafe { (*m).handle };
    state::with(|rt| {
        if rt.entry(h).bytes != bytes as u64 {
            return -1;
        }
        if write != 0 {
            // SAFETY: the caller's contract.
            let src = unsafe { std::slice::from_raw_parts(data, bytes) };
            tensors::write_all(rt, h, src);
        } else {
            let v = tensors::read_all(rt, h);
            // SAFETY: the caller's contract.
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), data, bytes) };
        }
        0
    })
}
