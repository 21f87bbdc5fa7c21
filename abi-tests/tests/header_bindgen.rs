//! The header through clang and back: bindgen reads include/neuron_translate.h with
//! libclang and reports the size, alignment and offsets clang computes; they must be the
//! ones src/layout.rs pins, on the host and on the device target.

use std::collections::BTreeMap;
use std::path::Path;

use neuron_translate::layout::offsets as o;

/// `"Size of T"`, `"Alignment of T"`, `"Offset of field: T::f"` -> value, from bindgen's
/// layout assertions.
fn clang_layout(extra: &[&str]) -> BTreeMap<String, usize> {
    let header = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/neuron_translate.h");
    let text = bindgen::Builder::default()
        .header(header.display().to_string())
        .clang_args(extra.iter().copied())
        .allowlist_type("_map_record_t|_translation_ctx_t")
        .layout_tests(true)
        .generate()
        .expect("bindgen")
        .to_string();
    let mut out = BTreeMap::new();
    // [ "Size of _map_record_t" ] [ :: std :: mem :: size_of :: < _map_record_t > () - 32usize ] ;
    // (token spacing varies with the formatter, so split on the literals themselves)
    for chunk in text.split("[\"").skip(1) {
        let Some((what, tail)) = chunk.split_once('"') else {
            continue;
        };
        let Some(end) = tail.find("usize") else {
            continue;
        };
        let digits: String = tail[..end]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        let value: String = digits.chars().rev().collect();
        if let Ok(v) = value.parse() {
            out.insert(what.to_string(), v);
        }
    }
    out
}

fn expected() -> BTreeMap<String, usize> {
    [
        ("Size of _map_record_t", o::RECORD_SIZE),
        ("Alignment of _map_record_t", o::ALIGN),
        ("Offset of field: _map_record_t::ptr", o::PTR),
        ("Offset of field: _map_record_t::window", o::WINDOW),
        ("Offset of field: _map_record_t::_pad", o::WINDOW + 4),
        ("Offset of field: _map_record_t::mask", o::MASK),
        (
            "Offset of field: _map_record_t::reg_location",
            o::REG_LOCATION,
        ),
        ("Size of _translation_ctx_t", o::CTX_SIZE),
        ("Alignment of _translation_ctx_t", o::ALIGN),
        (
            "Offset of field: _translation_ctx_t::records",
            o::RECORD_ARRAY,
        ),
        (
            "Offset of field: _translation_ctx_t::next_alloc",
            o::NEXT_ALLOC,
        ),
        (
            "Offset of field: _translation_ctx_t::_pad",
            o::NEXT_ALLOC + 1,
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn clang_sees_the_rust_layout_on_the_host() {
    assert_eq!(clang_layout(&[]), expected());
    assert_eq!(
        core::mem::size_of::<neuron_translate::TranslationCtx>(),
        o::CTX_SIZE
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn clang_sees_the_rust_layout_on_the_device() {
    assert_eq!(
        clang_layout(&["--target=xtensa", "-ffreestanding"]),
        expected()
    );
}
