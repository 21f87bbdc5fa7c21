//! The custom-op SDK's two halves agree: the C ABI its headers declare
//! (sdk/include/neuron_customop_host/runtime.h, read by clang through bindgen) is the one
//! the runtime (sdk/runtime) defines, struct layouts and function names; the codes the
//! C++ headers pass (operations, element types, accessor kinds) are the runtime's.

use std::collections::BTreeSet;
use std::mem::{offset_of, size_of};

use neuron_customop_host::base::dtype::{DType, ALL};
use neuron_customop_host::edges::ffi::{
    Arg, ARG_DOUBLE, ARG_INT, ARG_NONE, ARG_SCALAR_FLOAT, ARG_SCALAR_INT, ARG_TENSOR,
};
use neuron_customop_host::percore::access::{Populated, READ_STREAM, STANDARD, TCM, WRITE_STREAM};
use neuron_customop_host::percore::ops::Op;
use neuron_customop_host::percore::state::Meta;
use nt_support::qemu::root;

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

/// bindgen's view of runtime.h.
fn bindings() -> String {
    bindgen::Builder::default()
        .header(
            root()
                .join("sdk/include/neuron_customop_host/runtime.h")
                .display()
                .to_string(),
        )
        .allowlist_item("nt_customop_.*|NT_CUSTOMOP_.*")
        .layout_tests(false)
        .generate()
        .expect("bindgen")
        .to_string()
}

