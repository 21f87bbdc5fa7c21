//! The renderings of a diff a CI shows natively: SARIF 2.1.0 (code-scanning views) and
//! JUnit XML (test-report views), plus the JSON envelope of an error. Text and the JSON
//! report itself are [`Report::to_text`] and `Report`'s `Serialize`.

use std::io;

use quick_xml::events::{BytesDecl, BytesText, Event};
use quick_xml::Writer;
use serde_json::{json, Value};

use crate::diff::Report;
use crate::error::Error;
use crate::finding::{Class, Finding, FindingKind};

/// The `$schema` of the SARIF `ntx` writes: OASIS's SARIF 2.1.0 (errata 01).
pub const SARIF_SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The version of `ntx`, as tools that record one show it.
pub const TOOL_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The JSON an error is under `--format json`: `{"version": 1, "error": {kind, file,
/// message}}`, with `error.kind` one of [`crate::error::ErrorKind`]'s spellings.
pub fn json_error(e: &Error) -> Value {
    json!({ "version": 1, "error": e })
}

/// A SARIF level for a finding: `error` for what fails the run (`--fail-on`), else by
/// class.
fn level(f: &Finding, fail_on: Class) -> &'static str {
    match f.class {
        c if c <= fail_on => "error",
        Class::Break => "error",
        Class::Addition => "warning",
        Class::Note => "note",
    }
}

