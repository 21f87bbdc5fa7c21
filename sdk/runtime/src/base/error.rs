//! What the base layer's rules refuse, each with its reason in words.

/// An error of the base layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseError {
    /// A `.npy` file's bytes are not an array the API holds.
    #[error("{0}")]
    Npy(String),
    /// A `.npy` file could not be read (the system's reason, or what the path is instead).
    #[error("{0}")]
    Read(String),
}
