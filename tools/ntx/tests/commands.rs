//! The `ntx` binary as cargo builds it for the tests (debug: clap checks each command's
//! definition when it is parsed, which the release build the other tests run does not):
//! its version, and every command and subcommand its help lists answers its own `--help`.

use std::process::{Command, Output};

fn ntx(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ntx"))
        .args(args)
        .output()
        .expect("ntx runs")
}

/// The commands a help text lists (the lines under "Commands:"), `help` aside.
fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_version_is_the_packages() {
    let out = ntx(&["--version"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("ntx {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn every_command_and_subcommand_answers_its_help() {
    let top = ntx(&["--help"]);
    assert!(top.status.success(), "{top:?}");
    let listed = commands(&String::from_utf8_lossy(&top.stdout));
    for c in ["abi-diff", "relink", "op"] {
        assert!(
            listed.iter().any(|l| l == c),
            "ntx --help lists no {c}: {listed:?}"
        );
    }
    let mut seen = 0;
    for c in &listed {
        let out = ntx(&[c, "--help"]);
        assert!(out.status.success(), "ntx {c} --help: {out:?}");
        seen += 1;
        for sub in commands(&String::from_utf8_lossy(&out.stdout)) {
            let out = ntx(&[c, &sub, "--help"]);
            assert!(out.status.success(), "ntx {c} {sub} --help: {out:?}");
            seen += 1;
        }
    }
    assert!(
        seen > listed.len(),
        "no subcommand was listed under any command"
    );
}
