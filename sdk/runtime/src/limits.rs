//! The API's limits: cores a run has, ops a library registers, the shapes a tensor may
//! have.

/// Most cores a run has (a NeuronCore's GPSIMD engine has eight).
pub const MAX_CORES: u32 = 8;

/// Most ops in a library.
pub const MAX_OPS: usize = 10;

/// Whether a shape is within a tensor's limits: up to 8 dimensions of at most 65535, or
/// up to 4 of at most 2^32 - 1.
pub fn within_limits(shape: &[u64]) -> bool {
    let small = shape.len() <= 8 && shape.iter().all(|d| *d <= 65535);
    let large = shape.len() <= 4 && shape.iter().all(|d| *d <= u64::from(u32::MAX));
    small || large
}

/// How long a call's kernels (and its shape function) may run, unless `--timeout` says
/// otherwise: far past any honest test kernel.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);
