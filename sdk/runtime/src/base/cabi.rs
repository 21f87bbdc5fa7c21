//! The plain data the C ABI carries, with no runtime state: a tensor's meta (what C++ reads
//! of a tensor without a call), an argument, the argument kinds, the accessor kinds and a
//! filled window view. Each is `#[repr(C)]` and declared again in
//! sdk/include/neuron_customop_host/runtime.h (sdk_abi.rs holds the two to each other).

use core::ffi::c_int;

/// Most dimensions.
pub const MAX_DIMS: usize = 8;

/// What the C++ side reads of a tensor without a call: its place, shape and type. Boxed
/// by the runtime, so its address is stable while the tensor lives (the headers'
/// `nt_customop_meta`).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct Meta {
    /// SoC address of element 0 in the model's HBM (0 for a data-less tensor).
    pub hbm_addr: u64,
    /// Elements.
    pub numel: u64,
    /// Sizes of the first `ndim` dimensions.
    pub sizes: [i64; MAX_DIMS],
    /// Elements between neighbours in each dimension (C order).
    pub strides: [i64; MAX_DIMS],
    /// Dimensions.
    pub ndim: u32,
    /// `c10::ScalarType` code.
    pub dtype: i32,
    /// The handle the runtime knows it by.
    pub handle: u32,
    /// 1 for a shape function's input: a shape, no data.
    pub data_less: u32,
    /// 1 while the runtime tracks which elements were written (a tensor made without
    /// values, on one core): the headers then tell it of each TCM and stream copy.
    pub track: u32,
    /// Zero: the struct's size a multiple of 8 with no hidden padding.
    pub pad: u32,
}

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

/// Standard accessor.
pub const STANDARD: c_int = 0;
/// Read stream.
pub const READ_STREAM: c_int = 1;
/// Write stream.
pub const WRITE_STREAM: c_int = 2;
/// TCM accessor.
pub const TCM: c_int = 3;
/// A window view's page tables the core filled: local `[lo, hi)` showing SoC from `soc`
/// (`nt_customop_filled`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Populated {
    /// First local address.
    pub lo: u64,
    /// One past the last.
    pub hi: u64,
    /// The SoC address `lo` showed.
    pub soc: u64,
}
