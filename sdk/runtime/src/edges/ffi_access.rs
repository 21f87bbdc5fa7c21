//! The accessors' and the TCM's C ABI: each function takes the tensor's handle from its
//! meta and forwards to [`crate::percore::access`] on this core's runtime.

use core::ffi::{c_int, c_void};

use crate::base::cabi::{Meta, Populated};
use crate::edges::ffi::handle;
use crate::percore::state;
use crate::percore::{access, decode};

/// Opens an accessor of `kind` with element type `dtype` (and `ndim` dimensions for a
/// standard one) on tensor `m`: a stream gets its TCM buffer (null: a slow stream).
///
/// # Safety
/// `m` is live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_open(
    m: *const Meta,
    kind: c_int,
    dtype: c_int,
    ndim: c_int,
) -> *mut u8 {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| decode::open(rt, h, kind, dtype, ndim))
}

/// Closes what [`nt_customop_open`] opened (a stream returns its buffer).
///
/// # Safety
/// `m` is live; `buffer` is what the open returned.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_close(m: *const Meta, kind: c_int, buffer: *mut u8) {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| decode::close(rt, h, kind, buffer))
}

/// Reports an accessor index outside its dimension (and stops the core).
///
/// # Safety
/// `m` is live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_bad_index(m: *const Meta, dim: c_int, index: i64, size: i64) {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| access::bad_index(rt, h, dim, index, size))
}

/// Reports a stream used past its end (`closed` 0) or after `close()` (1).
///
/// # Safety
/// `m` is live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_bad_stream(
    m: *const Meta,
    closed: c_int,
    write: c_int,
    index: u64,
) {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| access::bad_stream(rt, h, closed != 0, write != 0, index))
}

/// Counts bytes a stream moved between its tensor and TCM.
#[no_mangle]
pub extern "C" fn nt_customop_count_tcm(in_bytes: u64, out_bytes: u64) {
    state::with(|rt| access::count_tcm(rt, in_bytes, out_bytes))
}

/// Checks and records a TCM copy of `count` elements of type `dtype` from element
/// `offset` (`write`: TCM to tensor). `site` is the kernel's call's return address, which
/// the emulated Q7's runtime sends to place a finding; here the stack places it, and
/// `site` is not read.
///
/// # Safety
/// `m` is live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_tcm_copy(
    m: *const Meta,
    dtype: c_int,
    offset: u64,
    count: u64,
    write: c_int,
    site: *const c_void,
) {
    let _ = site;
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| access::tcm_copy(rt, h, dtype, offset, count, write != 0))
}

/// `torch::neuron::tcm_malloc`: `bytes` from this core's 16 KiB pool, or null.
#[no_mangle]
pub extern "C" fn nt_customop_tcm_malloc(bytes: usize) -> *mut c_void {
    state::with(|rt| access::tcm_malloc(rt, bytes, 0))
}

/// The same, called from return address `site` (kept, to place a block never freed).
#[no_mangle]
pub extern "C" fn nt_customop_tcm_malloc_at(bytes: usize, site: *const c_void) -> *mut c_void {
    state::with(|rt| access::tcm_malloc(rt, bytes, site as u64))
}

/// Before a `tcm_to_tensor` of the `bytes` at `p`, called from return address `site`:
/// bytes of a watched TCM block that nothing wrote stop the core (`uninitialized-read`).
#[no_mangle]
pub extern "C" fn nt_customop_tcm_read_at(p: *const c_void, bytes: usize, site: *const c_void) {
    state::with(|rt| access::tcm_read(rt, p as usize, bytes, site as u64))
}

/// The local side of a TCM copy (`bytes` at `p`), called from return address `site`:
/// static or global data stops the core (`tcm-copy-not-dataram`).
#[no_mangle]
pub extern "C" fn nt_customop_tcm_local(p: *const c_void, bytes: usize, site: *const c_void) {
    state::with(|rt| access::tcm_local(rt, p as usize, bytes, site as u64))
}

/// `torch::neuron::tcm_free`: null does nothing; a pointer the pool did not give is
/// reported (and stops the core).
#[no_mangle]
pub extern "C" fn nt_customop_tcm_free(p: *mut c_void) {
    if !p.is_null() {
        state::with(|rt| access::tcm_free(rt, p))
    }
}

/// Before a TCM or stream copy of the stretch at local `p` (tensor `m`'s element `first`):
/// fills the page tables of that window view ahead ([`access::prefault`]); `*filled`
/// becomes the view filled (or found filled), and is left alone outside the windows.
///
/// # Safety
/// `m` is live; `filled` is valid.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_prefault(
    m: *const Meta,
    first: u64,
    p: *const u8,
    write: c_int,
    filled: *mut Populated,
) {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    if let Some(r) = state::with(|rt| access::prefault(rt, h, first, p as u64, write != 0)) {
        // SAFETY: the caller's contract.
        unsafe { *filled = r };
    }
}

/// A TCM or stream copy of elements `[first, first + count)` of tensor `m`, or an access to
/// one element through a standard accessor, whose written elements the runtime tracks
/// (`write`: into it).
///
/// # Safety
/// `m` is live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_note(m: *const Meta, first: u64, count: u64, write: c_int) {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| {
        crate::percore::tensors::note(rt, h, first, count, write != 0, "an accessor or a copy")
    })
}

/// `neuron_hbm_allocate(bytes, out, align)`: 0 and the block's SoC address in `*out`, or -1
/// when this call's HBM heap has no block for it (`*out` untouched).
///
/// # Safety
/// `out` points to a writable `u64`.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_hbm_allocate(bytes: u32, out: *mut u64, align: u32) -> c_int {
    match state::with(|rt| crate::percore::hbm::allocate(rt, bytes, align)) {
        Some(addr) => {
            // SAFETY: the caller's contract.
            unsafe { *out = addr };
            0
        }
        None => -1,
    }
}

/// `neuron_hbm_deallocate(addr)`: 0, or -1 for an address no live block starts at (which
/// is also reported).
#[no_mangle]
pub extern "C" fn nt_customop_hbm_deallocate(addr: u64) -> c_int {
    if state::with(|rt| crate::percore::hbm::deallocate(rt, addr)) {
        0
    } else {
        -1
    }
}

/// `neuron_memcpy`'s check of `bytes` between local `local` and HBM `addr` (`write`: to
/// HBM), before the caller moves them. `site` as for [`nt_customop_tcm_copy`] (the stack
/// places a finding here).
#[no_mangle]
pub extern "C" fn nt_customop_hbm_copy(
    addr: u64,
    bytes: u64,
    local: *const c_void,
    write: c_int,
    site: *const c_void,
) {
    let local = Some((local, site as u64));
    state::with(|rt| crate::percore::hbm::copy(rt, addr, bytes, local, write != 0))
}
