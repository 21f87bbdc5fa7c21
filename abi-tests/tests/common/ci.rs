//! What the CI-facing `ntx` tests share: running `abi-diff`, the inputs (the manifest,
//! the device object, the seed-shaped original), suppression files, and the SARIF 2.1.0
//! schema check.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nt_support::tools::{product, run_ok};

use super::{assemble, ntx, FIXTURE};

/// A command line, as `ntx` takes it.
pub type Argv<'a> = Vec<&'a dyn AsRef<std::ffi::OsStr>>;

pub fn code(out: &Output) -> i32 {
    out.status.code().expect("ntx exited by a signal")
}

pub fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn manifest() -> PathBuf {
    product("NT_MANIFEST")
}

pub fn device() -> PathBuf {
    product("NT_DEVICE_OBJ")
}

/// `ntx abi-diff --reference R --candidate C` plus `extra`.
pub fn abi_diff(
    reference: &Path,
    candidate: &Path,
    extra: &[&dyn AsRef<std::ffi::OsStr>],
) -> Output {
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

pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The original-shaped fixture, assembled: against the device object as the reference,
/// it lacks `neuron_translate_span`, a break.
pub fn original(dir: &Path) -> PathBuf {
    assemble(dir, "original", FIXTURE)
}

pub const SPAN_ADDED: &str =
    "[[suppress]]\nkind = \"symbol-added\"\nsymbol = \"neuron_translate_*\"\n\
                          reason = \"our addition (docs/compatibility.md)\"\n";

/// The SARIF 2.1.0 schema as OASIS publishes it, from the sources of the pinned
/// `serde-sarif` crate (a dev-dependency), found through `cargo metadata`.
pub fn sarif_schema() -> serde_json::Value {
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
pub fn sarif_problems(validator: &jsonschema::Validator, log: &serde_json::Value) -> Vec<String> {
    let mut problems: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if let Err(e) = serde_json::from_value::<serde_sarif::sarif::Sarif>(log.clone()) {
        problems.push(format!("serde-sarif cannot read it: {e}"));
    }
    problems
}

pub fn validator() -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        // Formats too (`uri`, `uri-reference`, `date-time`), not only the structure.
        .should_validate_formats(true)
        .build(&sarif_schema())
        .expect("the schema compiles")
}
