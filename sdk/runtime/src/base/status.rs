//! The runner's exit statuses ([`ExitStatus`], docs/customop-host.md lists them) as the
//! integers a process exits with, and the one an error calls for.

use crate::base::codes::ExitStatus;

/// A call or an input refused: nothing ran, nothing written.
pub const EXIT_REFUSED: i32 = ExitStatus::Refused as i32;
/// A misuse error stopped the run.
pub const EXIT_MISUSE: i32 = ExitStatus::Misuse as i32;
/// A kernel crashed on a core.
pub const EXIT_CRASH: i32 = ExitStatus::Crashed as i32;
/// A kernel (or the shape function) still ran when `--timeout` ran out: every core ended.
pub const EXIT_TIMEOUT: i32 = ExitStatus::Timeout as i32;

/// The status an error among `reports` calls for: a timeout's, else a crash's, else a
/// misuse error's.
pub fn of_errors(reports: &[crate::base::misuse::Report]) -> i32 {
    use crate::base::misuse::Kind;
    if reports.iter().any(|r| r.kind == Kind::Timeout) {
        EXIT_TIMEOUT
    } else if reports.iter().any(|r| r.kind == Kind::Crashed) {
        EXIT_CRASH
    } else {
        EXIT_MISUSE
    }
}
