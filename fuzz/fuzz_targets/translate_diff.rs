//! The fuzz target of `fuzz/checks/translate_diff.rs` (what it checks is said there).
#![no_main]

#[path = "../checks/translate_diff.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
