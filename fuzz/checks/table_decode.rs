//! Arbitrary bytes into the table decoder and `ntx explain`'s renderings: never fails on
//! 168 bytes, and answers anything else with an error naming the size.
//!
//! The check itself, shared by the fuzz target (`fuzz/fuzz_targets/table_decode.rs`) and the
//! replay of the committed corpus in the workspace's tests (`abi-tests/tests/fuzz_corpus.rs`).

use neuron_translate::layout::{offsets::CTX_SIZE, REUSABLE_SLOTS};
use neuron_translate::tables::describe_bytes;
use ntx::tables::{explain, explain_json, explain_text};

/// One input: returns, or panics with what is wrong.
pub fn check(data: &[u8]) {
    match <&[u8; CTX_SIZE]>::try_from(data) {
        Ok(bytes) => {
            let d = describe_bytes(bytes);
            assert_eq!(d.records.len(), 5);
            assert!(d.victim < usize::from(REUSABLE_SLOTS));
            let text = explain_text(&d);
            assert!(text.contains("slot 4"));
            let _ = explain_json(&d);
            assert!(explain(data, "t", true).is_ok());
        }
        Err(_) => {
            let e = explain(data, "t", false).expect_err("only a table's size is a table");
            assert!(e.message.contains(&CTX_SIZE.to_string()));
        }
    }
}
