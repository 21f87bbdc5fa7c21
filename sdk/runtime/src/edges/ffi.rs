//! The C ABI the headers in sdk/include/neuron_customop_host/ call (declared there in
//! runtime.h): each function converts its arguments and forwards to the layers below (the
//! accessors' and the TCM's are in [`crate::edges::ffi_access`]). A tensor crosses as a pointer
//! to its [`Meta`], which the runtime owns and keeps in place while the tensor lives. Every
//! function is called from one thread (a core runs its kernel on one).

use core::ffi::{c_char, c_int, c_void};
use std::ffi::CStr;

use crate::percore::decode;
use crate::percore::ops::{self, Operand};
use crate::percore::registry::{self, Function, Invoker, Param};
use crate::percore::state::{self, Meta, Runtime};
use crate::percore::tensors;

pub use crate::base::cabi::{
    Arg, ARG_DOUBLE, ARG_INT, ARG_NONE, ARG_SCALAR_FLOAT, ARG_SCALAR_INT, ARG_TENSOR,
};

/// The handle behind a meta pointer.
///
/// # Safety
/// `m` is a pointer the runtime returned, still live.
pub(crate) unsafe fn handle(m: *const Meta) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { (*m).handle }
}

fn meta_of(rt: &mut Runtime, h: u32) -> *const Meta {
    if h == 0 {
        return core::ptr::null();
    }
    &*rt.entry(h).meta
}

fn operand(rt: &mut Runtime, a: &Arg) -> Operand {
    let tensor = if a.kind == ARG_TENSOR {
        // SAFETY: a tensor argument carries a live tensor.
        unsafe { handle(a.meta) }
    } else {
        0
    };
    decode::operand(rt, a.kind, tensor, a.i, a.f)
}

/// A new tensor of element type `dtype` (a [`crate::base::codes::DType`] code) filled as
/// `fill` (a [`crate::base::codes::Fill`] code) says (`value` for `Fill::Value`). Its
/// meta, one reference. `site` is the call's return address, which the emulated Q7's
/// runtime sends to place a report; here the stack places it, and `site` is not read.
///
/// # Safety
/// `sizes` points to `ndim` sizes; `value` is a valid argument.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_tensor_new(
    dtype: c_int,
    sizes: *const i64,
    ndim: usize,
    fill: c_int,
    value: *const Arg,
    site: *const c_void,
) -> *const Meta {
    let _ = site;
    // SAFETY: the caller's contract.
    let (sizes, value) = unsafe { (std::slice::from_raw_parts(sizes, ndim), &*value) };
    state::with(|rt| {
        let value = operand(rt, value);
        let h = decode::factory(rt, dtype, sizes, fill, value);
        meta_of(rt, h)
    })
}

/// One more holder of the tensor.
///
/// # Safety
/// `m` is live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_tensor_retain(m: *const Meta) {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| tensors::retain(rt, h));
}

/// One fewer; the last frees it.
///
/// # Safety
/// `m` is live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_tensor_release(m: *const Meta) {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| tensors::release_from_kernel(rt, h));
}

/// `fill_(value)`.
///
/// # Safety
/// `m` is live, `value` valid.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_tensor_fill(m: *const Meta, value: *const Arg) {
    // SAFETY: the caller's contract.
    let (h, v) = unsafe { (handle(m), &*value) };
    state::with(|rt| {
        let v = operand(rt, v);
        ops::fill_with(rt, h, v);
    });
}

/// Runs operation `op` on `args[0..3]`, into `out` (non-null: the `_out` form) or a new
/// tensor; the result's meta (a new tensor has one reference). `site` as for
/// [`nt_customop_tensor_new`].
///
/// # Safety
/// `args` points to three valid arguments; `out` is null or live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_apply(
    op: c_int,
    out: *const Meta,
    args: *const Arg,
    site: *const c_void,
) -> *const Meta {
    let _ = site;
    // SAFETY: the caller's contract.
    let args = unsafe { std::slice::from_raw_parts(args, 3) };
    // SAFETY: the caller's contract.
    let out = (!out.is_null()).then(|| unsafe { handle(out) });
    state::with(|rt| {
        let operands = [
            operand(rt, &args[0]),
            operand(rt, &args[1]),
            operand(rt, &args[2]),
        ];
        let h = decode::apply(rt, op, operands, out);
        meta_of(rt, h)
    })
}

/// The tensor's coherence policy's code ([`crate::base::codes::Policy`]), set first
/// unless `set` is -1.
///
/// # Safety
/// `m` is live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_policy(m: *const Meta, set: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| decode::set_policy(rt, h, set))
}

/// Registers op `name` of library `lib` with its shape function and kernel name
/// (`NEURON_LIBRARY`'s `m.def`).
///
/// # Safety
/// Strings are NUL-terminated; `params` points to `n` kinds.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_register(
    lib: *const c_char,
    name: *const c_char,
    kernel: *const c_char,
    invoker: Invoker,
    function: *const c_void,
    params: *const c_int,
    n: usize,
) {
    // SAFETY: the caller's contract.
    let s = |p: *const c_char| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    // SAFETY: the caller's contract.
    let params = unsafe { params_of(&s(name), params, n) };
    let shape = Function {
        invoker,
        function,
        params,
    };
    registry::register(s(lib), s(name), s(kernel), shape);
}

