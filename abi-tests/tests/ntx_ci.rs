//! `ntx` as a CI pipeline meets it: the exit codes its help states, `--fail-on`,
//! suppression files, SARIF 2.1.0 checked against OASIS's schema, JUnit XML, errors as
//! JSON (and SARIF, JUnit) on stdout, and `relink --format json`. Each flag is run on a
//! case that must fail as well as on one that must pass.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nt_support::tools::{product, run_ok, scratch, tool};

mod common;
use common::{assemble, json, mutate, ntx, FIXTURE};

/// A command line, as `ntx` takes it.
type Argv<'a> = Vec<&'a dyn AsRef<std::ffi::OsStr>>;

fn code(out: &Output) -> i32 {
    out.status.code().expect("ntx exited by a signal")
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn manifest() -> PathBuf {
    product("NT_MANIFEST")
}

fn device() -> PathBuf {
    product("NT_DEVICE_OBJ")
}

/// `ntx abi-diff --reference R --candidate C` plus `extra`.
fn abi_diff(reference: &Path, candidate: &Path, extra: &[&dyn AsRef<std::ffi::OsStr>]) -> Output {
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
        &"abi-diff",
        &"--reference",
        &reference,
        &"--candidate",
        &candidate,
    ];
    args.extend_from_slice(extra);
    ntx(&args)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The original-shaped fixture, assembled: against the device object as the reference,
/// it lacks `neuron_translate_span`, a break.
fn original(dir: &Path) -> PathBuf {
    assemble(dir, "original", FIXTURE)
}

const SPAN_ADDED: &str = "[[suppress]]\nkind = \"symbol-added\"\nsymbol = \"neuron_translate_*\"\n\
                          reason = \"our addition (docs/compatibility.md)\"\n";

/// The SARIF 2.1.0 schema as OASIS publishes it, from the sources of the pinned
/// `serde-sarif` crate (a dev-dependency), found through `cargo metadata`.
fn sarif_schema() -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // This platform's packages only: the others' sources need not be on the machine.
    let platform = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let out = run_ok(
        Command::new(cargo)
            .args(["metadata", "--format-version", "1", "--locked", "--offline"])
            .args(["--filter-platform", &platform])
            .current_dir(nt_support::root()),
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let manifest = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "serde-sarif")
        .and_then(|p| p["manifest_path"].as_str())
        .expect("serde-sarif in the dependency graph");
    let schema = Path::new(manifest).with_file_name("src/schema.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&schema).unwrap()).unwrap();
    // The `language` pattern of the published schema (on `run` and `toolComponent`) has a
    // stray `]` that an ECMA-262 (unicode) regex refuses, so a strict validator rejects the
    // whole schema. It constrains "en" or "en-US", which ntx never writes; each copy is
    // replaced by the regex it means, and nothing else is touched.
    let mut fixed = Vec::new();
    for (name, def) in v["definitions"].as_object_mut().unwrap() {
        let Some(p) = def.pointer_mut("/properties/language/pattern") else {
            continue;
        };
        if *p == "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$" {
            *p = serde_json::json!("^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
            fixed.push(name.clone());
        }
    }
    assert_eq!(fixed, ["run", "toolComponent"]);
    assert_eq!(
        v["title"],
        "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema",
        "{} is not the SARIF 2.1.0 schema",
        schema.display()
    );
    v
}

/// Every schema violation of `log`, as text (empty: valid); the log must also read back
/// as serde-sarif's typed model.
fn sarif_problems(validator: &jsonschema::Validator, log: &serde_json::Value) -> Vec<String> {
    let mut problems: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if let Err(e) = serde_json::from_value::<serde_sarif::sarif::Sarif>(log.clone()) {
        problems.push(format!("serde-sarif cannot read it: {e}"));
    }
    problems
}

fn validator() -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        // Formats too (`uri`, `uri-reference`, `date-time`), not only the structure.
        .should_validate_formats(true)
        .build(&sarif_schema())
        .expect("the schema compiles")
}

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
    let (m, d, o) = (manifest(), device(), original(&dir));
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
fn sarif_is_valid_sarif_2_1_0() {
    let validator = validator();
    // The validator can fail: a log with a level SARIF does not have is refused.
    let mut broken = json(&abi_diff(&manifest(), &device(), &[&"--format", &"sarif"]));
    assert!(sarif_problems(&validator, &broken).is_empty());
    broken["runs"][0]["results"][0]["level"] = serde_json::json!("fatal");
    assert!(
        !sarif_problems(&validator, &broken).is_empty(),
        "the schema check cannot fail"
    );

    let dir = scratch("ntx_ci_sarif");
    let s = write(&dir, "span.toml", SPAN_ADDED);
    let o = original(&dir);
    let missing_file = dir.join("no-such.o");
    let cases: Vec<(&str, Argv, PathBuf, PathBuf, i32)> = vec![
        ("clean", vec![], manifest(), device(), 0),
        (
            "suppressed",
            vec![&"--suppressions", &s, &"--fail-on", &"addition"],
            manifest(),
            device(),
            0,
        ),
        (
            "failing addition",
            vec![&"--fail-on", &"addition"],
            manifest(),
            device(),
            1,
        ),
        ("break", vec![], device(), o.clone(), 1),
        ("input error", vec![], manifest(), missing_file, 2),
    ];
    for (name, extra, r, c, want) in cases {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"--format", &"sarif"];
        args.extend(extra);
        let out = abi_diff(&r, &c, &args);
        assert_eq!(code(&out), want, "{name}: {}", text(&out));
        let log = json(&out);
        let problems = sarif_problems(&validator, &log);
        assert!(
            problems.is_empty(),
            "{name}: not valid SARIF 2.1.0:\n{}",
            problems.join("\n")
        );
        let run = &log["runs"][0];
        assert_eq!(run["invocations"][0]["exitCode"], want, "{name}");
        assert_eq!(
            run["invocations"][0]["executionSuccessful"],
            want != 2,
            "{name}"
        );
        let results = run["results"].as_array().unwrap();
        let levels: Vec<&str> = results
            .iter()
            .map(|r| r["level"].as_str().unwrap())
            .collect();
        match name {
            "clean" => assert!(!levels.contains(&"error"), "{levels:?}"),
            "suppressed" => {
                let r = results
                    .iter()
                    .find(|r| r["ruleId"] == "symbol-added")
                    .unwrap();
                assert_eq!(r["suppressions"][0]["kind"], "external");
                assert_eq!(
                    r["suppressions"][0]["justification"],
                    "our addition (docs/compatibility.md)"
                );
            }
            "failing addition" | "break" => {
                assert!(levels.contains(&"error"), "{name}: {levels:?}")
            }
            _ => {
                assert!(results.is_empty());
                let n = &run["invocations"][0]["toolExecutionNotifications"][0];
                assert_eq!(n["descriptor"]["id"], "read");
            }
        }
        // Every result names a rule the driver declares.
        let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
        for r in results {
            let i = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[i]["id"], r["ruleId"]);
        }
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn junit_lists_each_finding_as_a_test_case() {
    let dir = scratch("ntx_ci_junit");
    let s = write(&dir, "span.toml", SPAN_ADDED);
    let o = original(&dir);
    for (name, extra, r, c, want, failures, skipped) in [
        ("clean", vec![], manifest(), device(), 0, 0, 0),
        (
            "failing addition",
            vec!["--fail-on", "addition"],
            manifest(),
            device(),
            1,
            2,
            0,
        ),
        (
            "suppressed",
            vec![
                "--fail-on",
                "addition",
                "--suppressions",
                s.to_str().unwrap(),
            ],
            manifest(),
            device(),
            0,
            0,
            1,
        ),
        // Two breaks (the span missing, data_scratch_map imported) and the summary.
        ("break", vec![], device(), o.clone(), 1, 3, 0),
    ] {
        let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"--format", &"junit"];
        args.extend(extra.iter().map(|a| a as &dyn AsRef<std::ffi::OsStr>));
        let out = abi_diff(&r, &c, &args);
        assert_eq!(code(&out), want, "{name}");
        let xml = text(&out);
        let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{name}: {e}\n{xml}"));
        let suites = doc.root_element();
        assert_eq!(suites.tag_name().name(), "testsuites");
        let cases: Vec<_> = doc
            .descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
        assert_eq!(
            suites.attribute("tests"),
            Some(cases.len().to_string().as_str()),
            "{name}"
        );
        assert_eq!(
            (count("failure"), count("skipped")),
            (failures, skipped),
            "{name}\n{xml}"
        );
        assert_eq!(
            suites.attribute("failures"),
            Some(failures.to_string().as_str())
        );
        let mut names: Vec<_> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
        names.sort();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "{name}: test case names repeat");
        assert!(names.contains(&"abi-compatible"));
    }
    let out = abi_diff(&manifest(), &dir.join("none.o"), &[&"--format", &"junit"]);
    assert_eq!(code(&out), 2);
    let xml = text(&out);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let e = doc
        .descendants()
        .find(|n| n.has_tag_name("error"))
        .expect("an <error>");
    assert_eq!(e.attribute("type"), Some("read"));
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

