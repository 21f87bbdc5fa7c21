//! Helpers the `ntx` test files share: running the installed-as-built `ntx`, assembling
//! the seed-shaped fixture and its mutants for Xtensa, reading JSON output.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nt_support::tools::{product, run_ok, tool};

pub mod ci;

pub const FIXTURE: &str = include_str!("../../fixtures/original.S");

pub fn ntx(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut c = Command::new(product("NT_NTX"));
    for a in args {
        c.arg(a);
    }
    c.output().expect("run ntx")
}

pub fn assemble(dir: &Path, name: &str, source: &str) -> PathBuf {
    let s = dir.join(format!("{name}.S"));
    let o = dir.join(format!("{name}.o"));
    std::fs::write(&s, source).unwrap();
    // --abi-windowed: the original is windowed code (docs/original.md §3: entry/retw).
    run_ok(
        Command::new(tool("XTENSA_AS"))
            .arg("--abi-windowed")
            .arg(&s)
            .arg("-o")
            .arg(&o),
    );
    o
}

/// The fixture with the line carrying `marker` replaced.
pub fn mutate(marker: &str, replacement: &str) -> String {
    mutate_with(marker, |_| replacement.to_string())
}

/// The fixture with every line carrying `marker` rewritten by `f`.
pub fn mutate_with(marker: &str, f: impl Fn(&str) -> String) -> String {
    let mut found = false;
    let out: Vec<String> = FIXTURE
        .lines()
        .map(|l| {
            if l.contains(marker) {
                found = true;
                f(l)
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(found, "no line marked {marker}");
    out.join("\n") + "\n"
}

pub fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}
