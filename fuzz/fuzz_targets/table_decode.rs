//! The fuzz target of `fuzz/checks/table_decode.rs` (what it checks is said there).
#![no_main]

#[path = "../checks/table_decode.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
