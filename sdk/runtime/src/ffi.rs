//! The C ABI the headers in sdk/include/neuron_customop_host/ call (declared there in
//! runtime.h). A tensor crosses as a pointer to its [`Meta`], which the runtime owns and
//! keeps in place while the tensor lives. Every function is called from one thread (a core
//! runs its kernel on one).

use core::ffi::{c_char, c_int, c_void};
use std::ffi::CStr;

use crate::dtype::{DType, Num};
use crate::misuse::Kind;
use crate::ops::{self, Call, Op, Operand};
use crate::registry::{self, Function, Invoker, OpDef, Param};
use crate::state::{self, Meta, Phase, Runtime};
use crate::tensors;

/// An argument or operand (`nt_customop_arg`).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Arg {
    /// What it holds: one of the `ARG_*` kinds.
    pub kind: i32,
    /// The tensor (kind 1).
    pub meta: *const Meta,
    /// The integer (kinds 2 and 4).
    pub i: i64,
    /// The double (kinds 3 and 5).
    pub f: f64,
}

/// What an [`Arg`] holds (`NT_CUSTOMOP_ARG_*` in runtime.h): nothing.
pub const ARG_NONE: i32 = 0;
/// A tensor (`meta`).
pub const ARG_TENSOR: i32 = 1;
/// An `int64_t` parameter (`i`).
pub const ARG_INT: i32 = 2;
/// A `double` parameter (`f`).
pub const ARG_DOUBLE: i32 = 3;
/// An integral `Scalar` (`i`).
pub const ARG_SCALAR_INT: i32 = 4;
/// A floating-point `Scalar` (`f`).
pub const ARG_SCALAR_FLOAT: i32 = 5;

/// The handle behind a meta pointer.
///
/// # Safety
/// `m` is a pointer the runtime returned, still live.
unsafe fn handle(m: *const Meta) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { (*m).handle }
}

fn meta_of(rt: &mut Runtime, h: u32) -> *const Meta {
    if h == 0 {
        return core::ptr::null();
    }
    &*rt.entry(h).meta
}

fn operand(a: &Arg) -> Operand {
    match a.kind {
        // SAFETY: kind 1 carries a live tensor.
        ARG_TENSOR => Operand::Tensor(unsafe { handle(a.meta) }),
        ARG_INT | ARG_SCALAR_INT => Operand::Scalar(Num::Int(a.i)),
        ARG_DOUBLE | ARG_SCALAR_FLOAT => Operand::Scalar(Num::Float(a.f)),
        _ => Operand::None,
    }
}

/// A new tensor: `fill` 0 leaves it as HBM has it (`empty`), 1 zeros, 2 ones, 3 `value`,
/// 4 the identity (2-D). Its meta, one reference.
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
) -> *const Meta {
    // SAFETY: the caller's contract.
    let sizes = unsafe { std::slice::from_raw_parts(sizes, ndim) };
    // SAFETY: the caller's contract.
    let value = unsafe { *value };
    state::with(|rt| {
        let Some(d) = DType::from_code(dtype) else {
            rt.misuse(
                Kind::OpFailed,
                None,
                None,
                format!("no element type has code {dtype}"),
            );
            return core::ptr::null();
        };
        let h = tensors::create(rt, d, sizes, false);
        match (fill, operand(&value)) {
            (1, _) => tensors::fill(rt, h, Num::Int(0)),
            (2, _) => tensors::fill(rt, h, Num::Int(1)),
            (3, Operand::Scalar(v)) => tensors::fill(rt, h, v),
            (4, _) => tensors::eye(rt, h),
            _ => {}
        }
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
    state::with(|rt| tensors::release(rt, h));
}

/// `fill_(value)`.
///
/// # Safety
/// `m` is live, `value` valid.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_tensor_fill(m: *const Meta, value: *const Arg) {
    // SAFETY: the caller's contract.
    let (h, v) = unsafe { (handle(m), operand(&*value)) };
    state::with(|rt| match v {
        Operand::Scalar(n) => tensors::fill(rt, h, n),
        _ => rt.misuse(Kind::OpFailed, Some(h), None, "fill_ takes a scalar".into()),
    });
}

/// Runs operation `op` on `args[0..3]`, into `out` (non-null: the `_out` form) or a new
/// tensor; the result's meta (a new tensor has one reference).
///
/// # Safety
/// `args` points to three valid arguments; `out` is null or live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_apply(
    op: c_int,
    out: *const Meta,
    args: *const Arg,
) -> *const Meta {
    // SAFETY: the caller's contract.
    let args = unsafe { std::slice::from_raw_parts(args, 3) };
    let operands = [operand(&args[0]), operand(&args[1]), operand(&args[2])];
    // SAFETY: the caller's contract.
    let out = (!out.is_null()).then(|| unsafe { handle(out) });
    state::with(|rt| {
        let Some(op) = Op::from_code(op) else {
            rt.misuse(
                Kind::OpFailed,
                None,
                None,
                format!("no operation has code {op}"),
            );
            return core::ptr::null();
        };
        let h = ops::apply(rt, Call { op, args: operands }, out);
        meta_of(rt, h)
    })
}

