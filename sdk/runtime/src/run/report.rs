//! What a run reports: each core's report to the runner (what it counted, its TCM copies,
//! its misuses, the tensor it returned), the reports made across cores, and how reports
//! reach stderr.

use serde::{Deserialize, Serialize};

use crate::base::misuse::{Kind, Report, Severity};
use crate::percore::state::{Access, Counts};
use crate::run::outcome::{Refusal, Stop};

/// The tensor a kernel returned.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Returned {
    /// Its element type's code.
    pub dtype: i32,
    /// Its sizes.
    pub sizes: Vec<i64>,
    /// Its HBM address.
    pub hbm_addr: u64,
    /// Its bytes.
    pub bytes: u64,
}

/// A core's run on the emulated Q7.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct DeviceReport {
    /// Instructions, by where.
    #[serde(flatten)]
    pub counts: crate::run::device::count::DeviceCounts,
    /// The output elements this core wrote (all of them on one core; on several, those
    /// its copies wrote): its count per element divides by them.
    pub elements: u64,
}

/// What a core reports to the runner.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CoreReport {
    /// The core.
    pub core: u32,
    /// Calls of neuron_translate (and _span).
    pub translations: u64,
    /// Hits by window slot.
    pub hits: [u64; neuron_translate::layout::RECORDS],
    /// Refills by window slot.
    pub refills: [u64; neuron_translate::layout::RECORDS],
    /// What the runtime counted.
    pub counts: Counts,
    /// The TCM pool's high-water mark in bytes.
    pub pool_high_water: u64,
    /// Whether it called get_dst_tensor().
    pub dst_called: bool,
    /// Where it first called it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_at: Option<crate::base::misuse::At>,
    /// Whether the kernel (on the host) raised the FPU's invalid-operation flag
    /// ([`crate::base::fpflags`]).
    #[serde(default)]
    pub fp_invalid: bool,
    /// What the kernel returned (none if it stopped on an error).
    pub returned: Option<Returned>,
    /// Its TCM copies.
    pub accesses: Vec<Access>,
    /// Its misuses.
    pub reports: Vec<Report>,
    /// On the emulated Q7 (`--device`): what it executed, and the output's elements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceReport>,
    /// `--profile`: where its counted instructions went, or why that is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Result<crate::run::device::profile::Profile, crate::run::error::RunError>>,
    /// What it printed.
    #[serde(skip)]
    pub printed: String,
}

/// Where a call's reports and its kernels' text go: a setting of the call's options, so
/// that it travels with the call (the server's calls are quiet, the runner's are not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Output {
    /// Reports are kept from stderr: the caller takes them whole (the Python front end's
    /// server).
    pub quiet: bool,
    /// What kernels print goes to stderr: stdout then holds the `--stats=json` document
    /// alone, whole, for a program to read.
    pub kernel_text_to_stderr: bool,
}

impl Output {
    /// Writes what a kernel (or shape function) printed: to stdout, or to stderr.
    pub fn kernel_text(self, bytes: &[u8]) {
        use std::io::Write;
        let _ = if self.kernel_text_to_stderr {
            let mut e = std::io::stderr().lock();
            e.write_all(bytes).and_then(|()| e.flush())
        } else {
            let mut o = std::io::stdout().lock();
            o.write_all(bytes).and_then(|()| o.flush())
        };
    }

    /// Prints every report to stderr (unless quiet); whether one is an error.
    pub fn print_reports(self, reports: &[Report]) -> bool {
        if !self.quiet {
            for r in reports {
                eprintln!("{}", r.line());
            }
        }
        reports.iter().any(|r| r.severity == Severity::Error)
    }
}

/// Prints a call's refusal, if it stopped for one (the edges that print: the runner's
/// command line and the runner API; the server answers it instead).
pub fn print_refusal(stop: &Stop) {
    if let Some(r) = &stop.refused {
        eprintln!("error: {}", r.reason);
    }
}

/// From now on in this process, a panic says in one line that it is a bug of the runtime's
/// own, never a kernel's (what a kernel does wrong is a report): what a kernel can reach
/// stops its core through `on_error`. The release profile is `panic = "abort"` (and an unwind
/// out of an `extern "C"` function aborts), so a panic never unwinds into the C++ that called
/// the SDK; the process ends there, and a core's end is
/// reported by the runner as `kernel-crashed` (signal 6) beneath this line.
pub fn panics_as_bugs() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let message = info.payload_as_str().unwrap_or_default();
            let at = info.location().map(|l| (l.file(), l.line()));
            eprintln!("{}", bug_line(message, at));
        }))
    });
}

/// [`panics_as_bugs`]'s line for a panic with `message` at `at` (file, line).
pub fn bug_line(message: &str, at: Option<(&str, u32)>) -> String {
    let at = at.map_or(String::new(), |(f, l)| format!(" ({f}:{l})"));
    format!(
        "error[sdk-bug] the SDK's runtime stopped on a bug of its own{at}: {message}; \
         nothing the kernel did caused it: please report it with the kernel and the command"
    )
}

/// A call refused, for reason `m`: the stop to return (the edge prints it:
/// [`print_refusal`]).
pub fn refuse(m: String) -> Stop {
    refuse_as(m, false)
}

/// A tensor refused for want of HBM (reason `m`), as [`refuse`].
pub fn refuse_hbm_full(m: String) -> Stop {
    refuse_as(m, true)
}

fn refuse_as(reason: String, hbm_full: bool) -> Stop {
    Stop {
        status: crate::base::codes::ExitStatus::Refused,
        refused: Some(Refusal { reason, hbm_full }),
        stats: None,
    }
}

/// A report found after the run, across cores (no one core made it).
pub fn cross_core(op: &str, kind: Kind, tensor: &str, index: String, detail: String) -> Report {
    Report {
        tensor: Some(tensor.into()),
        index: Some(index),
        ..Report::of_run(op, kind, None, detail)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_bug_says_where_and_that_the_kernel_did_not_cause_it() {
        let l = super::bug_line("a fork failed", Some(("sdk/runtime/src/run/child.rs", 9)));
        assert!(l.starts_with(
            "error[sdk-bug] the SDK's runtime stopped on a bug of its own (sdk/runtime/src/run/child.rs:9): a fork failed;"
        ));
        assert!(l.contains("nothing the kernel did caused it"));
        assert!(super::bug_line("x", None).contains("of its own: x;"));
    }
}
