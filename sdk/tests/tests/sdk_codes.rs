//! No code or limit of the runtime's ABI is written by hand outside the module that holds
//! them (sdk/runtime/src/base/codes.rs) and the files generated from it (`make header`):
//! the C++ headers, the device's C runtime and the Python package name the generated
//! constants, and the device's C runtime sends protocol.h's payload structs. Each rule
//! below is one way a number gets written by hand;
//! `each_rule_finds_its_mistake` holds every rule to a line it must flag.

use std::path::Path;

use neuron_customop_host::base::codes::{self, SERVER_ARGS, SERVER_REQUESTS};
use neuron_customop_host::base::misuse::Kind;
use nt_support::qemu::root;
use regex::Regex;

/// The generated files: they may write numbers.
const GENERATED: [&str; 3] = [
    "sdk/include/neuron_customop_host/runtime.h",
    "sdk/device/protocol.h",
    "sdk/python/src/neuron_customop_host/_abi.py",
];

/// The folders whose files pass codes to the runtime.
const FOLDERS: [&str; 3] = [
    "sdk/include",
    "sdk/device",
    "sdk/python/src/neuron_customop_host",
];

/// Enumerators that are not the runtime's: Linux's syscall numbers and mmap flags in the
/// device runtime (sdk/device/runtime.c).
const NOT_OURS: [&str; 3] = ["SYS_", "PROT_", "MAP_"];

/// `text` without C comments (`//` and `/* */`), line breaks kept.
fn strip_c_comments(text: &str) -> String {
    let block = Regex::new(r"(?s)/\*.*?\*/").unwrap();
    let text = block.replace_all(text, |c: &regex::Captures| {
        "\n".repeat(c[0].matches('\n').count())
    });
    let line = Regex::new(r"//[^\n]*").unwrap();
    line.replace_all(&text, "").into_owned()
}

/// What a C or C++ source writes by hand (`header`: a C++ header, where the limits of
/// tensors and streams are the runtime's; the device's C has buffers of its own).
fn c_findings(text: &str, header: bool) -> Vec<String> {
    let text = strip_c_comments(text);
    let mut found = Vec::new();
    // An enumerator given a number.
    let enumerator =
        Regex::new(r"\b([A-Za-z_]\w*)\s*=\s*(-?(0x[0-9A-Fa-f]+|\d+))\s*[,}\n]").unwrap();
    let enum_body = Regex::new(r"(?s)\benum\b[^{;]*\{([^}]*)\}").unwrap();
    for body in enum_body.captures_iter(&text) {
        for e in enumerator.captures_iter(&format!("{}\n", &body[1])) {
            if !NOT_OURS.iter().any(|p| e[1].starts_with(p)) {
                found.push(format!("enumerator {} = {}", &e[1], &e[2]));
            }
        }
    }
    // A code-carrying name given, or compared with, a number other than 0 and -1.
    let word = Regex::new(
        r"\b(kind|fill|policy|dtype|op|stats|status|code)\s*(=|==|!=)\s*(-?[1-9]\d*|-[2-9])\b",
    )
    .unwrap();
    for w in word.captures_iter(&text) {
        found.push(format!("{} {} {}", &w[1], &w[2], &w[3]));
    }
    // A number other than 0 and -1 passed to the runtime, to a factory, or as the device
    // runtime's own exit status.
    let call =
        Regex::new(r"\b(nt_customop_\w+|nt_device_exit|make|apply|apply_out)\(([^()]*)\)").unwrap();
    let literal = Regex::new(r"^-?([1-9]\d*|0x[0-9A-Fa-f]+)$").unwrap();
    for c in call.captures_iter(&text) {
        for a in c[2].split(',').map(str::trim) {
            if literal.is_match(a) && a != "-1" {
                found.push(format!("{}(... {a} ...)", &c[1]));
            }
        }
    }
    // A payload's bytes counted by hand where the device runtime sends, reads or copies
    // one (protocol.h's structs have their sizes: sdk/runtime/src/base/wire.rs).
    let counted = Regex::new(
        r"\b(nt_device_(?:put|get|copy|request|send))\([^;]*,\s*(\d+|0x[0-9A-Fa-f]+)\s*\)\s*;",
    )
    .unwrap();
    for c in counted.captures_iter(&text) {
        found.push(format!("{}(... {})", &c[1], &c[2]));
    }
    // A payload packed field by field, as it was before protocol.h's structs.
    let by_hand = Regex::new(r"\bnt_device_put(32|64)\b").unwrap();
    for p in by_hand.find_iter(&text) {
        found.push(format!("a payload packed by hand ({})", p.as_str()));
    }
    if header {
        found.extend(limit_findings(&text));
    }
    found
}