/// The workflow in docs/ci.md, parsed.
fn documented_workflow() -> yaml_rust2::Yaml {
    let doc = std::fs::read_to_string(nt_support::root().join("docs/ci.md")).unwrap();
    let block = doc
        .split("<!-- workflow -->")
        .nth(1)
        .and_then(|r| r.split_once("```yaml\n"))
        .and_then(|(_, r)| r.split_once("```"))
        .expect("docs/ci.md has the workflow after <!-- workflow -->")
        .0;
    yaml_rust2::YamlLoader::load_from_str(block)
        .expect("the workflow is YAML")
        .remove(0)
}

/// Runs a `run:` step as GitHub's runner does (bash, -e, pipefail) from the repository root.
fn run_step(script: &str) -> Output {
    Command::new("bash")
        .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(nt_support::root())
        .output()
        .unwrap()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_documented_ci_job_runs_and_uploads_valid_sarif() {
    let wf = documented_workflow();
    let steps = wf["jobs"]["abi-diff"]["steps"]
        .as_vec()
        .expect("jobs.abi-diff.steps");
    let root = nt_support::root();
    let mut ran = 0;
    let mut uploaded = None;
    for step in steps {
        if let Some(script) = step["run"].as_str() {
            let out = run_step(script);
            assert!(
                out.status.success(),
                "step {:?} failed:\n{}\n{}",
                step["name"].as_str(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        } else if step["uses"]
            .as_str()
            .is_some_and(|u| u.contains("upload-sarif"))
        {
            assert_eq!(
                step["if"].as_str(),
                Some("always()"),
                "findings are uploaded when the diff fails too"
            );
            uploaded = step["with"]["sarif_file"].as_str().map(String::from);
        }
    }
    assert_eq!(ran, 2, "the build and the diff");
    let sarif_file = uploaded.expect("an upload-sarif step with a sarif_file");
    // Out of the tree at once, into the test's scratch directory.
    let dir = scratch("ntx_ci_workflow");
    let moved = dir.join(&sarif_file);
    std::fs::rename(root.join(&sarif_file), &moved).expect("the diff step wrote the uploaded file");
    let log: serde_json::Value = serde_json::from_slice(&std::fs::read(&moved).unwrap()).unwrap();
    let problems = sarif_problems(&validator(), &log);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The accepted addition is there, suppressed with the stored reason.
    let results = log["runs"][0]["results"].as_array().unwrap();
    let span = results
        .iter()
        .find(|r| r["ruleId"] == "symbol-added")
        .unwrap();
    assert!(span["suppressions"][0]["justification"]
        .as_str()
        .unwrap()
        .contains("this library's addition"));

    // The gate can fail: without the stored suppressions, the addition fails the step.
    let diff = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.contains("abi-diff"))
        .unwrap();
    let unsuppressed = diff.replace("--suppressions abi-tests/reference/suppressions.toml", "");
    assert_ne!(unsuppressed, diff);
    let out = run_step(&unsuppressed);
    let _ = std::fs::rename(root.join(&sarif_file), dir.join("unsuppressed.sarif"));
    assert_eq!(
        out.status.code(),
        Some(1),
        "an unaccepted addition fails the job"
    );
}
