//! What a core's operations and tensors refuse, each with its reason in words.

use crate::base::codes::DType;

/// An error of the per-core layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// An operation's operands have no result type under the API's rules.
    #[error("{0}")]
    Types(TypeRule),
    /// Integers to a negative integer power: no integer value.
    #[error("integers to negative integer powers")]
    NegativePower,
    /// A tensor does not fit in the HBM that is left: its sizes, element type and bytes
    /// (`None`: past 2^64), the room in one piece, and the HBM tensors have in all.
    #[error("a tensor of {sizes:?} {dtype} elements needs {} bytes; the simulated HBM has {room} bytes free in one piece (of {share} for tensors)", bytes.map_or_else(|| "more than 2^64".into(), |b| b.to_string()))]
    HbmFull {
        sizes: Vec<i64>,
        dtype: &'static str,
        bytes: Option<u64>,
        room: u64,
        share: u64,
    },
}

/// Which of the API's type rules an operation's operands break.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypeRule {
    #[error("the tensors' element types differ ({0} and {1})")]
    Differ(DType, DType),
    #[error("no tensor operand")]
    NoTensor,
    #[error("{op} takes integer tensors, not {dtype}")]
    IntegerTensors { op: &'static str, dtype: DType },
    #[error("{0} takes an integer scalar, not a floating-point one")]
    IntegerScalar(&'static str),
    #[error("a floating-point alpha on integer tensors")]
    FloatAlpha,
}