/// A limit of the ABI written as its number.
fn limit_findings(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let limits = [
        codes::STREAM_BUFFER_BYTES,
        codes::TCM_POOL_BYTES,
        codes::STACK_DEFAULT as usize,
        codes::STACK_MAX as usize,
    ];
    let number = Regex::new(r"\b(0x[0-9A-Fa-f]+|\d+)\b").unwrap();
    for n in number.find_iter(text) {
        let s = n.as_str();
        let v = s
            .strip_prefix("0x")
            .map_or_else(|| s.parse().ok(), |h| usize::from_str_radix(h, 16).ok());
        if v.is_some_and(|v| limits.contains(&v)) {
            found.push(format!("limit {s}"));
        }
    }
    // A comparison with 8 (not a shift by 8).
    let dims = Regex::new(r"(?:^|[^<>])(<=|<|>=|>)\s*(8|9)\b").unwrap();
    for d in dims.captures_iter(text) {
        found.push(format!("dimensions {} {}", &d[1], &d[2]));
    }
    found
}

/// What a Python source writes by hand.
fn py_findings(text: &str) -> Vec<String> {
    let comment = Regex::new(r"(?m)#[^\n]*$").unwrap();
    let text = comment.replace_all(text, "");
    let mut found = Vec::new();
    for tag in SERVER_REQUESTS.iter().chain(&SERVER_ARGS) {
        if text.contains(&format!("{{\"{tag}\":")) {
            found.push(format!("tag \"{tag}\""));
        }
    }
    let compared = Regex::new(r"\b(status|code|kind|dtype)\w*\W*\s*(==|!=)\s*(-?\d+)\b").unwrap();
    for c in compared.captures_iter(&text) {
        found.push(format!("{} {} {}", &c[1], &c[2], &c[3]));
    }
    let returned = Regex::new(r"return (1[0-9]|[2-9]\d)\b").unwrap();
    for r in returned.captures_iter(&text) {
        found.push(format!("return {}", &r[1]));
    }
    // A report's word (its kind, its severity, the server's "hbm-full") compared as text.
    let words: Vec<&str> = Kind::ALL
        .iter()
        .map(|k| k.name())
        .chain(["error", "warning", codes::SERVER_HBM_FULL])
        .collect();
    let word = Regex::new(r#"(==|!=)\s*["']([a-z0-9-]+)["']"#).unwrap();
    for w in word.captures_iter(&text) {
        if words.contains(&&w[2]) {
            found.push(format!("{} \"{}\"", &w[1], &w[2]));
        }
    }
    // A parameter's kind compared as its word (the server's `Describe`).
    let param = Regex::new(r#"\b(p|param)\s*(==|!=)\s*["']([a-z]+)["']"#).unwrap();
    for p in param.captures_iter(&text) {
        if codes::Param::ALL.iter().any(|k| k.word() == &p[3]) {
            found.push(format!("{} {} \"{}\"", &p[1], &p[2], &p[3]));
        }
    }
    let constant = Regex::new(r"\b(PROTOCOL\s*=\s*\d+|timeout: float = \d)").unwrap();
    for c in constant.find_iter(&text) {
        found.push(c.as_str().to_string());
    }
    found
}

fn findings(path: &Path, text: &str) -> Vec<String> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("hpp") => c_findings(text, true),
        Some("h" | "c") => c_findings(text, false),
        Some("py") => py_findings(text),
        _ => Vec::new(),
    }
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn no_code_of_the_abi_is_written_by_hand() {
    let root = root();
    let mut files = Vec::new();
    for f in FOLDERS {
        walk(&root.join(f), &mut files);
    }
    files.sort();
    let mut bad = Vec::new();
    let mut read = 0;
    for path in &files {
        let shown = path.strip_prefix(&root).unwrap().display().to_string();
        if GENERATED.contains(&shown.as_str()) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        read += 1;
        for f in findings(path, &text) {
            bad.push(format!("{shown}: {f}"));
        }
    }
    assert!(read > 20, "read {read} files");
    assert!(
        bad.is_empty(),
        "codes written by hand (name the generated constant instead; \
         sdk/runtime/src/base/codes.rs holds them):\n{}",
        bad.join("\n")
    );
}

#[test]
fn each_rule_finds_its_mistake() {
    let c = [
        "enum { kStandard = 0, kTcm = 3 };",
        "static constexpr int kind = 5;",
        "if (a.kind == 4) {}",
        "return nt_customop::make(size, o, 3, fill_value);",
        "nt_customop_run(op, list, n, cores, 2, &out);",
        "        nt_device_exit(73);",
        "    nt_device_copy(&status, nt_device_ask(NT_DEVICE_HBM_FREE), 4);",
        "    r = nt_device_get(r, &core, 4);",
        "    nt_device_put32(nt_device_handle(m));",
        "uint64_t cap = 4096 / sizeof(T);",
        "static_assert(N >= 1 && N <= 8, \"dims\");",
        "enum class ScalarType : int8_t {\n    Byte = 0,\n    BFloat16 = 15,\n};",
    ];
    for line in c {
        assert!(!c_findings(line, true).is_empty(), "no finding in {line}");
    }
    let fine = [
        "enum { SYS_READ = 12 };",
        "/* kind = 5 */ int x = nt_customop_policy(m_, -1);",
        "kStandard = NT_CUSTOMOP_ACCESSOR_STANDARD,",
        "if (a.kind == NT_CUSTOMOP_ARG_SCALAR_INT) {}",
        "return p[0] | p[1] << 8 | p[2] >> 8;",
        "nt_customop_bad_stream(m_, closed_, true, next_);",
        "nt_device_exit(read ? 0 : NT_DEVICE_EXIT_RUNNER_GONE);",
        "nt_device_copy(&a, ASK(NT_DEVICE_HBM_FREE, q), sizeof a);",
    ];
    for line in fine {
        assert_eq!(c_findings(line, true), Vec::<String>::new(), "{line}");
    }
    let py = [
        "answer = server.request({\"Alloc\": {\"dtype\": code}})",
        "if status == 2:",
        "if code == 15 and BFLOAT16 is not None:",
        "            return 15",
        "PROTOCOL = 2",
        "    timeout: float = 60.0,",
        "crash = next(r for r in reports if r[\"kind\"] == \"kernel-crashed\")",
        "if r['severity'] == 'warning':",
        "    if param == \"scalar\" and is_int:",
        "cls = HbmFullError if answer.get(\"kind\") == \"hbm-full\" else RefusedError",
    ];
    for line in py {
        assert!(!py_findings(line).is_empty(), "no finding in {line}");
    }
    let fine = [
        "if status == ExitStatus.RAN:",
        "if r[\"severity\"] == Severity.WARNING:",
        "if answer.get(\"error\") == \"none\":",
        "x = {Tag.ALLOC: 1}  # {\"Alloc\": ...}",
    ];
    for line in fine {
        assert_eq!(py_findings(line), Vec::<String>::new(), "{line}");
    }
}
