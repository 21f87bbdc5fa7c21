//! What the edges refuse of a request as it comes in, with its reason in words.

/// An error of the edges layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EdgeError {
    /// A server request's tensor is not one the API holds.
    #[error("{0}")]
    BadRequest(String),
}