/// The tensor's coherence policy (0 COHERENT, 1 INCOHERENT_VERBOSE, 2 INCOHERENT_QUIET).
///
/// # Safety
/// `m` is live.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_policy(m: *const Meta, set: c_int) -> c_int {
    // SAFETY: the caller's contract.
    let h = unsafe { handle(m) };
    state::with(|rt| {
        let e = rt.entry(h);
        if (0..=2).contains(&set) {
            e.policy = set;
        }
        e.policy
    })
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
    let params = unsafe { params_of(params, n) };
    registry::with(|r| {
        r.ops.push(OpDef {
            library: s(lib),
            name: s(name),
            kernel: s(kernel),
            shape: Function {
                invoker,
                function,
                params,
            },
        })
    });
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
    let params = unsafe { params_of(params, n) };
    let f = Function {
        invoker,
        function,
        params,
    };
    registry::with(|r| r.kernels.push((name, f)));
}

/// # Safety
/// `p` points to `n` codes.
unsafe fn params_of(p: *const c_int, n: usize) -> Vec<Param> {
    // SAFETY: the caller's contract.
    let codes = unsafe { std::slice::from_raw_parts(p, n) };
    codes
        .iter()
        .map(|c| Param::from_code(*c).unwrap_or(Param::Tensor))
        .collect()
}

/// `get_dst_tensor()`: the op's output (one more reference).
#[no_mangle]
pub extern "C" fn nt_customop_dst_tensor() -> *const Meta {
    state::with(|rt| match (rt.phase, rt.dst) {
        (Phase::Kernel, Some(h)) => {
            rt.dst_called = true;
            tensors::retain(rt, h);
            meta_of(rt, h)
        }
        _ => {
            rt.misuse(
                Kind::OpFailed,
                None,
                None,
                "get_dst_tensor() outside a kernel the runner runs".into(),
            );
            core::ptr::null()
        }
    })
}

/// `get_cpu_id()`.
#[no_mangle]
pub extern "C" fn nt_customop_cpu_id() -> u32 {
    state::with(|rt| rt.core)
}

/// `get_cpu_count()`.
#[no_mangle]
pub extern "C" fn nt_customop_cpu_count() -> u32 {
    state::with(|rt| rt.cores)
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

/// The runner's entry point (the glue's `main`).
///
/// # Safety
/// `argv` holds `argc` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn nt_customop_main(argc: c_int, argv: *const *const c_char) -> c_int {
    // SAFETY: the caller's contract.
    let args: Vec<String> = (1..argc.max(1) as usize)
        .map(|k| {
            unsafe { CStr::from_ptr(*argv.add(k)) }
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    crate::run::main(&args)
}
