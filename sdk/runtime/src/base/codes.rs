//! Every code and limit of the runtime's ABI, written once: what the C++ headers, the
//! device's C runtime and the Python package pass to the runtime, and what it answers.
//! `nt-header` (tools/header) generates from this module the constants and enums of
//! sdk/include/neuron_customop_host/runtime.h, the whole of sdk/device/protocol.h and the
//! Python package's `_abi.py`; `make header-check` fails when one of them is stale.
//!
//! A code is read into its enum once, where it enters the runtime (edges/, the device's
//! requests in run/device/answer.rs): the layers below take the enums.

/// An enum of the codes the ABI passes: the enum (`#[repr]` of the code's type, each
/// variant with its code and its doc), `ALL` in order, `from_code` (the one place a code
/// is read into a variant: `None` for a code this side does not have), `code`, and
/// `LISTING`, what the generator writes for C, C++ and Python.
macro_rules! codes {
    (
        $(#[doc = $doc:literal])*
        $vis:vis enum $name:ident: $repr:ident {
            $($(#[doc = $vdoc:literal])* $variant:ident = $code:expr,)*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr($repr)]
        $vis enum $name { $($(#[doc = $vdoc])* $variant = $code,)* }

        impl $name {
            /// Every variant, in the order of their codes.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The enum as the generator lists it.
            pub const LISTING: $crate::base::codes::Listing = $crate::base::codes::Listing {
                name: stringify!($name),
                doc: concat!($($doc, "\n",)*),
                items: &[$((stringify!($variant), $code as i64, concat!($($vdoc, "\n",)*)),)*],
            };

            /// The variant with code `c`, or `None`.
            pub fn from_code(c: $repr) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| *v as $repr == c)
            }

            /// Its code.
            pub fn code(self) -> $repr {
                self as $repr
            }
        }
    };
}

/// A variant's name as C and Python write it: `BadIndex` -> `BAD_INDEX`, `BFloat16` ->
/// `BFLOAT16`, `Log10` -> `LOG10`.
pub fn screaming(name: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for ch in name.chars() {
        if ch.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        out.push(ch.to_ascii_uppercase());
    }
    out
}

/// An enum as the generator reads it: its name, its doc, and each variant's name, code
/// and doc (docs end in a newline per line).
#[derive(Debug, Clone, Copy)]
pub struct Listing {
    /// The Rust enum's name.
    pub name: &'static str,
    /// Its doc comment.
    pub doc: &'static str,
    /// Each variant: its name, code and doc comment.
    pub items: &'static [(&'static str, i64, &'static str)],
}

pub use nt_sdk_common::{
    exit, CORE_DRAM, DEFAULT_TIMEOUT, DEVICE_CPU_COUNT, MAX_CORES, MAX_KERNEL_NAME,
    MAX_TIMEOUT_SECS, STACK_DEFAULT, STACK_MAX, STACK_SWITCH_ALIGN, STACK_SWITCH_CONTEXT,
};

/// The server's `"kind"` of a refusal for want of HBM (the Python package's
/// `HbmFullError`).
pub const SERVER_HBM_FULL: &str = "hbm-full";

/// Most dimensions of a tensor.
pub const MAX_DIMS: usize = 8;

/// Bytes of a core's TCM pool, the device's dataram heap (`init_neuron_dataram_allocator`'s
/// `0x4000`; docs/customop-api.md, "Device parity").
pub const TCM_POOL_BYTES: usize = 16 * 1024;

/// The alignment of a TCM block when none is asked (`neuron_dataram_allocate`'s 64).
pub const TCM_ALIGN: usize = 64;

/// Bytes of a core's C heap, where a kernel's `malloc`, `calloc`, `realloc` and `operator
/// new` take from: the library's libc heap, an xmem heap in dataram set up again before
/// each call (`_init_libc_heap_allocator`), 10 KiB at `data_scratch_map + 0xa00` (the
/// decode's memory-map page, section 7; docs/customop-api.md, "Device parity").
pub const C_HEAP_BYTES: usize = 10 * 1024;

/// The alignment of a C heap block: not in the decode; the Q7's `max_align_t` (8 bytes:
/// `double`, `long long`, `long double` as double), what `malloc` promises.
pub const C_HEAP_ALIGN: usize = 8;

/// The byte a TCM block's slack (past its bytes, inside its granule) is filled with, to
/// see a store there when the block is freed or the kernel returns.
pub const TCM_SLACK: u8 = 0xa5;

/// Bytes of a stream accessor's buffer in TCM (the guide's 4 KiB).
pub const STREAM_BUFFER_BYTES: usize = 4096;

/// The most bytes of an input the Python package sends with a call instead of through HBM.
pub const INLINE_BYTES: usize = 4096;

/// The server protocol's version: the Python package checks the server's against its own.
pub const PROTOCOL: u32 = 2;

/// The server's requests, by their JSON tags (edges/serve.rs's `ServerRequest`).
pub const SERVER_REQUESTS: [&str; 4] = ["Alloc", "Free", "Shape", "Call"];

/// A call argument's kinds, by their JSON tags (edges/serve.rs's `ArgIn`).
pub const SERVER_ARGS: [&str; 7] = [
    "Tensor",
    "Int",
    "Double",
    "ScalarInt",
    "ScalarFloat",
    "Meta",
    "Bytes",
];

/// The most arguments a call through the runner API (`nt_customop_run`) takes.
pub const MAX_CALL_ARGS: usize = 16;

codes! {
    /// What an `nt_customop_arg` holds (its `kind`).
    pub enum ArgKind: i32 {
        /// Nothing.
        None = 0,
        /// A tensor: `meta`.
        Tensor = 1,
        /// An `int64_t` parameter: `i`.
        Int = 2,
        /// A `double` parameter: `f`.
        Double = 3,
        /// An integral Scalar: `i`.
        ScalarInt = 4,
        /// A floating-point Scalar: `f`.
        ScalarFloat = 5,
    }
}

codes! {
    /// An accessor's kind (`kind` of `nt_customop_open`).
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

codes! {
    /// A tensor's coherence policy (`torch::CoherencyEnforcer::Policy`, `set` of
    /// `nt_customop_policy`).
    pub enum Policy: i32 {
        /// Incoherent accessors are an error (`incoherent-accessors`); the default.
        Coherent = 0,
        /// Allowed, with a warning (`incoherent-accessors-allowed`).
        IncoherentVerbose = 1,
        /// Allowed, silently.
        IncoherentQuiet = 2,
    }
}

// The `codes!` macro takes doc attributes only, so the default is written out.
#[allow(clippy::derivable_impls)]
impl Default for Policy {
    fn default() -> Self {
        Policy::Coherent
    }
}

codes! {
    /// How a factory fills its new tensor (`fill` of `nt_customop_tensor_new`).
    pub enum Fill: i32 {
        /// As HBM has it (`torch::empty`).
        Empty = 0,
        /// `torch::zeros`.
        Zeros = 1,
        /// `torch::ones`.
        Ones = 2,
        /// `torch::full`: the factory's value.
        Value = 3,
        /// `torch::eye` (2-D).
        Eye = 4,
    }
}

/// How `<torch/torch.h>` offers an operation: the overloads ops.hpp declares for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `op(tensor)`.
    Unary,
    /// `op(a, b)` for each pair of operand types listed (`true` a tensor, `false` a scalar).
    Binary(&'static [(bool, bool)]),
    /// `op(self, other, alpha = 1)`, `other` a tensor or a scalar.
    Alpha,
    /// `op(self, min, max)`, scalars.
    Clamp,
}

/// The operands `pow`, `bitwise_and` and `bitwise_or` take: tensor or scalar on either side.
const EITHER: &[(bool, bool)] = &[(true, true), (true, false), (false, true)];
/// `mul`'s and `div`'s: a tensor first.
const TENSOR_FIRST: &[(bool, bool)] = &[(true, true), (true, false)];

/// The operations' table: each code with its `torch::` name and form.
macro_rules! ops {
    ($($variant:ident = $code:literal, $name:literal, $form:expr;)*) => {
        codes! {
            /// An operation of `<torch/torch.h>` (`op` of `nt_customop_apply`).
            pub enum Op: i32 { $(#[doc = $name] $variant = $code,)* }
        }
        impl Op {
            /// Its `torch::` name.
            pub fn name(self) -> &'static str { match self { $(Op::$variant => $name,)* } }
            /// Its overloads.
            pub fn form(self) -> Form { match self { $(Op::$variant => $form,)* } }
        }
    };
}

ops! {
    Abs = 0, "abs", Form::Unary;
    Ceil = 1, "ceil", Form::Unary;
    Floor = 2, "floor", Form::Unary;
    Sin = 3, "sin", Form::Unary;
    Cos = 4, "cos", Form::Unary;
    Tan = 5, "tan", Form::Unary;
    Log = 6, "log", Form::Unary;
    Log2 = 7, "log2", Form::Unary;
    Log10 = 8, "log10", Form::Unary;
    Exp = 9, "exp", Form::Unary;
    Pow = 10, "pow", Form::Binary(EITHER);
    Clamp = 11, "clamp", Form::Clamp;
    Add = 12, "add", Form::Alpha;
    Sub = 13, "sub", Form::Alpha;
    Mul = 14, "mul", Form::Binary(TENSOR_FIRST);
    Div = 15, "div", Form::Binary(TENSOR_FIRST);
    BitwiseAnd = 16, "bitwise_and", Form::Binary(EITHER);
    BitwiseOr = 17, "bitwise_or", Form::Binary(EITHER);
    BitwiseNot = 18, "bitwise_not", Form::Unary;
}

codes! {
    /// A kernel parameter's kind, as the headers read it from the C++ function's type
    /// (the `kinds` of `nt_customop_bind`).
    pub enum Param: i32 {
        /// `torch::Tensor` (by value or reference).
        Tensor = 1,
        /// `int64_t`.
        Int = 2,
        /// `double`.
        Double = 3,
        /// `torch::Scalar`.
        Scalar = 4,
        /// `int`: a kernel's integer as the device's build declares it (its schema's `int`).
        Int32 = 5,
        /// `float`: a kernel's floating-point number as the device's build declares it.
        Float32 = 6,
    }
}

impl Param {
    /// Its word, as the server's `Describe` lists an op's parameters (the Python package's
    /// `ParamWord`): an `int` is an `int64_t`'s, a `float` a `double`'s.
    pub fn word(self) -> &'static str {
        match self {
            Param::Tensor => "tensor",
            Param::Int | Param::Int32 => "int",
            Param::Double | Param::Float32 => "double",
            Param::Scalar => "scalar",
        }
    }
}

codes! {
    /// What the runner API prints of a call (`stats` of `nt_customop_run`).
    pub enum Stats: i32 {
        /// Nothing.
        None = 0,
        /// Lines for people, on stdout.
        Text = 1,
        /// One JSON document, on stdout.
        Json = 2,
    }
}

codes! {
    /// The runner's exit status (`ntx op run`, `nt_customop_run`), one meaning each.
    pub enum ExitStatus: i32 {
        /// Ran (warnings allowed).
        Ran = exit::RAN as i32,
        /// A call or an input refused: nothing ran, nothing written.
        Refused = exit::REFUSED as i32,
        /// A misuse error stopped the run.
        Misuse = exit::MISUSE as i32,
        /// A kernel crashed on a core.
        Crashed = exit::CRASHED as i32,
        /// A kernel (or the shape function) still ran when the timeout ran out.
        Timeout = exit::TIMEOUT as i32,
    }
}

codes! {
    /// An element type, by the code `c10::ScalarType` gives it.
    pub enum DType: i32 {
        /// `uint8_t`, `torch::kByte`.
        Byte = 0,
        /// `int8_t`, `torch::kChar`.
        Char = 1,
        /// `int16_t`, `torch::kShort`.
        Short = 2,
        /// `int32_t`, `torch::kInt`.
        Int = 3,
        /// `int64_t`, `torch::kLong`.
        Long = 4,
        /// IEEE binary16, `torch::kHalf`.
        Half = 5,
        /// IEEE binary32, `torch::kFloat`.
        Float = 6,
        /// bfloat16, `torch::kBFloat16`.
        BFloat16 = 15,
    }
}

/// One element type's facts. [`DTYPES`] is the one place each is written: the runtime's
/// element sizes and names (`base/dtype.rs`), the `.npy` descriptors (`base/npy.rs`), the
/// C++ headers' (`NT_CUSTOMOP_DTYPE_TABLE` in runtime.h, which `c10/core/ScalarType.h`
/// expands) and the Python package's (a program's `--describe`). Adding a type is a code
/// in [`DType`], a row here and its conversions (`base/dtype.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DTypeRow {
    /// The type.
    pub dtype: DType,
    /// Its C++ element type (in namespace `c10`).
    pub cxx: &'static str,
    /// Bytes per element.
    pub size: usize,
    /// Whether its elements are integers.
    pub integral: bool,
    /// The name PyTorch prints (`torch.float32`'s short form).
    pub name: &'static str,
    /// Its `.npy` descriptor: little-endian, `|` for one byte (bfloat16: its bits, `<u2`).
    pub npy: &'static str,
}

/// The element types' rows, in [`DType::ALL`]'s order.
pub const DTYPES: [DTypeRow; 8] = [
    DTypeRow {
        dtype: DType::Byte,
        cxx: "uint8_t",
        size: 1,
        integral: true,
        name: "uint8",
        npy: "|u1",
    },
    DTypeRow {
        dtype: DType::Char,
        cxx: "int8_t",
        size: 1,
        integral: true,
        name: "int8",
        npy: "|i1",
    },
    DTypeRow {
        dtype: DType::Short,
        cxx: "int16_t",
        size: 2,
        integral: true,
        name: "int16",
        npy: "<i2",
    },
    DTypeRow {
        dtype: DType::Int,
        cxx: "int32_t",
        size: 4,
        integral: true,
        name: "int32",
        npy: "<i4",
    },
    DTypeRow {
        dtype: DType::Long,
        cxx: "int64_t",
        size: 8,
        integral: true,
        name: "int64",
        npy: "<i8",
    },
    DTypeRow {
        dtype: DType::Half,
        cxx: "Half",
        size: 2,
        integral: false,
        name: "float16",
        npy: "<f2",
    },
    DTypeRow {
        dtype: DType::Float,
        cxx: "float",
        size: 4,
        integral: false,
        name: "float32",
        npy: "<f4",
    },
    DTypeRow {
        dtype: DType::BFloat16,
        cxx: "BFloat16",
        size: 2,
        integral: false,
        name: "bfloat16",
        npy: "<u2",
    },
];

codes! {
    /// A file descriptor the device program finds open (`ntx op run --device`).
    pub enum DeviceFd: i32 {
        /// The socket to the runner.
        Rpc = 3,
        /// The model's HBM, from its first SoC address.
        Hbm = 4,
        /// The counting qemu plugin writes here (not the program).
        Counts = 5,
        /// The runner writes the TCM pool's live blocks here, for the counting plugin's
        /// store watch to read (not the program).
        Watch = 6,
    }
}

codes! {
    /// A request of the device program's runtime to the runner. A request is u32 code,
    /// u32 payload bytes, the payload; every request gets a reply: u32 payload bytes, the
    /// payload. All little-endian. What each carries and is answered with follows its code
    /// (from sdk/runtime/src/base/wire.rs).
    pub enum DeviceRequest: u32 {
        /// The call's start: the core, the model's layout, the kernel and its arguments.
        Start = 1,
        /// A factory's new tensor.
        New = 2,
        /// A reference taken to a tensor.
        Retain = 3,
        /// A reference let go.
        Release = 4,
        /// A tensor filled with a value.
        Fill = 5,
        /// An operation.
        Apply = 6,
        /// A tensor's policy asked or set.
        Policy = 7,
        /// An accessor opened.
        Open = 8,
        /// An accessor closed.
        Close = 9,
        /// An index past a dimension.
        BadIndex = 10,
        /// A stream used wrongly.
        BadStream = 11,
        /// The bytes the TCM copies moved.
        CountTcm = 12,
        /// A TCM copy.
        TcmCopy = 13,
        /// Elements a copy wrote or read.
        Note = 14,
        /// `tcm_malloc`.
        Malloc = 15,
        /// `tcm_free`.
        Free = 16,
        /// `get_dst_tensor`.
        Dst = 17,
        /// A printf.
        Print = 18,
        /// The kernel's return, with its translate calls by window (the window table's 5
        /// records, `neuron_translate::layout::RECORDS`).
        Return = 19,
        /// The kernel's frames past its HBM stack.
        Stack = 20,
        /// An integer division or remainder by zero.
        DivideByZero = 21,
        /// Another operation undefined in C++ (an [`Undefined`]).
        Undefined = 22,
        /// `neuron_hbm_allocate`.
        HbmAllocate = 23,
        /// `neuron_hbm_deallocate`.
        HbmFree = 24,
        /// `neuron_memcpy`'s check.
        HbmCopy = 25,
        /// A TCM copy's local buffer in the program's static or global data.
        NotDataram = 26,
        /// Bytes in the TCM pool a kernel's copy or `memcpy`, `memmove` or `memset` is about
        /// to touch, outside every `tcm_malloc` block the device runtime knows.
        TcmSpan = 27,
        /// `malloc` and `operator new` (the C heap).
        HeapTake = 28,
        /// `free` and `operator delete` of a C heap block.
        HeapGive = 29,
    }
}

codes! {
    /// Why the device program's runtime ended the program itself (its exit status): an
    /// exchange with the runner that broke, or a limit of the runtime, which no kernel of
    /// the device's own kind reaches; the runner says which.
    pub enum DeviceExit: i32 {
        /// A request's payload past the runtime's 64 KiB message.
        RequestTooLong = 70,
        /// The runner's socket took no more (the runner had stopped).
        RunnerGone = 71,
        /// An answer past the runtime's 64 KiB message.
        AnswerTooLong = 72,
        /// A tensor handle past the runtime's 4,096 tensors.
        TooManyTensors = 73,
        /// A window's memory that could not be mapped where the window table puts it.
        MapFailed = 74,
        /// A kernel name past the runtime's buffer.
        NameTooLong = 75,
        /// A call of more than 64 arguments.
        TooManyArguments = 76,
        /// A `STACK_SIZE` of 0 or past 4 MiB.
        BadStackSize = 77,
    }
}

impl DeviceExit {
    /// What it was, in a report's words (its text above).
    pub fn words(self) -> String {
        let item = Self::LISTING.items.iter().find(|i| i.1 == self as i64);
        item.map_or(String::new(), |i| i.2.trim().replace('\n', " "))
    }
}

codes! {
    /// An operation undefined in C++ that the kernels' checks catch (`-fsanitize=`
    /// `signed-integer-overflow`, `shift-exponent`, `float-cast-overflow`), on the host as on the
    /// device: each is `undefined-arithmetic`, at the kernel's line.
    pub enum Undefined: u32 {
        /// A signed integer operation whose result its type cannot hold (the most negative
        /// value divided by -1 too).
        SignedOverflow = 1,
        /// A shift by a negative amount or by the operand's width or more.
        Shift = 2,
        /// A floating-point value converted to an integer type that cannot hold it (NaN,
        /// infinite or out of range).
        FloatToInteger = 3,
    }
}

impl Undefined {
    /// What it was, in a report's words.
    pub fn words(self) -> &'static str {
        match self {
            Undefined::SignedOverflow => {
                "a signed integer overflow (undefined in C++: the host and the device may give different values)"
            }
            Undefined::Shift => {
                "a shift by a negative amount or past its operand's width (undefined in C++: x86 \
                 takes the amount modulo the width)"
            }
            Undefined::FloatToInteger => {
                "a floating-point value converted to an integer type that cannot hold it (NaN, infinite \
                 or out of range: undefined in C++; the host gives the integer indefinite, the device saturates)"
            }
        }
    }
}

codes! {
    /// A piece of a device printf (u8 type, u8 spec bytes, the spec, the value).
    pub enum PrintPiece: u8 {
        /// Text: the spec is the text.
        Text = 0,
        /// A 64-bit integer.
        Int = 1,
        /// A double.
        Double = 2,
        /// A string: u32 bytes, then the bytes.
        String = 3,
    }
}
