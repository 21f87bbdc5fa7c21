//! The custom-op SDK's two halves agree: the C ABI its headers declare
//! (sdk/include/neuron_customop_host/runtime.h, read by clang through bindgen) is the one
//! the runtime (sdk/runtime) defines, struct layouts and function names. The codes are
//! generated from the runtime's (sdk_codes.rs holds that no file writes one by hand).

use std::collections::BTreeSet;
use std::mem::{offset_of, size_of};

use neuron_customop_host::edges::ffi::Arg;
use neuron_customop_host::percore::access::Populated;
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
    // The device runtime (sdk/device/runtime.c and memory.c) defines them all too: a
    // definition is a line that names the function and does not end the declaration.
    let c = read("sdk/device/runtime.c") + &read("sdk/device/memory.c");
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
