//! The runner's exit statuses, one meaning each (docs/customop-host.md lists them):
//! 0 ran (warnings allowed), and the four below.

/// A call or an input refused: nothing ran, nothing written.
pub const EXIT_USAGE: i32 = 1;
/// A misuse error stopped the run.
pub const EXIT_MISUSE: i32 = 2;
/// A kernel crashed on a core.
pub const EXIT_CRASH: i32 = 3;
/// A kernel (or the shape function) still ran when `--timeout` ran out: every core ended.
pub const EXIT_TIMEOUT: i32 = 4;

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
