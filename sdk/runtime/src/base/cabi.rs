//! The plain data the C ABI carries, with no runtime state: a tensor's meta (what C++ reads
//! of a tensor without a call), an argument and a filled window view. Each is `#[repr(C)]`;
//! cbindgen writes sdk/include/neuron_customop_host/runtime.h from them (`make header`).
//! Their codes are in [`crate::base::codes`].

pub use crate::base::codes::{AccessorKind, ArgKind, Policy, MAX_DIMS};

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

/// Calls a registered function: `(function, arguments) -> result tensor (one reference)`
/// (`nt_customop_invoker`).
pub type Invoker = unsafe extern "C" fn(*const core::ffi::c_void, *const Arg) -> *const Meta;

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

/// What an [`Arg`] holds, for `match` patterns: [`ArgKind`]'s codes.
pub const ARG_NONE: i32 = ArgKind::None as i32;
/// A tensor (`meta`).
pub const ARG_TENSOR: i32 = ArgKind::Tensor as i32;
/// An `int64_t` parameter (`i`).
pub const ARG_INT: i32 = ArgKind::Int as i32;
/// A `double` parameter (`f`).
pub const ARG_DOUBLE: i32 = ArgKind::Double as i32;
/// An integral `Scalar` (`i`).
pub const ARG_SCALAR_INT: i32 = ArgKind::ScalarInt as i32;
/// A floating-point `Scalar` (`f`).
pub const ARG_SCALAR_FLOAT: i32 = ArgKind::ScalarFloat as i32;

impl AccessorKind {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Standard => "standard accessor",
            Self::ReadStream => "read stream",
            Self::WriteStream => "write stream",
            Self::Tcm => "TCM accessor",
        }
    }
}

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
