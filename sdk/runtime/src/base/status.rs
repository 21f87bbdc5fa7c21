//! The status an error calls for, as the runner's exit statuses ([`ExitStatus`],
//! docs/customop-host.md lists them) name it. The run layer carries an [`ExitStatus`];
//! only the process's exit and the C ABI's return turn it into its integer (`code()`).

use crate::base::codes::ExitStatus;

/// The status an error among `reports` calls for: a timeout's, else a crash's, else a
/// misuse error's.
pub fn of_errors(reports: &[crate::base::misuse::Report]) -> ExitStatus {
    use crate::base::misuse::Kind;
    if reports.iter().any(|r| r.kind == Kind::Timeout) {
        ExitStatus::Timeout
    } else if reports.iter().any(|r| r.kind == Kind::Crashed) {
        ExitStatus::Crashed
    } else {
        ExitStatus::Misuse
    }
}
