//! What ntx and the custom-op SDK's runtime (sdk/runtime) both say of a run, said once:
//! the API's limits (cores a run has, ops a library registers, the shapes a tensor may
//! have, timeouts, the stack), the one check of `--cores` and `--timeout` as either
//! command line gives them, and the temporary file `--out` is written through.

use std::path::{Path, PathBuf};

/// The runner's exit statuses (the op's program, `ntx op run`, `nt_customop_run`), one
/// meaning each; the runtime's codes module lists them for C, C++ and Python
/// (`ExitStatus`).
pub mod exit {
    /// Ran (warnings allowed).
    pub const RAN: u8 = 0;
    /// A call or an input refused: nothing ran, nothing written.
    pub const REFUSED: u8 = 1;
    /// A misuse error stopped the run.
    pub const MISUSE: u8 = 2;
    /// A kernel crashed on a core.
    pub const CRASHED: u8 = 3;
    /// A kernel (or the shape function) still ran when the timeout ran out.
    pub const TIMEOUT: u8 = 4;
}

/// Most cores a run has (a NeuronCore's GPSIMD engine has eight).
pub const MAX_CORES: u32 = 8;

/// What `get_cpu_count()` says on the device whatever the build: the library's only
/// `parallel.o` returns the constant 8 (docs/customop-api.md, "Device parity"). A run here on
/// one core says the same; on 2 to 7 cores (which the device does not build) it says the
/// cores that run.
pub const DEVICE_CPU_COUNT: u32 = 8;

/// Whether the device builds an op for `cores` cores: 1 (multicore=False) or 8.
pub fn device_builds(cores: u32) -> bool {
    cores == 1 || cores == DEVICE_CPU_COUNT
}

/// Most ops in a library.
pub const MAX_OPS: usize = 10;

/// The longest kernel function name (`m.def`'s third argument) the device's codegen
/// takes: it refuses a name of 32 characters or more. The op's name has no such cap.
pub const MAX_KERNEL_NAME: usize = 31;

/// Why op `name` is refused, if it is: not an identifier (PyTorch's schema takes a name of
/// ASCII letters, digits and `_`, not starting with a digit; a `.` would make the rest an
/// overload's name, `::` a namespace).
pub fn op_name_refused(name: &str) -> Option<String> {
    let identifier = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (!identifier).then(|| {
        format!(
            "op {name:?} is not a name an op schema takes: ASCII letters, digits and '_', not \
             starting with a digit (PyTorch reads '.' as an overload, '::' as a namespace)"
        )
    })
}

/// Why op `name`, whose kernel is the function `kernel`, is refused, if it is: its name
/// ([`op_name_refused`]), or its kernel's name's length (docs/customop-api.md, "Device
/// parity").
pub fn op_refused(name: &str, kernel: &str) -> Option<String> {
    op_name_refused(name).or_else(|| {
        let length = kernel.chars().count();
        (length > MAX_KERNEL_NAME).then(|| {
            format!(
                "op '{name}' has a kernel function named '{kernel}', of {length} characters: the \
                 device's build refuses a kernel function name of {} or more",
                MAX_KERNEL_NAME + 1
            )
        })
    })
}

/// A tensor's shapes: up to 8 dimensions of at most 65535, or up to 4 of at most
/// 2^32 - 1, as (most dimensions, largest size); a shape keeps to one of them. The Python
/// package reads them from the program's `--describe`.
pub const SHAPE_LIMITS: [(usize, u64); 2] = [(8, 65535), (4, u32::MAX as u64)];

/// Whether a shape is within a tensor's limits ([`SHAPE_LIMITS`]).
pub fn within_limits(shape: &[u64]) -> bool {
    SHAPE_LIMITS
        .iter()
        .any(|&(dims, most)| shape.len() <= dims && shape.iter().all(|d| *d <= most))
}

/// Why a shape is refused: "past a tensor's limits (8 dimensions of at most 65535, or 4 of
/// at most 4294967295)".
pub fn past_limits() -> String {
    let each: Vec<String> = SHAPE_LIMITS
        .iter()
        .enumerate()
        .map(|(k, (dims, most))| {
            let unit = if k == 0 { " dimensions" } else { "" };
            format!("{dims}{unit} of at most {most}")
        })
        .collect();
    format!("past a tensor's limits ({})", each.join(", or "))
}

/// How long a call's kernels (and its shape function) may run, unless `--timeout` says
/// otherwise: far past any honest test kernel.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The longest `--timeout` (and Python `timeout`) a call may have: a year, in seconds. More
/// is refused, not waited for: the runner's clocks and `Duration` hold it with room to spare.
pub const MAX_TIMEOUT_SECS: f64 = 365.0 * 24.0 * 3600.0;

