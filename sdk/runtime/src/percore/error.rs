//! What a core's operations and tensors refuse, each with its reason in words.

/// An error of the per-core layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// An operation's operands have no result type under the API's rules.
    #[error("{0}")]
    Types(String),
    /// An element has no value under the operation (an integer division by zero, say).
    #[error("{0}")]
    Element(String),
    /// A tensor does not fit in the HBM that is left.
    #[error("{0}")]
    HbmFull(String),
}
