//! The committed C header: current, and written for C and C++ readers.

/// The header this version of the library generates.
fn generated() -> String {
    nt_header::generate().expect("the header generates")
}

#[test]
fn the_committed_header_is_the_generated_one() {
    let committed =
        std::fs::read_to_string(nt_support::root().join("include/neuron_translate.h")).unwrap();
    assert!(
        committed == generated(),
        "include/neuron_translate.h is stale: run `make header` and commit it"
    );
}

#[test]
fn the_header_speaks_c_not_rust() {
    // No Rust syntax, attribute or path, and no section numbers of documents a C user
    // does not have.
    for (i, line) in generated().lines().enumerate() {
        for bad in [
            "§", "#[", "!mask", "!lo32", "::", "seed", "Rust", "cbindgen", "build.rs", "src/",
            "`0..", "DW_AT",
        ] {
            assert!(
                !line.contains(bad),
                "line {}: {bad:?} in the header: {line}",
                i + 1
            );
        }
    }
}
