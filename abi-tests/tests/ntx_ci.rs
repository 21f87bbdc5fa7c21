//! `ntx` as a CI pipeline meets it: the exit codes its help states, `--fail-on`,
//! suppression files, SARIF 2.1.0 checked against OASIS's schema, JUnit XML, errors as
//! JSON (and SARIF, JUnit) on stdout, and `relink --format json`. Each flag is run on a
//! case that must fail as well as on one that must pass.

use std::path::Path;
use std::process::Command;

use nt_support::tools::{run_ok, scratch, tool};

mod common;
use common::{assemble, json, mutate, ntx};

use common::ci::*;

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn help_states_the_exit_codes() {
    for args in [
        &["--help"][..],
        &["abi-diff", "--help"],
        &["relink", "--help"],
    ] {
        let a: Vec<&dyn AsRef<std::ffi::OsStr>> = args
            .iter()
            .map(|s| s as &dyn AsRef<std::ffi::OsStr>)
            .collect();
        let out = ntx(&a);
        assert_eq!(code(&out), 0);
        let help = text(&out);
        let status = help
            .split("Exit status:")
            .nth(1)
            .unwrap_or_else(|| panic!("ntx {args:?} does not state the exit status:\n{help}"));
        for c in ["  0  ", "  1  ", "  2  "] {
            assert!(
                status.contains(c),
                "ntx {args:?}: no line for exit {c}:\n{status}"
            );
        }
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn fail_on_decides_the_exit_status() {
    // The device object against the manifest: one addition (the span), four notes.
    let (m, d) = (manifest(), device());
    assert_eq!(code(&abi_diff(&m, &d, &[])), 0, "default: --fail-on break");
    assert_eq!(code(&abi_diff(&m, &d, &[&"--fail-on", &"break"])), 0);
    let out = abi_diff(&m, &d, &[&"--fail-on", &"addition"]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(text(&out).contains("FAIL: 1 finding(s) at or above --fail-on addition"));
    assert_eq!(code(&abi_diff(&m, &d, &[&"--fail-on", &"note"])), 1);
    let out = abi_diff(&m, &d, &[&"--fail-on", &"warning"]);
    assert_eq!(code(&out), 2, "an unknown class is a usage error");
    // A break fails at every threshold.
    let dir = scratch("ntx_ci_fail_on");
    let o = original(&dir);
    for t in ["break", "addition", "note"] {
        let out = abi_diff(&d, &o, &[&"--fail-on", &t]);
        assert_eq!(code(&out), 1, "--fail-on {t}: {}", text(&out));
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn suppressions_accept_a_known_difference_and_still_list_it() {
    let dir = scratch("ntx_ci_suppress");
    let (m, d) = (manifest(), device());
    // The addition suppressed: --fail-on addition passes, the finding stays listed.
    let s = write(&dir, "span.toml", SPAN_ADDED);
    let out = abi_diff(&m, &d, &[&"--fail-on", &"addition", &"--suppressions", &s]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let t = text(&out);
    assert!(t.contains("1 suppressed"), "{t}");
    assert!(
        t.contains("[suppressed addition] symbol-added: neuron_translate_span"),
        "{t}"
    );
    assert!(
        t.contains("suppressed: our addition (docs/compatibility.md)"),
        "{t}"
    );
    // ...but the notes still fail --fail-on note.
    assert_eq!(
        code(&abi_diff(
            &m,
            &d,
            &[&"--fail-on", &"note", &"--suppressions", &s]
        )),
        1
    );
    // JSON: the reason on the finding, the counts without it.
    let v = json(&abi_diff(
        &m,
        &d,
        &[&"--format", &"json", &"--suppressions", &s],
    ));
    assert_eq!(
        (v["additions"].as_u64(), v["suppressed"].as_u64()),
        (Some(0), Some(1))
    );
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "symbol-added")
        .unwrap();
    assert_eq!(f["suppressed"], "our addition (docs/compatibility.md)");
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn suppressions_accept_breaks_one_rule_each_and_report_unused_rules() {
    let dir = scratch("ntx_ci_suppress_breaks");
    let (d, o) = (device(), original(&dir));
    // Breaks accepted explicitly: against the device object, the original lacks the span
    // and imports data_scratch_map. One rule covers one of them; both rules, both.
    let out = abi_diff(&d, &o, &[]);
    assert_eq!(code(&out), 1);
    let span_rule = "[[suppress]]\nkind = \"symbol-missing\"\nsymbol = \"neuron_translate_span\"\n\
         reason = \"comparing against the original on purpose\"\n";
    let one = write(&dir, "one.toml", span_rule);
    let out = abi_diff(&d, &o, &[&"--suppressions", &one]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        text(&out).starts_with("INCOMPATIBLE: 1 break(s)"),
        "{}",
        text(&out)
    );
    let missing = write(
        &dir,
        "missing.toml",
        &format!(
            "{span_rule}[[suppress]]\nkind = \"import-added\"\nsymbol = \"data_scratch_map\"\n\
             reason = \"the original imports it\"\n"
        ),
    );
    let out = abi_diff(&d, &o, &[&"--suppressions", &missing]);
    assert_eq!(code(&out), 0, "{}", text(&out));
    assert!(
        text(&out).starts_with("COMPATIBLE: 0 break(s)"),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("[suppressed break] symbol-missing"));
    // A rule for another symbol does not cover it, and is reported as unused.
    let other = write(
        &dir,
        "other.toml",
        "[[suppress]]\nkind = \"symbol-missing\"\nsymbol = \"_Z16*\"\nreason = \"stale\"\n",
    );
    let out = abi_diff(&d, &o, &[&"--suppressions", &other]);
    assert_eq!(code(&out), 1, "{}", text(&out));
    assert!(
        text(&out).contains("warning: suppression symbol-missing \"_Z16*\" matched no finding"),
        "{}",
        text(&out)
    );
    let v = json(&abi_diff(
        &d,
        &o,
        &[&"--format", &"json", &"--suppressions", &other],
    ));
    assert_eq!(v["unused_suppressions"][0]["symbol"], "_Z16*");
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_suppression_without_a_reason_is_refused_before_any_work() {
    let dir = scratch("ntx_ci_suppress_bad");
    let (d, o) = (device(), original(&dir));
    // A rule without a reason is refused before any work, in the asked format.
    let bad = write(
        &dir,
        "bad.toml",
        "[[suppress]]\nkind = \"symbol-missing\"\nsymbol = \"*\"\nreason = \"\"\n",
    );
    let out = abi_diff(&d, &o, &[&"--format", &"json", &"--suppressions", &bad]);
    assert_eq!(code(&out), 2);
    let v = json(&out);
    assert_eq!(v["error"]["kind"], "bad-suppressions");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has no reason"),
        "{v}"
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn errors_are_json_on_stdout_with_a_stable_kind() {
    let dir = scratch("ntx_ci_errors");
    let garbage = write(&dir, "garbage.o", "not an object");
    let table = write(&dir, "short.bin", "too short");
    let m = manifest();
    let (none, out_a) = (dir.join("none.o"), dir.join("o.a"));
    let cases: Vec<(Argv, &str)> = vec![
        (
            vec![
                &"abi-diff",
                &"--reference",
                &m,
                &"--candidate",
                &none,
                &"--format",
                &"json",
            ],
            "read",
        ),
        (
            vec![
                &"abi-diff",
                &"--reference",
                &m,
                &"--candidate",
                &garbage,
                &"--format",
                &"json",
            ],
            "unknown-format",
        ),
        (
            vec![&"abi-diff", &"--reference", &m, &"--format", &"json"],
            "usage",
        ),
        (vec![&"abi-diff", &"--format=json", &"--bogus"], "usage"),
        (
            vec![&"explain", &table, &"--format", &"json"],
            "malformed-table",
        ),
        (
            vec![
                &"relink",
                &"--archive",
                &garbage,
                &"--object",
                &garbage,
                &"--out",
                &out_a,
                &"--format",
                &"json",
            ],
            "malformed-archive",
        ),
    ];
    for (args, kind) in cases {
        let out = ntx(&args);
        assert_eq!(code(&out), 2);
        let v = json(&out);
        assert_eq!(v["version"], 1);
        assert_eq!(v["error"]["kind"], kind, "{v}");
        assert!(!v["error"]["message"].as_str().unwrap().is_empty());
        assert!(v["error"]["file"].is_string());
        // The same error reaches a person on stderr.
        assert!(String::from_utf8_lossy(&out.stderr).contains("ntx: error: "));
    }
    // In text, stdout stays empty.
    let out = ntx(&[&"abi-diff", &"--reference", &m, &"--candidate", &garbage]);
    assert_eq!((code(&out), out.stdout.is_empty()), (2, true));
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn relink_reports_in_json() {
    let dir = scratch("ntx_ci_relink");
    let vendor = dir.join("vendor.a");
    run_ok(
        Command::new(tool("LLVM_AR"))
            .arg("rcs")
            .arg(&vendor)
            .arg(original(&dir)),
    );
    // original.o is the member's name; relink the device object in as it.
    let relink = |object: &Path, out: &Path, extra: &[&str]| {
        let mut a: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
            &"relink",
            &"--archive",
            &vendor,
            &"--member",
            &"original.o",
            &"--object",
            &object,
            &"--out",
            &out,
            &"--format",
            &"json",
        ];
        a.extend(extra.iter().map(|s| s as &dyn AsRef<std::ffi::OsStr>));
        ntx(&a)
    };
    let out_a = dir.join("patched.a");
    let out = relink(&device(), &out_a, &[]);
    assert_eq!(code(&out), 0, "{}", String::from_utf8_lossy(&out.stderr));
    let v = json(&out);
    assert_eq!(v["version"], 1);
    assert_eq!(v["relink"]["written"], true);
    assert_eq!(v["relink"]["members"], 1);
    assert_eq!(v["report"]["breaks"], 0);
    assert!(out_a.exists());

    // _sbuf_window made local: a break, refused, nothing written.
    let broken = assemble(
        &dir,
        "broken",
        &mutate("@MUTATE-SBUF-BINDING", "\t.local _sbuf_window"),
    );
    let refused_a = dir.join("refused.a");
    let out = relink(&broken, &refused_a, &[]);
    assert_eq!(code(&out), 1);
    let v = json(&out);
    assert_eq!(v["relink"]["written"], false);
    assert!(v["relink"]["refused"]
        .as_str()
        .unwrap()
        .contains("refusing to relink"));
    assert!(v["report"]["breaks"].as_u64().unwrap() > 0);
    assert!(!refused_a.exists());
    // Forced: written, exit 1, and the JSON says it was forced.
    let out = relink(&broken, &refused_a, &["--force"]);
    assert_eq!(code(&out), 1);
    let v = json(&out);
    assert_eq!(
        (
            v["relink"]["written"].as_bool(),
            v["relink"]["forced"].as_bool()
        ),
        (Some(true), Some(true))
    );
}