/// Why a limit given to a run is refused: the one vocabulary of the checks below, each
/// naming the value as it was given.
#[derive(Debug, Clone, PartialEq)]
pub enum LimitError {
    /// `--cores` as typed: not a number from 1 to [`MAX_CORES`].
    CoresText(String),
    /// A core count not from 1 to [`MAX_CORES`].
    Cores(u32),
    /// `--timeout` as typed: not seconds from 0 to [`MAX_TIMEOUT_SECS`].
    TimeoutText(String),
    /// A timeout in seconds (Python's `timeout=`, the server's) out of that range.
    TimeoutSecs(f64),
}

impl std::fmt::Display for LimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let seconds = format!("give seconds from 0 (no limit) to {MAX_TIMEOUT_SECS}");
        match self {
            LimitError::CoresText(text) => {
                write!(f, "--cores {text}: give a number from 1 to {MAX_CORES}")
            }
            LimitError::Cores(n) => write!(f, "--cores {n}: give a number from 1 to {MAX_CORES}"),
            LimitError::TimeoutText(text) => write!(f, "--timeout {text}: {seconds}"),
            LimitError::TimeoutSecs(secs) => write!(f, "timeout {secs}: {seconds}"),
        }
    }
}

impl std::error::Error for LimitError {}

/// A timeout of `secs` seconds: `None` for 0 (no limit), the reason for anything that is not
/// a number from 0 to [`MAX_TIMEOUT_SECS`]. The one check of every entry point's timeout.
pub fn timeout_of_secs(secs: f64) -> Result<Option<std::time::Duration>, LimitError> {
    if secs == 0.0 {
        Ok(None)
    } else if secs > 0.0 && secs <= MAX_TIMEOUT_SECS {
        Ok(Some(std::time::Duration::from_secs_f64(secs)))
    } else {
        Err(LimitError::TimeoutSecs(secs))
    }
}

/// A core count from 1 to [`MAX_CORES`], or why not: the one check of every entry point's.
pub fn cores_within(cores: u32) -> Result<u32, LimitError> {
    if (1..=MAX_CORES).contains(&cores) {
        Ok(cores)
    } else {
        Err(LimitError::Cores(cores))
    }
}

/// `--cores`'s value as typed: a number from 1 to [`MAX_CORES`], or why not.
pub fn cores_of(text: &str) -> Result<u32, LimitError> {
    let n = text
        .parse::<u32>()
        .map_err(|_| LimitError::CoresText(text.into()))?;
    cores_within(n).map_err(|_| LimitError::CoresText(text.into()))
}

/// `--timeout`'s value as typed: seconds (`None` for 0, no limit), or why not.
pub fn timeout_of(text: &str) -> Result<Option<std::time::Duration>, LimitError> {
    let why = || LimitError::TimeoutText(text.into());
    let secs = text.parse::<f64>().map_err(|_| why())?;
    timeout_of_secs(secs).map_err(|_| why())
}

/// The longest file name the system takes (`NAME_MAX`).
const NAME_MAX: usize = 255;

/// The temporary file a process `pid` writes `--out`'s `path` through: `.NAME.ntx-PID.tmp`
/// beside it (renamed to `path` when whole; ntx removes it when it ends the process
/// mid-write), NAME cut short where the whole would pass [`NAME_MAX`] bytes, so that any
/// name `--out` may have has one.
pub fn tmp_name(path: &Path, pid: u32) -> Option<PathBuf> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let suffix = format!(".ntx-{pid}.tmp");
    let mut keep = NAME_MAX.saturating_sub(1 + suffix.len()).min(name.len());
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    Some(path.with_file_name(format!(".{}{suffix}", &name[..keep])))
}

/// Whether a file can be made beside `path`: this process's temporary file for it
/// ([`tmp_name`]) made and removed at once. `None` when `path` names no file.
pub fn try_write_beside(path: &Path) -> Option<std::io::Result<()>> {
    let tmp = tmp_name(path, std::process::id())?;
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp);
    Some(made.map(|_| {
        let _ = std::fs::remove_file(&tmp);
    }))
}

/// The stack a core gives a kernel on the device unless the build says `-DSTACK_SIZE=N`:
/// the shipped library's `stack_switch.hpp` defaults `STACK_SIZE` to 4196 bytes (the
/// developer guide says "about 8 KB"; the library wins: docs/customop-api.md, "Device
/// parity"). runtime.h's `NT_CUSTOMOP_STACK_DEFAULT`, which a test holds to this.
pub const STACK_DEFAULT: u32 = 4196;

