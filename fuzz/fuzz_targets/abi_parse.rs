//! The fuzz target of `fuzz/checks/abi_parse.rs` (what it checks is said there).
#![no_main]

#[path = "../checks/abi_parse.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
