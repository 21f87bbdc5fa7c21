//! The Python front end (sdk/python) as its users get it: `make install` into a scratch
//! prefix, the package pip-installed (`make python-package`: from a copy, so nothing is
//! written into the checkout) into the SDK checks' environment (NumPy, pytest, ml_dtypes), then its
//! pytest suite against the installed `ntx`: load and its cache, every element type,
//! argument kinds, 1/2/8 cores, misuse and crash, kept workers, SIGKILL of the caller,
//! and every kernel's output and reports against the op's program run as `ntx op run`
//! runs it.

use std::process::Command;

use nt_sdk_tests::python;
use nt_support::install::make;
use nt_support::qemu::root;
use nt_support::tools::scratch;

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_python_package_passes_its_tests_from_an_installed_tree() {
    let dir = scratch("sdk_python");
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    make(&["python-package".into()]);
    let package = root().join("target/python-package");
    let out = Command::new(python())
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(package.join("tests"))
        .env("NEURON_CUSTOMOP_HOST_NTX", prefix.join("bin/ntx"))
        .env("NT_ROOT", root())
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("PKG_CONFIG_PATH")
        .current_dir(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pytest failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = text.lines().last().unwrap_or_default();
    assert!(
        last.contains(" passed") && !last.contains("failed") && !last.contains("skipped"),
        "{last}"
    );
}
