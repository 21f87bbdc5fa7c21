//! Arbitrary 168-byte tables (next_alloc included) and arbitrary sequences of translate,
//! lookup and span calls, through the library's C ABI and the seed's reference C model
//! with the contract's deviations applied (abi-tests/src/differential.rs). Any difference
//! in results, table bytes or register stores is a crash.
//!
//! Input: 168 bytes of table, then 17-byte calls: a kind byte (0 translate, 1 lookup,
//! 2 span), a little-endian address, a little-endian length (span only).
//! Register locations point into fuzzer-owned banks (the table's own values for them are
//! replaced; every other byte is the fuzzer's).
//!
//! The check itself, shared by the fuzz target (`fuzz/fuzz_targets/translate_diff.rs`) and the
//! replay of the committed corpus in the workspace's tests (`abi-tests/tests/fuzz_corpus.rs`).

use neuron_translate::layout::offsets::CTX_SIZE;
use neuron_translate::TranslationCtx;
use nt_support::differential::Pair;
use nt_support::gen::LibCall;

/// One input: returns, or panics with what is wrong.
pub fn check(data: &[u8]) {
    let Some((head, calls)) = data.split_first_chunk::<CTX_SIZE>() else {
        return;
    };
    let mut table = TranslationCtx::from_bytes(head);
    for (k, r) in table.records.iter_mut().enumerate() {
        r.reg_location = k as u64; // bank index: Pair binds it to a real block
    }
    let mut pair = Pair::new(&table);
    for (i, c) in calls.chunks_exact(17).enumerate() {
        let addr = u64::from_le_bytes(c[1..9].try_into().unwrap());
        let len = u64::from_le_bytes(c[9..17].try_into().unwrap());
        let r = match c[0] % 3 {
            0 => pair.step(LibCall::Translate(addr)),
            1 => pair.step(LibCall::Lookup(addr)),
            _ => pair.step_span(addr, len),
        };
        if let Err(e) = r {
            panic!("call {i}: {e}");
        }
    }
}
