//! `ntx`'s reports as CI systems read them: SARIF 2.1.0 checked against OASIS's schema,
//! JUnit XML, and the documented CI job (docs/ci.md) run as a runner runs it.

use std::path::PathBuf;
use std::process::{Command, Output};

use nt_support::tools::scratch;

mod common;
use common::ci::*;
use common::json;

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
        sarif_results_fit(name, run);
    }
}

/// The results of the run of case `name` are what that case must give, and each names a
/// rule the driver declares.
fn sarif_results_fit(name: &str, run: &serde_json::Value) {
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
