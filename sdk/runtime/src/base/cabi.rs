//! The plain data the C ABI carries, with no runtime state: a tensor's meta (what C++ reads
//! of a tensor without a call), an argument, the argument kinds, the accessor kinds and a
//! filled window view. Each is `#[repr(C)]` and declared again in
//! sdk/include/neuron_customop_host/runtime.h (sdk_abi.rs holds the two to each other).

use core::ffi::c_int;

/// Most dimensions.
pub const MAX_DIMS: usize = 8;

/// An enum of the codes one side of the C ABI or the device protocol passes: the enum
/// (`#[repr]` of the code's type, each variant with its code), `ALL` in order, and
/// `from_code`, the one place a code is read into a variant (`None` for a code this side
/// does not have).
macro_rules! codes {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident: $repr:ident {
            $($(#[$vmeta:meta])* $variant:ident = $code:literal,)*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr($repr)]
        $vis enum $name { $($(#[$vmeta])* $variant = $code,)* }

        impl $name {
            /// Every variant, in the order of their codes.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The variant with code `c`, or `None`.
            pub fn from_code(c: $repr) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| *v as $repr == c)
            }
        }
    };
}
pub(crate) use codes;

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

codes! {
    /// An accessor's kind, as the headers pass it (`kind` of `nt_customop_open`); read once
    /// where a call enters ([`crate::percore::access::kind_of`]).
    pub enum AccessorKind: i32 {
        /// `t.accessor<T, N>()`.
        Standard = 0,
        /// `t.read_stream_accessor<T>()`.
        ReadStream = 1,
        /// `t.write_stream_accessor<T>()`.
        WriteStream = 2,
        /// `t.tcm_accessor()`.
        Tcm = 3,
    }
}

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

/// Standard accessor's code.
pub const STANDARD: c_int = AccessorKind::Standard as c_int;
/// Read stream's code.
pub const READ_STREAM: c_int = AccessorKind::ReadStream as c_int;
/// Write stream's code.
pub const WRITE_STREAM: c_int = AccessorKind::WriteStream as c_int;
/// TCM accessor's code.
pub const TCM: c_int = AccessorKind::Tcm as c_int;

codes! {
    /// A tensor's coherence policy (`torch::CoherencyEnforcer`'s values, `set` of
    /// `nt_customop_policy`).
    #[derive(Default)]
    pub enum Policy: i32 {
        /// Incoherent accessors are an error (`incoherent-accessors`).
        #[default]
        Coherent = 0,
        /// Allowed, with a warning (`incoherent-accessors-allowed`).
        IncoherentVerbose = 1,
        /// Allowed, silently.
        IncoherentQuiet = 2,
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
