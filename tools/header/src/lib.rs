//! The C header, `include/neuron_translate.h`, generated from this version of the library:
//!
//! * The two structs come from `src/layout.rs`, through cbindgen (pinned in Cargo.toml:
//!   its output is committed, and point releases change it).
//! * The function and `_ctx` declarations come from the one symbol table,
//!   `neuron_translate::symbols`: cbindgen can only write `extern "C"` declarations, and the
//!   original's functions have C++ linkage. C++ gets plain declarations that the compiler
//!   mangles to the ELF names; C gets the same declarations with `__asm__` labels naming them.
//! * The layout pins (sizes and every offset) come from `neuron_translate::layout` too, and
//!   are asserted inside the header, so a consumer's compiler checks them on its own target.
//!
//! The generator is a tool of its own (`nt-header`), not the library's build script, so that
//! building the library needs neither cbindgen nor its parser: the header is written by
//! `make header`, put in `dist/` by `make`, and `make test` fails when the committed copy
//! differs from it.

pub mod codes;
pub mod runtime;
mod wire;

/// Why a generated file could not be made: cbindgen's refusal, with the file it was given.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// A cbindgen configuration that did not load (cbindgen gives its reason as text).
    #[error("{config}: {reason}")]
    Config { config: String, reason: String },
    /// cbindgen could not read or parse a source.
    #[error("cbindgen on {src}: {source}")]
    Cbindgen {
        src: String,
        source: Box<cbindgen::Error>,
    },
    /// cbindgen wrote bytes that are not UTF-8.
    #[error("cbindgen on {src}: {source}")]
    NotText {
        src: String,
        source: std::string::FromUtf8Error,
    },
    /// cbindgen's output lacked the line the runtime's codes follow.
    #[error("cbindgen wrote no <stdint.h> include")]
    NoStdint,
}

/// cbindgen's configuration `config` (relative to `root`).
pub(crate) fn load_config(root: &Path, config: &str) -> Result<cbindgen::Config, GenerateError> {
    cbindgen::Config::from_file(root.join(config)).map_err(|reason| GenerateError::Config {
        config: config.to_string(),
        reason,
    })
}

/// cbindgen's output `text` on `src`, as text.
pub(crate) fn as_text(src: &str, text: Vec<u8>) -> Result<String, GenerateError> {
    String::from_utf8(text).map_err(|source| GenerateError::NotText {
        src: src.to_string(),
        source,
    })
}

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use neuron_translate::{layout, regs, symbols};

/// The repository root (the library's crate root), two levels above this package.
#[must_use]
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The header for the library's sources under [`root`].
///
/// # Errors
/// cbindgen's, when it cannot read or parse a source or a configuration.
pub fn generate() -> Result<String, GenerateError> {
    let root = root();
    let types = cbindgen_pass(&root, "tools/header/cbindgen.toml", "src/layout.rs")?;
    // mod.rs brings ffi.rs (its `pub mod ffi`).
    let host = cbindgen_pass(&root, "tools/header/cbindgen-host.toml", "src/model/mod.rs")?;
    Ok(assemble(&types, &host))
}

/// What cbindgen writes for `src` (a file of the crate) under the configuration `config`.
fn cbindgen_pass(root: &Path, config: &str, src: &str) -> Result<String, GenerateError> {
    let config = load_config(root, config)?;
    let mut text = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join(src))
        .generate()
        .map_err(|source| GenerateError::Cbindgen {
            src: src.to_string(),
            source: Box::new(source),
        })?
        .write(&mut text);
    as_text(src, text)
}

fn doc_comment(out: &mut String, indent: &str, doc: &str) {
    let _ = writeln!(out, "{indent}/**");
    for line in wrap(doc, 88) {
        let _ = writeln!(out, "{indent} * {line}");
    }
    let _ = writeln!(out, "{indent} */");
}

pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for w in text.split_whitespace() {
        if !cur.is_empty() && cur.len() + 1 + w.len() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// The host model's API (cbindgen's text), with C linkage in C++, behind the guard of the
/// hosts it exists on.
fn host_model(h: &mut String, api: &str) {
    h.push_str(
        "/*\n * The host model of the translation hardware: on a Linux x86_64 or aarch64 host, the\n \
         * host library maps the NX register block, simulated SoC memory (SBUF and an HBM\n \
         * region) and the five NX windows at their NX-local addresses, and remaps a window\n \
         * when a refill programs its MEM_WINDOW register, so that the pointers\n \
         * neuron_translate returns read and write SoC memory as on the device. Not in the\n \
         * device library.\n */\n\
         #if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))\n\
         #ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
    );
    let _ = writeln!(
        h,
        "/** The views neuron_translate_host_start keeps, in bytes of SoC memory they show. */\n\
         #define NEURON_TRANSLATE_HOST_KEEP_DEFAULT {:#x}ull\n",
        neuron_translate::model::keep::KEEP_DEFAULT
    );
    h.push_str(api.trim());
    h.push_str("\n\n#ifdef __cplusplus\n}\n#endif\n#endif /* host model */\n\n");
}

/// The C name of an import: the C++ name with its namespaces joined by `_`.
fn c_name(s: &symbols::Symbol) -> String {
    s.cxx_name.replace("::", "_")
}

/// The symbol table's entries of one direction, in the table's order.
fn of_direction(direction: symbols::Direction) -> Vec<&'static symbols::Symbol> {
    symbols::SYMBOLS
        .iter()
        .filter(|s| s.direction == direction)
        .collect()
}

