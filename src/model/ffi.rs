//! The host model's C API (declared in the header for host builds): one machine per
//! process, started and stopped explicitly. SoC addresses and sizes are `unsigned long long`,
//! as in the rest of the header. Every function returns 0 on success and -1
//! on failure, with the reason in `neuron_translate_host_last_error()`.

use core::ffi::{c_char, c_int, c_ulonglong, c_void};
use std::ffi::CString;
use std::string::ToString;

use super::keep::KEEP_DEFAULT;
use super::machine::{self, Inner, State, MODEL};
use super::{Config, Counters, Memory, SimError};

/// Records why a call failed; -1.
fn fail(inner: &mut Inner, e: SimError) -> c_int {
    inner.last_error = Some(CString::new(e.to_string()).unwrap_or_default());
    -1
}

/// Runs `f` on the machine the C API started, under the model's lock; a failure (no such
/// machine, or `f`'s) is recorded and becomes -1.
fn with<T>(f: impl FnOnce(&mut State) -> Result<T, SimError>) -> Result<T, c_int> {
    let mut g = MODEL.lock();
    let inner = &mut *g;
    let result = match inner.state.as_mut() {
        Some(s) if inner.c_api => f(s),
        _ => Err(SimError::NotRunning),
    };
    result.map_err(|e| fail(inner, e))
}

/// Fails with `e` (a NULL argument, say), recorded as any failure is.
fn refuse(e: SimError) -> c_int {
    fail(&mut MODEL.lock(), e)
}

/// Start the host model: map the NX register block at NEURON_TRANSLATE_NX_REG_BASE with
/// ENGINE_BASE_ADDR = engine_base, SBUF (64 MiB at engine_base - 41 MiB), an HBM region of
/// hbm_size bytes at hbm_base (sparse: untouched pages cost nothing), and the five NX
/// windows, the pinned ones over SBUF and the 64 MiB around hbm_scratch (which the program
/// must also define). Call it before _init_translate_ctx. Fails if a model runs already
/// or an address it needs is taken. It keeps up to NEURON_TRANSLATE_HOST_KEEP_DEFAULT
/// bytes of views (neuron_translate_host_start_keeping).
#[no_mangle]
pub extern "C" fn neuron_translate_host_start(
    engine_base: c_ulonglong,
    hbm_base: c_ulonglong,
    hbm_size: c_ulonglong,
    hbm_scratch: c_ulonglong,
) -> c_int {
    neuron_translate_host_start_keeping(engine_base, hbm_base, hbm_size, hbm_scratch, KEEP_DEFAULT)
}

/// neuron_translate_host_start, keeping up to keep bytes of views: when a reusable window
/// moves away from a region the kernel streamed through, the model keeps its view (and
/// so its page table) and moves it back when a refill brings the region back, instead of
/// faulting on every page again; past the limit, the view kept longest ago goes. 0 keeps
/// none; each view shows 16 MiB and costs its page table.
#[no_mangle]
pub extern "C" fn neuron_translate_host_start_keeping(
    engine_base: c_ulonglong,
    hbm_base: c_ulonglong,
    hbm_size: c_ulonglong,
    hbm_scratch: c_ulonglong,
    keep: c_ulonglong,
) -> c_int {
    let mut g = MODEL.lock();
    let config = Config {
        engine_base,
        hbm_base,
        hbm_size,
        hbm_scratch,
        keep,
    };
    match machine::start(&mut g, config) {
        Ok(()) => {
            g.c_api = true;
            0
        }
        Err(e) => fail(&mut g, e),
    }
}

/// Stop the host model: unmap the register block, the windows and SoC memory. Every
/// pointer neuron_translate returned is invalid afterwards.
#[no_mangle]
pub extern "C" fn neuron_translate_host_stop() -> c_int {
    let mut g = MODEL.lock();
    if g.c_api {
        machine::stop(&mut g);
        0
    } else {
        fail(&mut g, SimError::NotRunning)
    }
}

/// Allocate size bytes of HBM aligned to align (a power of two); their SoC address goes to
/// *out_soc. The memory reads as zeros. A NULL out_soc fails before anything is allocated.
///
/// # Safety
/// `out_soc` is NULL or a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn neuron_translate_host_alloc(
    size: c_ulonglong,
    align: c_ulonglong,
    out_soc: *mut c_ulonglong,
) -> c_int {
    if out_soc.is_null() {
        return refuse(SimError::NullPointer("out_soc"));
    }
    match with(|s| s.alloc(size, align)) {
        Ok(a) => {
            // SAFETY: the caller's contract.
            unsafe { out_soc.write(a) };
            0
        }
        Err(e) => e,
    }
}