/// The fields bindgen gives C struct `name`, in order, with their Rust types. The structs
/// hold only naturally aligned scalars, arrays of them and pointers, so field order and
/// types fix the C layout; the tests hold the runtime's offsets to that layout.
fn c_layout(text: &str, name: &str) -> Vec<(String, String)> {
    let start = text
        .find(&format!("pub struct {name} {{"))
        .unwrap_or_else(|| panic!("{name}"));
    let body = &text[start..text[start..].find('}').unwrap() + start];
    body.lines()
        .filter_map(|l| l.trim().strip_prefix("pub "))
        .filter_map(|l| l.split_once(':'))
        .map(|(f, t)| {
            (
                f.trim().to_string(),
                t.trim().trim_end_matches(',').replace(' ', ""),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_headers_structs_are_the_runtimes() {
    let text = bindings();
    let meta = c_layout(&text, "nt_customop_meta");
    let names: Vec<&str> = meta.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        names,
        [
            "hbm_addr",
            "numel",
            "sizes",
            "strides",
            "ndim",
            "dtype",
            "handle",
            "data_less",
            "track",
            "pad"
        ]
    );
    let types: Vec<&str> = meta.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        types,
        [
            "u64",
            "u64",
            "[i64;8usize]",
            "[i64;8usize]",
            "u32",
            "i32",
            "u32",
            "u32",
            "u32",
            "u32"
        ]
    );
    assert_eq!(size_of::<Meta>(), 8 + 8 + 64 + 64 + 4 * 6);
    assert_eq!(offset_of!(Meta, sizes), 16);
    assert_eq!(offset_of!(Meta, strides), 80);
    assert_eq!(offset_of!(Meta, ndim), 144);
    assert_eq!(offset_of!(Meta, data_less), 156);
    let arg = c_layout(&text, "nt_customop_arg");
    assert_eq!(
        arg.iter()
            .map(|(f, t)| format!("{f}:{t}"))
            .collect::<Vec<_>>(),
        ["kind:i32", "meta:*constnt_customop_meta", "i:i64", "f:f64"]
    );
    assert_eq!(size_of::<Arg>(), 32);
    assert_eq!(
        (
            offset_of!(Arg, meta),
            offset_of!(Arg, i),
            offset_of!(Arg, f)
        ),
        (8, 16, 24)
    );
    let filled = c_layout(&text, "nt_customop_filled");
    assert_eq!(filled.len(), 3);
    assert_eq!(size_of::<Populated>(), 24);
    assert_eq!(offset_of!(Populated, soc), 16);
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn every_function_the_header_declares_the_runtime_defines() {
    let text = bindings();
    let declared: BTreeSet<String> = text
        .split("pub fn ")
        .skip(1)
        .map(|s| s.split('(').next().unwrap().trim().to_string())
        .collect();
    let mut defined = BTreeSet::new();
    let (mut dirs, mut files) = (vec![root().join("sdk/runtime/src")], Vec::new());
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    for path in files {
        let src = std::fs::read_to_string(path).unwrap();
        for part in src.split("extern \"C\" fn ").skip(1) {
            let name = part.split('(').next().unwrap().trim();
            if name.starts_with("nt_customop_") {
                defined.insert(name.to_string());
            }
        }
    }
    assert_eq!(declared, defined);
    // The device runtime (sdk/device/runtime.c) defines them all too: a definition is a
    // line that names the function and does not end the declaration.
    let c = read("sdk/device/runtime.c");
    let on_device: BTreeSet<String> = c
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.trim_end().ends_with(';'))
        .filter_map(|l| {
            let head = l.split_once('(')?.0;
            let name = head.rsplit([' ', '*']).next()?;
            name.starts_with("nt_customop_").then(|| name.to_string())
        })
        .collect();
    assert_eq!(declared, on_device, "the device runtime against runtime.h");
}

/// `kName` -> `name` in snake case.
fn snake(k: &str) -> String {
    let mut out = String::new();
    for (i, c) in k.trim_start_matches('k').chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

#[test]
fn the_codes_the_cpp_headers_pass_are_the_runtimes() {
    // Operations: ops.hpp's enum, in order from 0.
    let ops = read("sdk/include/neuron_customop_host/ops.hpp");
    let body = ops
        .split("enum Op {")
        .nth(1)
        .unwrap()
        .split('}')
        .next()
        .unwrap();
    let names: Vec<String> = body
        .split(',')
        .map(|e| snake(e.split('=').next().unwrap().trim()))
        .filter(|e| !e.is_empty())
        .collect();
    let runtime: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
    assert_eq!(names, runtime);
    assert!(Op::ALL.iter().enumerate().all(|(k, o)| *o as usize == k));
    // Element types: ScalarType.h's values.
    let st = read("sdk/include/c10/core/ScalarType.h");
    let body = st.split("enum class ScalarType").nth(1).unwrap();
    let body = body.split('{').nth(1).unwrap().split('}').next().unwrap();
    for line in body.lines().filter(|l| l.contains('=')) {
        let (name, rest) = line.split_once('=').unwrap();
        let code: i32 = rest
            .trim()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap();
        let d = DType::from_code(code).unwrap_or_else(|| panic!("{line}"));
        assert_eq!(format!("{d:?}"), name.trim(), "{line}");
    }
    assert_eq!(body.matches('=').count(), ALL.len());
    // Accessor kinds: accessors.hpp's enum.
    let acc = read("sdk/include/neuron_customop_host/accessors.hpp");
    let want = format!(
        "enum {{ kStandard = {STANDARD}, kReadStream = {READ_STREAM}, kWriteStream = {WRITE_STREAM}, kTcm = {TCM} }};"
    );
    assert!(acc.contains(&want), "{want}");
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_argument_kinds_are_the_runtimes() {
    let text = bindings();
    let kinds = [
        ("NONE", ARG_NONE),
        ("TENSOR", ARG_TENSOR),
        ("INT", ARG_INT),
        ("DOUBLE", ARG_DOUBLE),
        ("SCALAR_INT", ARG_SCALAR_INT),
        ("SCALAR_FLOAT", ARG_SCALAR_FLOAT),
    ];
    for (name, value) in kinds {
        // pub const NT_CUSTOMOP_ARG_TENSOR: _bindgen_ty_1 = 1;
        let at = text
            .find(&format!("NT_CUSTOMOP_ARG_{name}:"))
            .unwrap_or_else(|| panic!("runtime.h lacks NT_CUSTOMOP_ARG_{name}"));
        let after = text[at..].split_once('=').unwrap().1;
        let header: i32 = after.split(';').next().unwrap().trim().parse().unwrap();
        assert_eq!(header, value, "NT_CUSTOMOP_ARG_{name}");
    }
    assert_eq!(
        text.matches("pub const NT_CUSTOMOP_ARG_").count(),
        kinds.len()
    );
}

/// `NAME = N` pairs of `text` after `prefix` (C enumerators or Rust constants).
fn numbered(text: &str, prefix: &str, sep: &str) -> Vec<(String, u32)> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim().strip_prefix(prefix)?;
            let (name, rest) = l.split_once(sep)?;
            let n: String = rest
                .trim()
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            Some((name.trim().to_string(), n.parse().ok()?))
        })
        .collect()
}

#[test]
fn the_device_runtimes_requests_are_the_runners() {
    let c = numbered(&read("sdk/device/protocol.h"), "NT_DEVICE_", " = ");
    // The runner's `Request` enum: `BadIndex = 10,` is NT_DEVICE_BAD_INDEX = 10.
    let answer = read("sdk/runtime/src/run/device/answer.rs");
    let body = answer
        .split_once("pub enum Request: u32 {")
        .and_then(|(_, b)| b.split_once('}'))
        .expect("answer.rs declares enum Request")
        .0;
    let rust: Vec<(String, u32)> = numbered(body, "", " = ")
        .into_iter()
        .map(|(name, n)| {
            let mut snake = String::new();
            for (k, ch) in name.chars().enumerate() {
                if ch.is_ascii_uppercase() && k > 0 {
                    snake.push('_');
                }
                snake.push(ch.to_ascii_uppercase());
            }
            (snake, n)
        })
        .collect();
    let requests: Vec<(String, u32)> = c
        .iter()
        .filter(|(n, _)| !n.starts_with("FD_"))
        .cloned()
        .collect();
    assert_eq!(requests.len(), 20, "{c:?}");
    assert_eq!(
        requests, rust,
        "sdk/device/protocol.h against sdk/runtime/src/run/device/answer.rs"
    );
    let fds = numbered(&read("sdk/device/protocol.h"), "#define NT_DEVICE_", " ");
    let rust_fds = numbered(
        &read("sdk/runtime/src/run/device/mod.rs"),
        "const ",
        ": RawFd = ",
    );
    assert_eq!(fds, rust_fds, "the program's descriptors");
}

#[test]
fn the_stack_limits_are_the_runtimes() {
    let h = numbered(
        &read("sdk/include/neuron_customop_host/runtime.h"),
        "#define NT_CUSTOMOP_STACK_",
        " ",
    );
    let want = [
        (
            "DEFAULT".to_string(),
            neuron_customop_host::base::limits::STACK_DEFAULT,
        ),
        (
            "MAX".to_string(),
            neuron_customop_host::base::limits::STACK_MAX,
        ),
    ];
    assert_eq!(h, want, "runtime.h against sdk/runtime/src/base/limits.rs");
}
