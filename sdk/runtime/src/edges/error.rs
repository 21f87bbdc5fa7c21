//! What the edges refuse of a request as it comes in, with its reason in words.

/// An error of the edges layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EdgeError {
    /// A server request's element type is no code the API has.
    #[error("no element type has code {0}")]
    NoDType(i32),
    /// A server request's shape is past the API's limits.
    #[error("shape {shape:?} is {}", crate::base::limits::past_limits())]
    PastLimits { shape: Vec<i64> },
}
