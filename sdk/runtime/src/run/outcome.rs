//! What a call came to, handed back to whichever edge made it (the runner's command line,
//! the runner API, the server): its output, or why it stopped, with the stats document
//! when the options asked for it back. Nothing of a call is left in a global for an edge
//! to collect afterwards.

use serde_json::Value;

use crate::base::codes::ExitStatus;

/// A call refused before its kernel ran: why, and whether for want of HBM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The reason, for people.
    pub reason: String,
    /// Whether HBM had no room for a tensor (the server says `"kind": "hbm-full"`).
    pub hbm_full: bool,
}

impl Refusal {
    /// A refusal for `reason`.
    pub fn because(reason: String) -> Refusal {
        Refusal {
            reason,
            hbm_full: false,
        }
    }

    /// A refusal for want of HBM, for `reason`.
    pub fn hbm_full(reason: String) -> Refusal {
        Refusal {
            reason,
            hbm_full: true,
        }
    }
}

/// Why a call stopped without an output.
#[derive(Debug)]
pub struct Stop {
    /// The exit status (never [`ExitStatus::Ran`]).
    pub status: ExitStatus,
    /// The reason, when the call was refused.
    pub refused: Option<Refusal>,
    /// The stats document ([`crate::run::options::StatsFormat::Return`]).
    pub stats: Option<Value>,
}

impl Stop {
    /// A stop with status `status` (a misuse error, a crash, a timeout) and no refusal.
    pub fn status(status: ExitStatus, stats: Option<Value>) -> Stop {
        Stop {
            status,
            refused: None,
            stats,
        }
    }
}

/// A call that ran: its output and the stats document asked back.
#[derive(Debug)]
pub struct Produced<T> {
    /// The output (a tensor handle holding one reference, or the shape function's result).
    pub output: T,
    /// The stats document ([`crate::run::options::StatsFormat::Return`]).
    pub stats: Option<Value>,
}

/// What a call came to.
pub type Outcome<T> = Result<Produced<T>, Stop>;
