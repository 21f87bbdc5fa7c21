//! What the tests of an installed tree share (the install tests and the SDK's): `make` one at a time, the files under a folder, the
//! version, pkg-config against one folder, the documents' blocks, the device's name.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::tools::{run_ok, tool};

/// One `make` at a time: the tests share the repository's products.
static MAKE: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn make(args: &[String]) -> std::process::Output {
    let _one = MAKE.lock().unwrap_or_else(|e| e.into_inner());
    let makebin = std::env::var("MAKE").unwrap_or_else(|_| "make".into());
    run_ok(
        Command::new(makebin)
            .arg("-s")
            .arg("-C")
            .arg(crate::root())
            .args(args),
    )
}

/// Every file under `dir`, relative to it.
pub fn files(dir: &Path) -> BTreeSet<String> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeSet<String>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.insert(p.strip_prefix(base).unwrap().display().to_string());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

pub fn version() -> String {
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(crate::root().join("Cargo.toml")).unwrap())
            .unwrap();
    manifest["workspace"]["package"]["version"]
        .as_str()
        .unwrap()
        .to_string()
}

/// `pkg-config ARGS` against `pc_dir` alone.
pub fn pkg_config(pc_dir: &Path, args: &[&str]) -> Vec<String> {
    let out = run_ok(
        Command::new(tool("PKG_CONFIG"))
            .env("PKG_CONFIG_PATH", pc_dir)
            .env("PKG_CONFIG_LIBDIR", pc_dir)
            .args(args),
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Configures the CMake project in `src` against the package installed under `prefix`
/// (the Makefile's C and C++ compilers) in `build`, and builds it.
pub fn cmake_build(src: &Path, build: &Path, prefix: &Path) {
    run_ok(
        Command::new(tool("CMAKE"))
            .arg("-S")
            .arg(src)
            .arg("-B")
            .arg(build)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
            .arg(format!("-DCMAKE_C_COMPILER={}", tool("HOST_CC")))
            .arg(format!("-DCMAKE_CXX_COMPILER={}", tool("HOST_CXX"))),
    );
    run_ok(Command::new(tool("CMAKE")).arg("--build").arg(build));
}

/// Where the quick starts' sources and their output are shown.
pub const QUICKSTART_DOC: &str = "docs/quickstart.md";

/// The fenced block that follows `marker` in `doc` (repository-relative).
pub fn doc_block(doc: &str, marker: &str) -> String {
    let text = std::fs::read_to_string(crate::root().join(doc)).unwrap();
    let after = text
        .split(marker)
        .nth(1)
        .unwrap_or_else(|| panic!("{doc} has no {marker}"));
    let body = after.split_once("```").unwrap().1;
    let body = body.split_once('\n').unwrap().1;
    body.split_once("```").unwrap().0.to_string()
}

pub const DEVICE: &str = "xtensa-ncore2gp";

/// Compiles `src` with the compiler the Makefile names `compiler`, the options `options`
/// and the build flags `flags` into `exe`, runs it, and checks that it prints `expected`
/// (`what` names the case in a failure).
pub fn build_and_run(
    compiler: &str,
    options: &[&str],
    src: &Path,
    flags: &[String],
    exe: &Path,
    expected: &str,
    what: &str,
) {
    run_ok(
        Command::new(tool(compiler))
            .args(options)
            .arg(src)
            .args(flags)
            .arg("-o")
            .arg(exe),
    );
    let out = run_ok(&mut Command::new(exe));
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected, "{what}");
}

/// Waits up to `limit` for `f` to hold (polling): whether it did.
pub fn within(limit: std::time::Duration, mut f: impl FnMut() -> bool) -> bool {
    let t = std::time::Instant::now();
    while t.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    f()
}

/// A `.npy` file (format 1.0) of float32 `values` in shape `shape`.
pub fn f32_npy(shape: &str, values: &[f32]) -> Vec<u8> {
    let mut x = b"\x93NUMPY\x01\x00".to_vec();
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    while !(header.len() + 11).is_multiple_of(64) {
        header.push(' ');
    }
    header.push('\n');
    x.extend((header.len() as u16).to_le_bytes());
    x.extend(header.as_bytes());
    for v in values {
        x.extend(v.to_le_bytes());
    }
    x
}