/// The most `-DSTACK_SIZE` may say: the shipped header's `MAX_STACK_SIZE`, 0x400000 (4 MiB;
/// the guide says 400 KB). runtime.h's `NT_CUSTOMOP_STACK_MAX`; the C++ headers refuse more
/// at compile time, as the device's `static_assert` does.
pub const STACK_MAX: u32 = 0x40_0000;

/// The bytes at the top of the HBM stack the device switches to that hold the saved context
/// (`allocate_hbm_stack`'s `aligned_top - 128`, stack-switch.md section 4, HIGH): the
/// kernel's frames start below them. runtime.h's `NT_CUSTOMOP_STACK_SWITCH_CONTEXT`.
pub const STACK_SWITCH_CONTEXT: u32 = 128;

/// The alignment of that stack's top (`& ~0xF`, the same section). runtime.h's
/// `NT_CUSTOMOP_STACK_SWITCH_ALIGN`.
pub const STACK_SWITCH_ALIGN: u32 = 16;

/// A core's physical local memory (`POOL_Q7_CORE{n}_DRAM`, 256 KiB each, the decode's
/// memory-map page section 7, HIGH), which holds the stack a kernel runs on when the
/// runtime does not switch: that stack's room is less. runtime.h's `NT_CUSTOMOP_CORE_DRAM`.
pub const CORE_DRAM: u32 = 256 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_name_fits_beside_any_name() {
        let long = "a".repeat(251) + ".npy";
        let t = tmp_name(Path::new(&long), 4_000_000).unwrap();
        let name = t.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.len() <= NAME_MAX && name.ends_with(".ntx-4000000.tmp"),
            "{name}"
        );
        let short = tmp_name(Path::new("dir/y.npy"), 7).unwrap();
        assert_eq!(short, Path::new("dir/.y.npy.ntx-7.tmp"));
    }

    #[test]
    fn shapes_keep_to_one_of_the_two_limits_and_the_refusal_says_both() {
        assert!(within_limits(&[65535; 8]));
        assert!(within_limits(&[u64::from(u32::MAX), 1, 1, 1]));
        assert!(!within_limits(&[65535; 9]));
        assert!(!within_limits(&[65536, 1, 1, 1, 1]));
        assert!(!within_limits(&[u64::from(u32::MAX) + 1]));
        assert_eq!(
            past_limits(),
            "past a tensor's limits (8 dimensions of at most 65535, or 4 of at most 4294967295)"
        );
    }

    #[test]
    fn kernel_names_of_32_characters_or_more_are_refused_and_op_names_are_not() {
        assert_eq!(op_refused(&"a".repeat(40), &"k".repeat(31)), None);
        assert_eq!(op_refused("_relu2", "relu"), None);
        for bad in ["", "a b", "1abc", "a-b", "a::b", "a.b", "r\u{e9}lu"] {
            let why = op_refused(bad, "k").unwrap_or_default();
            assert!(
                why.contains("is not a name an op schema takes"),
                "{bad:?}: {why}"
            );
        }
        let kernel = "k".repeat(32);
        assert_eq!(
            op_refused("g", &kernel),
            Some(format!("op 'g' has a kernel function named '{kernel}', of 32 characters: the device's build refuses a kernel function name of 32 or more"))
        );
    }

    #[test]
    fn cores_and_timeouts_as_typed_are_checked_once() {
        assert_eq!(cores_of("8"), Ok(8));
        for bad in ["0", "9", "-1", "two", ""] {
            let e = cores_of(bad).unwrap_err();
            assert_eq!(e, LimitError::CoresText(bad.into()));
            assert_eq!(
                e.to_string(),
                format!("--cores {bad}: give a number from 1 to 8")
            );
        }
        assert_eq!(cores_within(1), Ok(1));
        assert_eq!(cores_within(0), Err(LimitError::Cores(0)));
        assert_eq!(
            cores_within(9).unwrap_err().to_string(),
            "--cores 9: give a number from 1 to 8"
        );
        assert_eq!(timeout_of_secs(-1.0), Err(LimitError::TimeoutSecs(-1.0)));
        assert_eq!(timeout_of("0"), Ok(None));
        assert_eq!(
            timeout_of("0.5"),
            Ok(Some(std::time::Duration::from_millis(500)))
        );
        for bad in ["-1", "nan", "inf", "1e9", "soon"] {
            let e = timeout_of(bad).unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "--timeout {bad}: give seconds from 0 (no limit) to 31536000"
                )),
                "{e}"
            );
        }
        let t = tmp_name(Path::new("some/dir/y.npy"), 42);
        assert_eq!(t, Some(PathBuf::from("some/dir/.y.npy.ntx-42.tmp")));
    }
}
