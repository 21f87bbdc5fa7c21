//! What the SDK's tests (`tests/`) share: where our kernels are, an installed tree to run
//! them from, and the Python that runs their checks. `make test` runs the tests (they need
//! the tools and products its Makefile names); docs/testing.md lists what each holds.

use std::path::{Path, PathBuf};

/// Our kernels and their checks (`customops/`): each kernel's cases by name in a header,
/// the Python scripts that run them against NumPy.
pub fn kernels() -> PathBuf {
    nt_support::root().join("sdk/tests/customops")
}

/// `make install` into a fresh prefix under `dir`: its `ntx`.
pub fn install(dir: &Path) -> PathBuf {
    let prefix = dir.join("prefix");
    nt_support::install::make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    prefix.join("bin/ntx")
}

/// The Python the Makefile made for the SDK's checks (NumPy and pytest in it).
pub fn python() -> String {
    std::env::var("NT_SDK_PYTHON").expect("NT_SDK_PYTHON: run the tests with `make test`")
}