/// Binds kernel function `name` (the runner's glue, for each kernel the compute sources
/// define).
///
/// # Safety
/// As [`nt_customop_register`].
#[no_mangle]
pub unsafe extern "C" fn nt_customop_bind(
    name: *const c_char,
    invoker: Invoker,
    function: *const c_void,
    params: *const c_int,
    n: usize,
) {
    // SAFETY: the caller's contract.
    let name = unsafe { CStr::from_ptr(name) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: the caller's contract.
    let params = unsafe { params_of(&name, params, n) };
    let f = Function {
        invoker,
        function,
        params,
    };
    registry::bind(name, f);
}

/// The C functions the kernels call that the device runtime lacks, as ntx found them.
///
/// # Safety
/// `names` points to `n` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_device_lacks(names: *const *const c_char, n: usize) {
    // SAFETY: the caller's contract.
    let names = unsafe { std::slice::from_raw_parts(names, n) };
    let names: Vec<String> = names
        .iter()
        // SAFETY: the caller's contract.
        .map(|p| unsafe { CStr::from_ptr(*p) }.to_string_lossy().into_owned())
        .collect();
    registry::with(|r| r.device_lacks = names);
}

/// The build opted out of the device's compile (`ntx op build --no-device-parity`, through
/// ntx's glue): every run warns that the device would not build it.
#[no_mangle]
pub extern "C" fn nt_customop_parity_off() {
    registry::with(|r| r.parity_off = true);
}

/// The stack the build gives a core on the device (`-DSTACK_SIZE`, through ntx's glue).
/// The C++ headers refuse a size outside 1..=[`crate::base::limits::STACK_MAX`] at compile time;
/// a program that passes one anyway stops here, saying so.
#[no_mangle]
pub extern "C" fn nt_customop_stack_size(bytes: u32) {
    if bytes == 0 || bytes > crate::base::limits::STACK_MAX {
        eprintln!(
            "error: a stack of {bytes} bytes: a core's stack on the device is 1 to {} bytes",
            crate::base::limits::STACK_MAX
        );
        std::process::exit(crate::base::codes::ExitStatus::Refused.code());
    }
    registry::with(|r| r.stack_bytes = bytes);
}

/// Function `name`'s parameter kinds, from their codes. A code this runtime does not know
/// (headers from another SDK) stops the program as it starts, saying so: no call could
/// pass that parameter right.
///
/// # Safety
/// `p` points to `n` codes.
unsafe fn params_of(name: &str, p: *const c_int, n: usize) -> Vec<Param> {
    // SAFETY: the caller's contract.
    let codes = unsafe { std::slice::from_raw_parts(p, n) };
    let mut params = Vec::with_capacity(n);
    for (k, &c) in codes.iter().enumerate() {
        let Some(param) = Param::from_code(c) else {
            eprintln!(
                "error: {name}'s parameter {k} has kind {c}, which this runtime does not know \
                 (the headers and the runtime are from different SDKs)"
            );
            std::process::exit(crate::base::codes::ExitStatus::Refused.code());
        };
        params.push(param);
    }
    params
}

/// `get_dst_tensor()`: the op's output (one more reference).
#[no_mangle]
pub extern "C" fn nt_customop_dst_tensor() -> *const Meta {
    state::with(|rt| {
        let h = tensors::dst_tensor(rt);
        meta_of(rt, h)
    })
}

/// `get_cpu_id()`.
#[no_mangle]
pub extern "C" fn nt_customop_cpu_id() -> u32 {
    state::with(|rt| rt.job.core)
}

/// `get_cpu_count()`.
#[no_mangle]
pub extern "C" fn nt_customop_cpu_count() -> u32 {
    state::with(|rt| {
        rt.job.asked_cpu_count = true;
        rt.job.cores
    })
}

/// The translation context a `Q7PtrType`'s 32-bit handle names: 1, this core's.
#[no_mangle]
pub extern "C" fn nt_customop_ctx(handle: u32) -> *mut c_void {
    if handle == 1 {
        neuron_translate::abi::neuron_translate_ctx().cast()
    } else {
        core::ptr::null_mut()
    }
}

/// The runner's entry point (the glue's `main`): a run ([`crate::run`]), or with
/// `--describe` or `--serve FD` the op's program for the Python front end
/// ([`crate::edges::serve`]).
///
/// # Safety
/// `argv` holds `argc` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_main(argc: c_int, argv: *const *const c_char) -> c_int {
    let args: Vec<String> = (1..argc.max(1) as usize)
        .map(|k| {
            // SAFETY: the caller's contract.
            unsafe { CStr::from_ptr(*argv.add(k)) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    // A kernel that crashes leaves no core file in the caller's folder (nor does qemu,
    // which inherits the limit): the crash is reported instead. Lowering it cannot fail.
    let no_core = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a plain setrlimit of this process with a valid struct.
    unsafe { libc::setrlimit(libc::RLIMIT_CORE, &no_core) };
    if args.first().map(String::as_str) != Some("--describe") {
        // SAFETY: the program's own argument vector; main has not started threads.
        unsafe { crate::edges::contain::contain(argv) };
    }
    match args.first().map(String::as_str) {
        Some("--describe") => {
            println!("{:#}", crate::edges::serve::describe());
            0
        }
        Some("--serve") => match args.get(1).and_then(|f| f.parse::<i32>().ok()) {
            Some(fd) => crate::edges::serve::main(fd),
            None => {
                let stop =
                    crate::run::report::refuse("--serve needs the socket's descriptor".into());
                crate::run::report::print_refusal(&stop);
                stop.status.code()
            }
        },
        _ => crate::run::main(&args),
    }
}

/// A C++ exception left a kernel or a shape function (the invoker caught it): `what` is
/// its message (null: not a `std::exception`). Reported as a crash of that phase, which
/// ends there.
///
/// # Safety
/// `what` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_thrown(what: *const c_char) {
    let what = (!what.is_null()).then(|| {
        // SAFETY: the caller's contract.
        unsafe { CStr::from_ptr(what) }
            .to_string_lossy()
            .into_owned()
    });
    state::with(|rt| rt.thrown(what))
}