/// Copy len bytes from src into SoC memory at soc (not through a window). A len of 0
/// copies nothing and succeeds while a model runs, whatever src and soc are; a NULL src
/// with a len above 0 fails.
///
/// # Safety
/// `src` is valid for `len` bytes, or `len` is 0.
#[no_mangle]
pub unsafe extern "C" fn neuron_translate_host_write(
    soc: c_ulonglong,
    src: *const c_void,
    len: usize,
) -> c_int {
    if len == 0 {
        return with(|_| Ok(())).map_or_else(|e| e, |()| 0);
    }
    if src.is_null() {
        return refuse(SimError::NullPointer("src"));
    }
    // SAFETY: the caller's contract; `src` is not NULL and `len` is above 0.
    let data = unsafe { core::slice::from_raw_parts(src.cast::<u8>(), len) };
    with(|s| s.write(soc, data)).map_or_else(|e| e, |()| 0)
}

/// Copy len bytes of SoC memory at soc into dst (not through a window). A len of 0 copies
/// nothing and succeeds while a model runs, whatever dst and soc are; a NULL dst with a
/// len above 0 fails.
///
/// # Safety
/// `dst` is valid for `len` bytes of writes, or `len` is 0.
#[no_mangle]
pub unsafe extern "C" fn neuron_translate_host_read(
    soc: c_ulonglong,
    dst: *mut c_void,
    len: usize,
) -> c_int {
    if len == 0 {
        return with(|_| Ok(())).map_or_else(|e| e, |()| 0);
    }
    if dst.is_null() {
        return refuse(SimError::NullPointer("dst"));
    }
    // SAFETY: the caller's contract; `dst` is not NULL and `len` is above 0.
    let buf = unsafe { core::slice::from_raw_parts_mut(dst.cast::<u8>(), len) };
    with(|s| s.read(soc, buf)).map_or_else(|e| e, |()| 0)
}

/// Copy the counters (translate calls, hits and refills by slot, register writes, window
/// remaps) to *out. A NULL out fails.
///
/// # Safety
/// `out` is NULL or a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn neuron_translate_host_counters(out: *mut Counters) -> c_int {
    if out.is_null() {
        return refuse(SimError::NullPointer("out"));
    }
    match with(|_| Ok(MODEL.tally.snapshot())) {
        Ok(c) => {
            // SAFETY: the caller's contract.
            unsafe { out.write(c) };
            0
        }
        Err(e) => e,
    }
}

/// Copy what the model keeps and holds (kept views, the limit, SoC memory in use, views
/// kept, brought back and dropped) to *out. A NULL out fails.
///
/// # Safety
/// `out` is NULL or a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn neuron_translate_host_memory(out: *mut Memory) -> c_int {
    if out.is_null() {
        return refuse(SimError::NullPointer("out"));
    }
    match with(|s| Ok(s.memory())) {
        Ok(m) => {
            // SAFETY: the caller's contract.
            unsafe { out.write(m) };
            0
        }
        Err(e) => e,
    }
}

/// Write every later translate call to the file at path, one line each, in the trace
/// format `ntx simulate` replays; NULL stops tracing and flushes the file.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn neuron_translate_host_trace(path: *const c_char) -> c_int {
    if path.is_null() {
        return with(State::trace_stop).map_or_else(|e| e, |()| 0);
    }
    // SAFETY: the caller's contract.
    let p = unsafe { core::ffi::CStr::from_ptr(path) };
    let Ok(p) = p.to_str() else {
        return refuse(SimError::BadConfig("the trace path is not UTF-8".into()));
    };
    with(|s| s.trace_to(std::path::Path::new(p))).map_or_else(|e| e, |()| 0)
}

/// Why the last failing neuron_translate_host_ call failed (a NUL-terminated string that
/// stays valid until the next failure), or NULL.
#[no_mangle]
pub extern "C" fn neuron_translate_host_last_error() -> *const c_char {
    MODEL
        .lock()
        .last_error
        .as_ref()
        .map_or(core::ptr::null(), |s| s.as_ptr())
}
