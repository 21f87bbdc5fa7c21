//! What a run refuses or cannot do, each with its reason in words.

/// An error of the run layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
pub enum RunError {
    /// The command line or a call's arguments are refused: nothing runs (exit status
    /// `ExitStatus::Refused`).
    #[error("{0}")]
    Refused(String),
    /// The output file cannot be reserved or written.
    #[error("{0}")]
    OutFile(String),
    /// `--profile`'s files cannot be made.
    #[error("{0}")]
    Profile(String),
    /// The device program's request cannot be answered: its run ends with this.
    #[error("{0}")]
    Unanswered(String),
}
