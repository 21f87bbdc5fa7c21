//! The runner's exit statuses, one meaning each (docs/customop-host.md lists them):
//! 0 ran (warnings allowed), and the three below.

/// A call or an input refused: nothing ran, nothing written.
pub const EXIT_USAGE: i32 = 1;
/// A misuse error stopped the run.
pub const EXIT_MISUSE: i32 = 2;
/// A kernel crashed on a core.
pub const EXIT_CRASH: i32 = 3;