/// What the consumer's image must define, from src/symbols.rs: C++ declares each in its
/// namespace, C under its C name with an asm label naming the ELF symbol.
fn imports(h: &mut String) {
    let imports = of_direction(symbols::Direction::Import);
    h.push_str(
        "/*\n * What your image must define: start_exit.o of the vendor archive does. The original\n \
         * translation.o needs both; this library needs only the HBM scratch address. A host\n \
         * program or a test defines them itself, e.g. in C\n \
         *     unsigned long long extended_isa_sdk_hbm_scratch = 0x4000000000ull;\n \
         * (the declaration below gives it the ELF name), and in C++ the same variable inside\n \
         * namespace extended_isa { namespace sdk { ... } }.\n */\n",
    );
    for (lang, cxx) in [("#ifdef __cplusplus", true), ("#else", false)] {
        h.push_str(lang);
        h.push('\n');
        for s in &imports {
            // A byte type is a region of a size this library does not know (data_scratch_map):
            // an array of unknown bound, which any definition of it matches.
            let array = if s.c_type == "unsigned char" {
                "[]"
            } else {
                ""
            };
            let path: Vec<&str> = s.cxx_name.split("::").collect();
            let (namespaces, name) = path.split_at(path.len() - 1);
            doc_comment(h, "", s.doc);
            if cxx {
                let open: String = namespaces
                    .iter()
                    .map(|n| format!("namespace {n} {{ "))
                    .collect();
                let close = " }".repeat(namespaces.len());
                let _ = writeln!(h, "{open}extern {} {}{array};{close}", s.c_type, name[0]);
            } else if namespaces.is_empty() {
                let _ = writeln!(h, "extern {} {}{array};", s.c_type, s.elf_name);
            } else {
                let _ = writeln!(
                    h,
                    "extern {} {}{array} __asm__(\"{}\");",
                    s.c_type,
                    c_name(s),
                    s.elf_name
                );
            }
        }
    }
    h.push_str("#endif /* __cplusplus */\n\n");
}

fn assemble(types: &str, host: &str) -> String {
    // cbindgen's own text is the file comment, then the includes and the types: the include
    // guard goes around all of it but the comment.
    let (comment, body) = types
        .split_once("*/")
        .expect("cbindgen writes the header comment first");
    let mut h =
        format!("{comment}*/\n\n#ifndef NEURON_TRANSLATE_H\n#define NEURON_TRANSLATE_H\n\n");
    // C89 has neither <stdint.h> nor unsigned long long: refused with a reason, and
    // nothing else of the header compiled, so that the reason is the only complaint.
    h.push_str(
        "#if !defined(__cplusplus) && (!defined(__STDC_VERSION__) || __STDC_VERSION__ < 199901L)\n\
         #error \"neuron_translate.h needs C99 or later (stdint.h, unsigned long long): compile with -std=c99, -std=gnu11 or newer\"\n\
         #else\n\n",
    );
    version_macros(&mut h);
    h.push('\n');
    h.push_str(body.trim());
    h.push_str("\n\n");
    layout_pins(&mut h);
    register_macros(&mut h);
    imports(&mut h);
    declarations(&mut h);
    host_model(&mut h, host);
    h.push_str("#endif /* C99 or later */\n\n#endif /* NEURON_TRANSLATE_H */\n");
    h
}

