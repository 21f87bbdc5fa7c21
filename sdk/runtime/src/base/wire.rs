//! The device protocol's payloads, written once: each request's and answer's fixed part as
//! one struct here, which `nt-header` (tools/header) writes as a packed C struct into
//! sdk/device/protocol.h (with its size asserted there), and which the runner reads and
//! writes through [`Wire`] (run/device/answer.rs). [`EXCHANGES`] says which struct each
//! request carries and answers with, and what follows it that no struct can hold (a name,
//! printf's pieces, a tensor's meta). The device's C runtime fills the structs; nothing
//! else of a payload's layout is written by hand.
//!
//! On the wire a payload is its fields in order, little-endian, with no padding: what a
//! packed struct is on the Q7 and on the host alike.

use crate::base::codes::{DeviceRequest, MAX_DIMS};
use neuron_translate::layout::RECORDS;

/// A value on the wire.
pub trait Wire: Sized + Copy + Default {
    /// Its bytes.
    const BYTES: usize;
    /// Its C type (`uint32_t`, `struct nt_device_operand`).
    const C_TYPE: &'static str;
    /// Its elements as a C array field (0: not an array).
    const C_COUNT: usize = 0;
    /// The value at the front of `bytes`, which it then leaves; `None` when too short.
    fn take(bytes: &mut &[u8]) -> Option<Self>;
    /// Its bytes, appended to `out`.
    fn put(&self, out: &mut Vec<u8>);
}

macro_rules! scalar {
    ($($t:ty => $c:literal),*) => {$(
        impl Wire for $t {
            const BYTES: usize = size_of::<$t>();
            const C_TYPE: &'static str = $c;
            fn take(bytes: &mut &[u8]) -> Option<Self> {
                let (head, rest) = bytes.split_first_chunk::<{ size_of::<$t>() }>()?;
                *bytes = rest;
                Some(<$t>::from_le_bytes(*head))
            }
            fn put(&self, out: &mut Vec<u8>) {
                out.extend(self.to_le_bytes());
            }
        }
    )*};
}
scalar!(u8 => "uint8_t", u32 => "uint32_t", i32 => "int32_t", u64 => "uint64_t", i64 => "int64_t", f64 => "double");

impl<T: Wire, const N: usize> Wire for [T; N]
where
    [T; N]: Default,
{
    const BYTES: usize = T::BYTES * N;
    const C_TYPE: &'static str = T::C_TYPE;
    const C_COUNT: usize = {
        assert!(T::C_COUNT == 0, "an array of arrays has no C field here");
        N
    };
    fn take(bytes: &mut &[u8]) -> Option<Self> {
        let mut all = Self::default();
        for v in &mut all {
            *v = T::take(bytes)?;
        }
        Some(all)
    }
    fn put(&self, out: &mut Vec<u8>) {
        for v in self {
            v.put(out);
        }
    }
}

/// A field of a payload as the generator writes it.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Its name, in C as in Rust.
    pub name: &'static str,
    /// Its C type.
    pub c_type: &'static str,
    /// Its elements, for an array (0: not one).
    pub count: usize,
}

/// A payload's struct as the generator writes it.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// Its C name, after `struct nt_device_`.
    pub c_name: &'static str,
    /// Its doc comment (a newline after each line).
    pub doc: &'static str,
    /// Its bytes on the wire.
    pub bytes: usize,
    /// Its fields, in order.
    pub fields: &'static [Field],
}

/// A payload's struct: its layout, for the generator and for the check that a request is
/// read as [`EXCHANGES`] says.
pub trait Payload: Wire {
    /// Its layout.
    const LAYOUT: Layout;
}

