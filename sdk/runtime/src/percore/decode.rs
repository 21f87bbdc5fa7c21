//! Codes read into the runtime's types where a call enters: the C ABI (edges/ffi.rs,
//! edges/ffi_access.rs) and the device program's requests (run/device/answer.rs) call
//! these, and pass what they give to the layers below, which take no raw code. A code the
//! runtime does not know (headers and runtime from different SDKs) is a misuse reported
//! on the core, never a default. The calls both entries make with codes (a factory, an
//! operation, a policy, an accessor's open and close) are here once, decoded.

use crate::base::codes::{screaming, AccessorKind, ArgKind, DType, Fill, Op, Policy};
use crate::base::dtype::Num;
use crate::base::misuse::Kind;
use crate::percore::ops::{self, Operand};
use crate::percore::state::Runtime;
use crate::percore::{access, tensors};

/// `found`, or `None` after an `operation-error` saying no `what` has code `c`.
fn known<T>(rt: &mut Runtime, found: Option<T>, what: &str, c: i32) -> Option<T> {
    if found.is_none() {
        let detail = format!("no {what} has code {c}");
        rt.misuse(Kind::OpFailed, None, None, detail);
    }
    found
}

/// Element type code `c`, or `None` after an `operation-error`.
pub fn dtype(rt: &mut Runtime, c: i32) -> Option<DType> {
    known(rt, DType::from_code(c), "element type", c)
}

/// Fill code `c`, or `None` after an `operation-error`.
pub fn fill(rt: &mut Runtime, c: i32) -> Option<Fill> {
    known(rt, Fill::from_code(c), "fill", c)
}

/// Operation code `c`, or `None` after an `operation-error`.
pub fn op(rt: &mut Runtime, c: i32) -> Option<Op> {
    known(rt, Op::from_code(c), "operation", c)
}

/// Accessor kind code `c` on tensor `h`, or `None` after an `accessor-type` error.
pub fn accessor(rt: &mut Runtime, h: u32, c: i32) -> Option<AccessorKind> {
    let kind = AccessorKind::from_code(c);
    if kind.is_none() {
        let d = format!("an accessor of kind {c}, which no header of this SDK passes");
        rt.misuse(Kind::AccessorType, Some(h), None, d);
    }
    kind
}

/// What `nt_customop_policy`'s `set` asks of tensor `h`: `Some(None)` to read the policy
/// (-1), `Some(Some(p))` to set `p` first, `None` after an `operation-error`.
pub fn policy(rt: &mut Runtime, h: u32, c: i32) -> Option<Option<Policy>> {
    if c == -1 {
        return Some(None);
    }
    let p = Policy::from_code(c);
    if p.is_none() {
        let names: Vec<String> = Policy::LISTING
            .items
            .iter()
            .map(|(name, code, _)| format!("{} {code}", screaming(name)))
            .collect();
        let d = format!(
            "set_accessor_coherence_policy({c}): not a policy ({})",
            names.join(", ")
        );
        rt.misuse(Kind::OpFailed, Some(h), None, d);
    }
    p.map(Some)
}

/// An operand of kind code `kind` (`tensor` its tensor's handle, `i` and `f` its numbers),
/// or nothing after an `operation-error`.
pub fn operand(rt: &mut Runtime, kind: i32, tensor: u32, i: i64, f: f64) -> Operand {
    match ArgKind::from_code(kind) {
        Some(ArgKind::None) => Operand::None,
        Some(ArgKind::Tensor) => Operand::Tensor(tensor),
        Some(ArgKind::Int | ArgKind::ScalarInt) => Operand::Scalar(Num::Int(i)),
        Some(ArgKind::Double | ArgKind::ScalarFloat) => Operand::Scalar(Num::Float(f)),
        None => {
            let d = format!("an operand of kind {kind}, which no header of this SDK passes");
            rt.misuse(Kind::OpFailed, None, None, d);
            Operand::None
        }
    }
}

/// A new tensor of element type code `dtype` filled as fill code `fill` says (`value` for
/// `Fill::Value`): its handle, or 0 after an `operation-error` for a code not known.
pub fn factory(
    rt: &mut Runtime,
    dtype_code: i32,
    sizes: &[i64],
    fill_code: i32,
    value: Operand,
) -> u32 {
    match (dtype(rt, dtype_code), fill(rt, fill_code)) {
        (Some(d), Some(f)) => ops::factory(rt, d, sizes, f, value),
        _ => 0,
    }
}

/// Operation code `c` on `args`, into `out` or a new tensor: the result's handle, or 0
/// after an `operation-error` for a code not known.
pub fn apply(rt: &mut Runtime, c: i32, args: [Operand; 3], out: Option<u32>) -> u32 {
    match op(rt, c) {
        Some(op) => ops::apply(rt, ops::Application { op, args }, out),
        None => 0,
    }
}

/// Tensor `h`'s policy after `nt_customop_policy`'s `set` (-1: read it), as its code.
pub fn set_policy(rt: &mut Runtime, h: u32, set: i32) -> i32 {
    let set = policy(rt, h, set).flatten();
    tensors::policy(rt, h, set).code()
}

/// Opens an accessor of kind code `kind` on tensor `h`: its TCM buffer, or null (none, or
/// after an `accessor-type` error for a kind not known).
pub fn open(rt: &mut Runtime, h: u32, kind: i32, dtype_code: i32, ndim: i32) -> *mut u8 {
    match accessor(rt, h, kind) {
        Some(kind) => access::open_checked(rt, h, kind, dtype_code, ndim),
        None => core::ptr::null_mut(),
    }
}

/// Closes what [`open`] opened.
pub fn close(rt: &mut Runtime, h: u32, kind: i32, buffer: *mut u8) {
    if let Some(kind) = accessor(rt, h, kind) {
        access::close(rt, h, kind, buffer);
    }
}
