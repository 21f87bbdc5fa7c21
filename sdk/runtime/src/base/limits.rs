//! The API's limits: cores a run has, ops a library registers, the shapes a tensor may
//! have.

/// Most cores a run has (a NeuronCore's GPSIMD engine has eight).
pub const MAX_CORES: u32 = 8;

/// Most ops in a library.
pub const MAX_OPS: usize = 10;

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

/// A timeout of `secs` seconds: `None` for 0 (no limit), the reason for anything that is not
/// a number from 0 to [`MAX_TIMEOUT_SECS`]. The one check of every entry point's timeout.
pub fn timeout_of_secs(secs: f64) -> Result<Option<std::time::Duration>, String> {
    if secs == 0.0 {
        Ok(None)
    } else if secs > 0.0 && secs <= MAX_TIMEOUT_SECS {
        Ok(Some(std::time::Duration::from_secs_f64(secs)))
    } else {
        Err(format!(
            "timeout {secs}: give seconds from 0 (no limit) to {MAX_TIMEOUT_SECS}"
        ))
    }
}

/// The stack a core gives a kernel on the device unless the build says `-DSTACK_SIZE=N`:
/// "about 8 KB" in the vendor's developer guide, taken as 8 KiB (runtime.h's
/// `NT_CUSTOMOP_STACK_DEFAULT`, which a test holds to this).
pub const STACK_DEFAULT: u32 = 8192;

/// The most `-DSTACK_SIZE` may say: "at most 400 KB", taken as 400 KiB (runtime.h's
/// `NT_CUSTOMOP_STACK_MAX`; the C++ headers refuse more at compile time).
pub const STACK_MAX: u32 = 400 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

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
}