macro_rules! payloads {
    ($($(#[doc = $doc:literal])* $name:ident ($c:literal) { $($field:ident: $ty:ty,)* })*) => {
        $(
            $(#[doc = $doc])*
            #[derive(Debug, Clone, Copy, Default, PartialEq)]
            #[allow(missing_docs)]
            pub struct $name { $(pub $field: $ty,)* }

            impl Wire for $name {
                const BYTES: usize = 0 $(+ <$ty as Wire>::BYTES)*;
                const C_TYPE: &'static str = concat!("struct nt_device_", $c);
                fn take(bytes: &mut &[u8]) -> Option<Self> {
                    Some($name { $($field: <$ty as Wire>::take(bytes)?,)* })
                }
                fn put(&self, out: &mut Vec<u8>) {
                    $(self.$field.put(out);)*
                }
            }

            impl Payload for $name {
                const LAYOUT: Layout = Layout {
                    c_name: $c,
                    doc: concat!($($doc, "\n",)*),
                    bytes: <$name as Wire>::BYTES,
                    fields: &[$(Field {
                        name: stringify!($field),
                        c_type: <$ty as Wire>::C_TYPE,
                        count: <$ty as Wire>::C_COUNT,
                    },)*],
                };
            }
        )*

        /// Every payload's layout, each after the ones it holds (C's order).
        pub const LAYOUTS: &[Layout] = &[$(<$name as Payload>::LAYOUT,)*];
    };
}

payloads! {
    /// An operand or a kernel's argument (the C ABI's `nt_customop_arg`): its kind, the
    /// tensor's handle (0: not a tensor), the integer, the double.
    Operand ("operand") { kind: i32, handle: u32, i: i64, f: f64, }
    /// One tensor's handle (0: none).
    Handle ("handle") { handle: u32, }
    /// A call's place in the program: a return address (0: none).
    Site ("site") { site: u32, }
    /// A check's place in the source; the file's name follows.
    Place ("place") { line: u32, column: u32, }
    /// START's answer: the core, the model's layout; the kernel's name and its arguments
    /// follow.
    Started ("started") {
        core: u32, cores: u32, engine_base: u64, hbm_scratch: u64, hbm_base: u64,
        hbm_bytes: u64, name_bytes: u32,
    }
    /// A factory's tensor: its element type, how it is filled, its sizes (the first
    /// `ndim`), the fill's value.
    NewTensor ("new_tensor") {
        dtype: i32, fill: i32, ndim: u32, sizes: [i64; MAX_DIMS], value: Operand, site: u32,
    }
    /// A fill of a tensor with a value.
    Fill ("fill") { handle: u32, value: Operand, }
    /// An operation (`Op`'s code) on three operands, into `out` (0: a new tensor).
    Apply ("apply") { op: i32, out: u32, operands: [Operand; 3], site: u32, }
    /// A tensor's policy asked (`set` < 0) or set.
    Policy ("policy") { handle: u32, set: i32, }
    /// A value of 32 bits: a policy, a status.
    Value32 ("value32") { value: i32, }
    /// An accessor opened on a tensor.
    Open ("open") { handle: u32, kind: i32, dtype: i32, ndim: i32, }
    /// A TCM offset (-1: none); a tensor's meta follows where the exchange says so.
    TcmAt ("tcm_at") { at: i64, }
    /// An accessor closed, with its buffer's TCM offset (-1: none).
    Close ("close") { handle: u32, kind: i32, at: i64, }
    /// An index past a dimension.
    BadIndex ("bad_index") { handle: u32, dim: i32, index: i64, size: i64, }
    /// A stream used closed, or past its end.
    BadStream ("bad_stream") { handle: u32, closed: i32, write: i32, index: u64, }
    /// Bytes the TCM copies moved in and out.
    CountTcm ("count_tcm") { bytes_in: u64, bytes_out: u64, }
    /// A TCM copy of `count` elements from element `offset`.
    TcmCopy ("tcm_copy") { handle: u32, dtype: i32, offset: u64, count: u64, write: i32, site: u32, }
    /// Elements a copy wrote or read.
    Note ("note") { handle: u32, first: u64, count: u64, write: i32, }
    /// `tcm_malloc`.
    TcmMalloc ("tcm_malloc") { bytes: u64, site: u32, }
    /// `tcm_free` of a block (`at`, -1: not in the pool) at `pointer`.
    TcmFree ("tcm_free") { at: i64, pointer: u32, }
    /// The kernel's return: its tensor, its translate calls, hits and refills by window.
    Return ("return") {
        handle: u32, translations: u64, hits: [u64; RECORDS], refills: [u64; RECORDS],
    }
    /// The kernel's frames past its HBM stack: the build's `STACK_SIZE`, the depth, and
    /// whether deeper than measured (1).
    Stack ("stack") { limit: u32, depth: u64, at_least: u32, }
    /// An operation undefined in C++ (an `Undefined` code) at a place; the file's name
    /// follows.
    UndefinedAt ("undefined_at") { what: u32, line: u32, column: u32, }
    /// `neuron_hbm_allocate`.
    HbmAllocate ("hbm_allocate") { bytes: u32, align: u32, site: u32, }
    /// `neuron_hbm_allocate`'s answer: its status, the address.
    HbmAllocated ("hbm_allocated") { status: i32, address: u64, }
    /// `neuron_hbm_deallocate`.
    HbmFree ("hbm_free") { address: u64, site: u32, }
    /// `neuron_memcpy`'s check: the HBM side, and whether it is written.
    HbmCopy ("hbm_copy") { address: u64, bytes: u64, write: i32, site: u32, }
    /// A TCM copy's local buffer in the program's static or global data.
    NotDataram ("not_dataram") { address: u32, bytes: u32, site: u32, }
    /// Bytes of the TCM pool a copy is about to touch outside every block: the offset from
    /// the pool's first byte (below it as a u32 wrapped), the bytes.
    TcmSpan ("tcm_span") { offset: u32, bytes: u32, site: u32, }
    /// `malloc` and `operator new` (`new`: 1) of the C heap.
    HeapTake ("heap_take") { bytes: u64, align: u32, new: u32, site: u32, }
    /// `free` and `operator delete` of a C heap block.
    HeapGive ("heap_give") { offset: u32, }
    /// The C heap's answer: the block's offset in the C heap (-1: none; -2: outside a
    /// kernel, from the program's own heap).
    HeapAt ("heap_at") { at: i64, }
    /// PRINT's answer: the bytes printed.
    Printed ("printed") { bytes: u32, }
    /// A printf piece: its type (a `PrintPiece`) and its spec's bytes; the spec (or the
    /// text) follows, then the value of an INT, DOUBLE or STRING piece.
    Piece ("piece") { kind: u8, spec_bytes: u8, }
    /// An INT piece's value.
    PieceInt ("piece_int") { value: i64, }
    /// A DOUBLE piece's value.
    PieceDouble ("piece_double") { value: f64, }
    /// A STRING piece's bytes, which follow.
    PieceString ("piece_string") { bytes: u32, }
}

/// What a request carries and what it is answered with: a payload's struct (if any), then
/// what follows it that no struct holds, in words ("": nothing).
#[derive(Debug, Clone, Copy)]
pub struct Exchange {
    /// The request.
    pub request: DeviceRequest,
    /// The request's struct.
    pub ask: Option<Layout>,
    /// What follows it.
    pub ask_tail: &'static str,
    /// The answer's struct.
    pub answer: Option<Layout>,
    /// What follows it.
    pub answer_tail: &'static str,
}

const fn of<P: Payload>() -> Option<Layout> {
    Some(P::LAYOUT)
}

const fn x(
    request: DeviceRequest,
    (ask, ask_tail): (Option<Layout>, &'static str),
    (answer, answer_tail): (Option<Layout>, &'static str),
) -> Exchange {
    Exchange {
        request,
        ask,
        ask_tail,
        answer,
        answer_tail,
    }
}

/// A tensor's meta, as the C ABI's `nt_customop_meta` (the same layout on both sides:
/// sdk_abi.rs).
pub const META: &str = "a tensor's meta (nt_customop_meta)";
/// A check's source file.
pub const FILE_NAME: &str = "the file's name, to the payload's end";
const NONE: (Option<Layout>, &str) = (None, "");

/// Every request's exchange, in the order of their codes.
pub const EXCHANGES: &[Exchange] = {
    use DeviceRequest as R;
    &[
        x(
            R::Start,
            NONE,
            (
                of::<Started>(),
                "the kernel's name (name_bytes), u32 arguments, each an operand, then a \
                 tensor's meta when the operand is a tensor",
            ),
        ),
        x(R::New, (of::<NewTensor>(), ""), (None, META)),
        x(R::Retain, (of::<Handle>(), ""), NONE),
        x(R::Release, (of::<Handle>(), ""), NONE),
        x(R::Fill, (of::<Fill>(), ""), NONE),
        x(R::Apply, (of::<Apply>(), ""), (None, META)),
        x(R::Policy, (of::<Policy>(), ""), (of::<Value32>(), "")),
        x(R::Open, (of::<Open>(), ""), (of::<TcmAt>(), META)),
        x(R::Close, (of::<Close>(), ""), NONE),
        x(R::BadIndex, (of::<BadIndex>(), ""), NONE),
        x(R::BadStream, (of::<BadStream>(), ""), NONE),
        x(R::CountTcm, (of::<CountTcm>(), ""), NONE),
        x(R::TcmCopy, (of::<TcmCopy>(), ""), NONE),
        x(R::Note, (of::<Note>(), ""), (None, META)),
        x(R::Malloc, (of::<TcmMalloc>(), ""), (of::<TcmAt>(), "")),
        x(R::Free, (of::<TcmFree>(), ""), NONE),
        x(R::Dst, (of::<Site>(), ""), (None, META)),
        x(
            R::Print,
            (
                None,
                "printf's pieces, each a struct nt_device_piece, its spec, then an INT's struct \
                 nt_device_piece_int, a DOUBLE's struct nt_device_piece_double or a STRING's \
                 struct nt_device_piece_string and its bytes",
            ),
            (of::<Printed>(), ""),
        ),
        x(R::Return, (of::<Return>(), ""), NONE),
        x(R::Stack, (of::<Stack>(), ""), NONE),
        x(R::DivideByZero, (of::<Place>(), FILE_NAME), NONE),
        x(R::Undefined, (of::<UndefinedAt>(), FILE_NAME), NONE),
        x(
            R::HbmAllocate,
            (of::<HbmAllocate>(), ""),
            (of::<HbmAllocated>(), ""),
        ),
        x(R::HbmFree, (of::<HbmFree>(), ""), (of::<Value32>(), "")),
        x(R::HbmCopy, (of::<HbmCopy>(), ""), NONE),
        x(R::NotDataram, (of::<NotDataram>(), ""), NONE),
        x(R::TcmSpan, (of::<TcmSpan>(), ""), NONE),
        x(R::HeapTake, (of::<HeapTake>(), ""), (of::<HeapAt>(), "")),
        x(R::HeapGive, (of::<HeapGive>(), ""), NONE),
    ]
};

/// `request`'s exchange.
pub fn exchange(request: DeviceRequest) -> &'static Exchange {
    EXCHANGES
        .iter()
        .find(|e| e.request == request)
        .expect("every request has its exchange (unit/wire.rs)")
}