/// The version macros, from Cargo.toml.
fn version_macros(h: &mut String) {
    // The version, from Cargo.toml.
    h.push_str(
        "/* The library's version. The original ABI never changes; an addition bumps MINOR. */\n",
    );
    // This crate's version is the workspace's (version.workspace), so the library's; read
    // when the generator is compiled, so that its binary runs alone (not only under cargo).
    let mut parts = Vec::new();
    for (part, v) in [
        ("MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
        ("MINOR", env!("CARGO_PKG_VERSION_MINOR")),
        ("PATCH", env!("CARGO_PKG_VERSION_PATCH")),
    ] {
        let v: u32 = v.parse().expect("cargo's version parts are numbers");
        parts.push(v);
        let _ = writeln!(h, "#define NEURON_TRANSLATE_VERSION_{part} {v}");
    }
    let _ = writeln!(
        h,
        "#define NEURON_TRANSLATE_VERSION_STRING \"{}\"",
        env!("CARGO_PKG_VERSION")
    );
    h.push_str("/* One number for #if: MAJOR * 10000 + MINOR * 100 + PATCH. */\n");
    let _ = writeln!(
        h,
        "#define NEURON_TRANSLATE_VERSION {}",
        parts[0] * 10000 + parts[1] * 100 + parts[2]
    );
    assert!(
        parts[1] < 100 && parts[2] < 100,
        "NEURON_TRANSLATE_VERSION needs MINOR and PATCH < 100"
    );
}

/// The layout pins, from src/layout.rs, in the three dialects' static assertions.
fn layout_pins(h: &mut String) {
    use layout::offsets as o;
    // Layout pins, from src/layout.rs.
    let pins: Vec<(String, usize)> = vec![
        ("sizeof(_map_record_t)".into(), o::RECORD_SIZE),
        ("sizeof(_translation_ctx_t)".into(), o::CTX_SIZE),
        ("offsetof(_map_record_t, ptr)".into(), o::PTR),
        ("offsetof(_map_record_t, window)".into(), o::WINDOW),
        ("offsetof(_map_record_t, mask)".into(), o::MASK),
        (
            "offsetof(_map_record_t, reg_location)".into(),
            o::REG_LOCATION,
        ),
        (
            "offsetof(_translation_ctx_t, records)".into(),
            o::RECORD_ARRAY,
        ),
        (
            "offsetof(_translation_ctx_t, next_alloc)".into(),
            o::NEXT_ALLOC,
        ),
    ];
    h.push_str("/* The layout the device code addresses, checked by your compiler. */\n");
    h.push_str("#if defined(__cplusplus) && __cplusplus >= 201103L\n");
    for (e, v) in &pins {
        let _ = writeln!(h, "static_assert({e} == {v}, \"{e} must be {v}\");");
    }
    h.push_str(
        "#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n",
    );
    for (e, v) in &pins {
        let _ = writeln!(h, "_Static_assert({e} == {v}, \"{e} must be {v}\");");
    }
    h.push_str("#else\n");
    for (i, (e, v)) in pins.iter().enumerate() {
        let _ = writeln!(
            h,
            "typedef char neuron_translate_layout_pin_{i}[({e} == {v}) ? 1 : -1];"
        );
    }
    h.push_str("#endif\n\n");
}

/// The NX register block's macros, from src/regs.rs.
fn register_macros(h: &mut String) {
    // The NX register block, from src/regs.rs.
    h.push_str(
        "/* The NX register block (NX-local addresses): ENGINE_BASE_ADDR is read by\n \
         * _init_translate_ctx; a refill of slot 0, 1, 2 programs MEM_WINDOW3, 5, 6 (_HI, then\n \
         * _LO). A host program that calls _init_translate_ctx or refills the initial table\n \
         * must map NEURON_TRANSLATE_NX_REG_BLOCK_SIZE bytes at NEURON_TRANSLATE_NX_REG_BASE. */\n",
    );
    let _ = writeln!(
        h,
        "#define NEURON_TRANSLATE_NX_REG_BASE {:#010x}u",
        regs::NX_REG_BASE
    );
    let _ = writeln!(
        h,
        "#define NEURON_TRANSLATE_NX_REG_BLOCK_SIZE {:#x}u",
        regs::NX_REG_BLOCK_SIZE
    );
    for r in regs::REGISTERS {
        let _ = writeln!(
            h,
            "#define NEURON_TRANSLATE_{}_LO {:#010x}u",
            r.name,
            r.lo()
        );
        let _ = writeln!(
            h,
            "#define NEURON_TRANSLATE_{}_HI {:#010x}u",
            r.name,
            r.hi()
        );
    }
    h.push('\n');
}

/// The declarations of the exports, from src/symbols.rs: C++ and C.
fn declarations(h: &mut String) {
    let exports = of_direction(symbols::Direction::Export);
    h.push_str(
        "/*\n * The functions, _ctx and _sbuf_window, by their original names. In C++ the functions\n \
         * have C++ linkage and mangle to the original's ELF names; in C, asm labels give the\n \
         * same names. neuron_translate_span is this library's addition, with C linkage in both.\n \
         */\n",
    );
    for (lang, cxx) in [("#ifdef __cplusplus", true), ("#else", false)] {
        h.push_str(lang);
        h.push('\n');
        for s in &exports {
            h.push('\n');
            doc_comment(h, "", s.doc);
            let c_linkage = s.linkage == symbols::Linkage::C;
            // C: an asm label where the ELF name is not the plain name. C++: C++ linkage
            // mangles to the original's names; this library's additions are extern "C".
            let label = if cxx || c_linkage {
                String::new()
            } else {
                format!(" __asm__(\"{}\")", s.elf_name)
            };
            let linkage = if cxx && c_linkage {
                "extern \"C\" "
            } else {
                ""
            };
            let sep = if s.c_type.ends_with('*') { "" } else { " " };
            let decl = format!("{}{sep}{}", s.c_type, s.cxx_name);
            let _ = match s.kind {
                symbols::SymbolKind::Function => {
                    writeln!(h, "{linkage}{decl}({}){label};", s.c_params)
                }
                symbols::SymbolKind::Object { .. } => writeln!(h, "{linkage}extern {decl}{label};"),
            };
        }
        h.push('\n');
    }
    h.push_str("#endif /* __cplusplus */\n\n");
}
