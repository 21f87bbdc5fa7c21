//! Every committed input of every fuzz target (`fuzz/corpus/TARGET/`), through the target's
//! own check (`fuzz/checks/TARGET.rs`, the code the fuzz target runs), on the stable
//! toolchain. `make fuzz-smoke` (opt-in) runs the targets themselves under libFuzzer and
//! AddressSanitizer for a fixed number of new executions; this is the part of that that
//! needs neither: what was once found or seeded stays passing.

use std::path::PathBuf;

#[path = "../../fuzz/checks/abi_parse.rs"]
mod abi_parse;
#[path = "../../fuzz/checks/npy.rs"]
mod npy;
#[path = "../../fuzz/checks/table_decode.rs"]
mod table_decode;
#[path = "../../fuzz/checks/translate_diff.rs"]
mod translate_diff;

/// Each file of the target's committed corpus, in name order, through `check`; at least
/// one file (a corpus that went missing is a failure, not a pass).
fn replay(target: &str, check: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a corpus entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{}: no committed inputs", dir.display());
    for f in &files {
        let data = std::fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // The test's output (shown when it fails) names the input the check panicked on.
        eprintln!("{target}: {}", f.display());
        check(&data);
    }
}

#[test]
fn abi_parse_corpus_passes() {
    replay("abi_parse", abi_parse::check);
}

#[test]
fn npy_corpus_passes() {
    replay("npy", npy::check);
}

#[test]
fn table_decode_corpus_passes() {
    replay("table_decode", table_decode::check);
}

#[test]
fn translate_diff_corpus_passes() {
    replay("translate_diff", translate_diff::check);
}
