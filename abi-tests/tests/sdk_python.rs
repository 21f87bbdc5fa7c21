//! The Python front end (sdk/python) as its users get it: `make install` into a scratch
//! prefix, the package pip-installed (from a copy, so nothing is written into the checkout)
//! into the SDK checks' environment (`make sdk-env`: NumPy, pytest, ml_dtypes), then its
//! pytest suite against the installed `ntx`: load and its cache, every element type,
//! argument kinds, 1/2/8 cores, misuse and crash, kept workers, SIGKILL of the caller,
//! and every kernel's output and reports against the op's program run as `ntx op run`
//! runs it.

mod install_support;

use std::process::Command;

use install_support::make;
use nt_support::qemu::root;
use nt_support::tools::{run_ok, scratch};

fn python() -> String {
    std::env::var("NT_SDK_PYTHON").expect("NT_SDK_PYTHON: run the tests with `make test`")
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let name = e.file_name();
        let skip = ["build", "__pycache__", ".pytest_cache"];
        if skip.iter().any(|s| name == *s) || name.to_string_lossy().ends_with(".egg-info") {
            continue;
        }
        if e.path().is_dir() {
            copy_tree(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_python_package_passes_its_tests_from_an_installed_tree() {
    let dir = scratch("sdk_python");
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    let package = dir.join("package");
    copy_tree(&root().join("sdk/python"), &package);
    run_ok(
        Command::new(python())
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(["--no-build-isolation", "--no-deps", "--force-reinstall"])
            .arg(&package),
    );
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
