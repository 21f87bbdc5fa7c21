//! The fuzz target of `fuzz/checks/npy.rs` (what it checks is said there).
#![no_main]

#[path = "../checks/npy.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