/// A path as a SARIF `uri-reference`: relative paths stay relative (to the run's working
/// directory), absolute ones become `file://` URIs; an archive member `a.a(m.o)` points at
/// the archive. Bytes outside the unreserved set and `/` are percent-encoded.
pub fn artifact_uri(source: &str) -> String {
    let path = match source.rfind('(') {
        Some(i) if source.ends_with(')') => &source[..i],
        _ => source,
    };
    let mut out = String::new();
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn rules() -> Vec<Value> {
    FindingKind::ALL
        .iter()
        .map(|k| {
            json!({
                "id": k.to_string(),
                "shortDescription": { "text": k.meaning() },
            })
        })
        .collect()
}

fn sarif_result(f: &Finding, fail_on: Class, artifact: &str) -> Value {
    let rule_index = FindingKind::ALL.iter().position(|k| *k == f.kind);
    let mut location = json!({
        "physicalLocation": { "artifactLocation": { "uri": artifact } }
    });
    if let Some(sym) = &f.symbol {
        location["logicalLocations"] = json!([{
            "name": f.demangled.as_deref().unwrap_or(sym),
            "decoratedName": sym,
            "fullyQualifiedName": f.demangled.as_deref().unwrap_or(sym),
        }]);
    }
    let mut properties = json!({ "class": f.class });
    for (k, v) in f.facts() {
        properties[k] = json!(v);
    }
    let mut r = json!({
        "ruleId": f.kind.to_string(),
        "ruleIndex": rule_index,
        "level": level(f, fail_on),
        "message": { "text": f.message },
        "locations": [location],
        "partialFingerprints": {
            "ntxFinding/v1": format!("{}:{}:{}", f.kind, f.symbol.as_deref().unwrap_or(""), f.message),
        },
        "properties": properties,
    });
    if let Some(reason) = &f.suppressed {
        r["suppressions"] = json!([{ "kind": "external", "justification": reason }]);
    }
    r
}

/// The SARIF 2.1.0 log of one `abi-diff` run: a result per finding (suppressed ones with
/// their suppression), or, when the run failed on its input, no results and the error as
/// a tool execution notification. `exit_code` is the one `ntx` exits with.
pub fn sarif(outcome: Result<&Report, &Error>, fail_on: Class, exit_code: u8) -> Value {
    let mut run = json!({
        "tool": { "driver": {
            "name": "ntx",
            "semanticVersion": TOOL_VERSION,
            "rules": rules(),
        }},
        "columnKind": "unicodeCodePoints",
    });
    let mut invocation = json!({ "executionSuccessful": outcome.is_ok(), "exitCode": exit_code });
    match outcome {
        Ok(report) => {
            let artifact = artifact_uri(&report.candidate);
            run["artifacts"] = json!([{
                "location": { "uri": artifact },
                "roles": ["analysisTarget"],
            }]);
            run["results"] = report
                .findings
                .iter()
                .map(|f| sarif_result(f, fail_on, &artifact))
                .collect();
            run["properties"] = json!({
                "reference": report.reference,
                "breaks": report.breaks,
                "additions": report.additions,
                "notes": report.notes,
                "suppressed": report.suppressed,
                "failOn": fail_on,
            });
        }
        Err(e) => {
            run["results"] = json!([]);
            invocation["toolExecutionNotifications"] = json!([{
                "level": "error",
                "message": { "text": e.to_string() },
                "descriptor": { "id": e.kind.spelling() },
            }]);
        }
    }
    run["invocations"] = json!([invocation]);
    json!({ "$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run] })
}

fn detail(f: &Finding) -> String {
    let mut s = f.message.clone();
    let symbol = f.demangled.as_deref().map(|v| ("symbol", v));
    for (label, v) in symbol.into_iter().chain(f.facts()) {
        s.push_str(&format!("\n{label}: {v}"));
    }
    s
}

/// The JUnit XML report of one `abi-diff` run: one test case per finding (a failure when
/// it fails the run under `fail_on`, skipped when suppressed, passed otherwise) and a
/// final `abi-compatible` case that fails exactly when the run does. When the run failed
/// on its input, one case with an `<error>`.
pub fn junit(outcome: Result<&Report, &Error>, fail_on: Class) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    let written = write_junit(&mut w, outcome, fail_on);
    // Writing into a Vec cannot fail.
    debug_assert!(written.is_ok());
    String::from_utf8_lossy(&w.into_inner()).into_owned() + "\n"
}

fn write_junit(
    w: &mut Writer<Vec<u8>>,
    outcome: Result<&Report, &Error>,
    fail_on: Class,
) -> io::Result<()> {
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let (name, tests, failures, skipped, errors) = match outcome {
        Ok(r) => (
            format!("ntx abi-diff: {} against {}", r.candidate, r.reference),
            r.findings.len() + 1,
            r.failing(fail_on).count() + usize::from(r.fails(fail_on)),
            r.suppressed,
            0,
        ),
        Err(e) => (format!("ntx abi-diff: {}", e.file), 1, 0, 0, 1),
    };
    let counts = [
        ("tests", tests.to_string()),
        ("failures", failures.to_string()),
        ("errors", errors.to_string()),
        ("skipped", skipped.to_string()),
    ];
    let attrs = |extra: &[(&'static str, String)]| -> Vec<(&'static str, String)> {
        let mut v = vec![("name", name.clone())];
        v.extend(counts.iter().cloned());
        v.extend(extra.iter().cloned());
        v
    };
    let suites = attrs(&[]);
    let suite = attrs(&[("id", "0".into())]);
    w.create_element("testsuites")
        .with_attributes(suites.iter().map(|(k, v)| (*k, v.as_str())))
        .write_inner_content(|w| {
            w.create_element("testsuite")
                .with_attributes(suite.iter().map(|(k, v)| (*k, v.as_str())))
                .write_inner_content(|w| match outcome {
                    Ok(r) => junit_cases(w, r, fail_on),
                    Err(e) => {
                        let kind = e.kind.spelling();
                        w.create_element("testcase")
                            .with_attributes([("classname", "ntx.abi-diff"), ("name", "input")])
                            .write_inner_content(|w| {
                                w.create_element("error")
                                    .with_attributes([
                                        ("type", kind.as_str()),
                                        ("message", e.to_string().as_str()),
                                    ])
                                    .write_empty()?;
                                Ok(())
                            })?;
                        Ok(())
                    }
                })?;
            Ok(())
        })?;
    Ok(())
}

fn junit_cases(w: &mut Writer<Vec<u8>>, r: &Report, fail_on: Class) -> io::Result<()> {
    for f in &r.findings {
        let classname = format!("ntx.abi-diff.{}", f.class);
        // The message tells findings of one kind and symbol apart (a function's references).
        let name = format!("{}: {}", f.kind, f.message);
        let kind = f.kind.to_string();
        w.create_element("testcase")
            .with_attributes([("classname", classname.as_str()), ("name", name.as_str())])
            .write_inner_content(|w| {
                if let Some(reason) = &f.suppressed {
                    let m = format!("suppressed: {reason}");
                    w.create_element("skipped")
                        .with_attribute(("message", m.as_str()))
                        .write_empty()?;
                } else if f.class <= fail_on {
                    w.create_element("failure")
                        .with_attributes([("type", kind.as_str()), ("message", f.message.as_str())])
                        .write_text_content(BytesText::new(&detail(f)))?;
                } else {
                    w.create_element("system-out")
                        .write_text_content(BytesText::new(&detail(f)))?;
                }
                Ok(())
            })?;
    }
    let failing = r.failing(fail_on).count();
    w.create_element("testcase")
        .with_attributes([("classname", "ntx.abi-diff"), ("name", "abi-compatible")])
        .write_inner_content(|w| {
            if failing > 0 {
                let m = format!("{failing} finding(s) at or above --fail-on {fail_on}");
                w.create_element("failure")
                    .with_attributes([("type", "fail-on"), ("message", m.as_str())])
                    .write_text_content(BytesText::new(&r.summary()))?;
            } else {
                w.create_element("system-out")
                    .write_text_content(BytesText::new(&r.summary()))?;
            }
            Ok(())
        })?;
    Ok(())
}
