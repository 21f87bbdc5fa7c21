//! Arbitrary bytes as the reference and the candidate of the ABI diff: ELF objects,
//! archives and manifests (the committed corpus starts from the test fixtures). Loading
//! must fail with a message or succeed; the diff and every rendering (text, JSON, SARIF,
//! JUnit) must never panic, and the JUnit must be well-formed XML.
//!
//! Input: the reference's length (4 bytes, little-endian), the reference, the candidate.
//!
//! The check itself, shared by the fuzz target (`fuzz/fuzz_targets/abi_parse.rs`) and the
//! replay of the committed corpus in the workspace's tests (`abi-tests/tests/fuzz_corpus.rs`).

use ntx::{diff, load_bytes, report};

/// One input: returns, or panics with what is wrong.
pub fn check(data: &[u8]) {
    let Some((len, rest)) = data.split_first_chunk::<4>() else {
        return;
    };
    let cut = (u32::from_le_bytes(*len) as usize).min(rest.len());
    let (r, c) = rest.split_at(cut);
    let reference = load_bytes(r, "reference", "translation.o");
    let candidate = load_bytes(c, "candidate", "translation.o");
    for m in [&reference, &candidate] {
        if let Err(e) = m {
            assert!(!e.message.is_empty(), "an error says what is wrong");
        }
    }
    if let (Ok(r), Ok(c)) = (reference, candidate) {
        if diff::comparable(&r, &c).is_ok() {
            let report = diff::diff(&r, &c);
            let _ = report.to_text();
            let _ = serde_json::to_string(&report);
            let _ = serde_json::to_string(&report::sarif(Ok(&report), diff::Class::Note, 1));
            let xml = report::junit(Ok(&report), diff::Class::Addition);
            if let Err(e) = roxmltree::Document::parse(&xml) {
                panic!("JUnit not well-formed: {e}\n{xml}");
            }
            assert_eq!(
                report.breaks + report.additions + report.notes,
                report.findings.len()
            );
        }
    }
    // Every member of an archive, through the archive writer and back.
    if let Ok(members) = ntx::archive::read_members(rest, "archive") {
        let bytes = ntx::archive::write_gnu(&members);
        let back = ntx::archive::read_members(&bytes, "rewritten").expect("our archives read back");
        assert_eq!(back.len(), members.len());
        for (a, b) in members.iter().zip(&back) {
            assert_eq!(a.data, b.data);
        }
    }
}
