//! Arbitrary bytes into the runner's `.npy` reader: never panics; an array it accepts
//! writes back to a file that reads as the same array.
//!
//! The check itself, shared by the fuzz target (`fuzz/fuzz_targets/npy.rs`) and the
//! replay of the committed corpus in the workspace's tests (`abi-tests/tests/fuzz_corpus.rs`).

use neuron_customop_host::base::npy::{parse, to_bytes};

/// One input: returns, or panics with what is wrong.
pub fn check(data: &[u8]) {
    if let Ok(a) = parse(data) {
        let n: u64 = a.shape.iter().product();
        assert_eq!(a.data.len() as u64, n * a.dtype.size() as u64);
        assert_eq!(parse(&to_bytes(&a)).as_ref(), Ok(&a));
    }
}
