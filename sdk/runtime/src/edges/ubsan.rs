//! The handler `-fsanitize=integer-divide-by-zero` calls (ntx builds kernels with that
//! check, on the host as on the device): an integer division or remainder by zero is
//! undefined in C++ (the host would die of SIGFPE, the device gives a value), so it is a
//! report of its own at the kernel's line, and the core stops. Not in runtime.h: the
//! compiler calls it, by the sanitizer runtime's name.

use core::ffi::c_void;

use crate::base::misuse::Kind;
use crate::percore::state;

fn divide_by_zero() {
    let detail = "an integer division or remainder by zero (undefined in C++)".to_string();
    state::with(|rt| rt.stop_at_caller(Kind::IntegerDivideByZero, detail));
}

/// The recoverable check's handler.
#[no_mangle]
pub extern "C" fn __ubsan_handle_divrem_overflow(_data: *const c_void, _lhs: usize, _rhs: usize) {
    divide_by_zero();
}

/// The handler of the check built with `-fno-sanitize-recover`.
#[no_mangle]
pub extern "C" fn __ubsan_handle_divrem_overflow_abort(
    _data: *const c_void,
    _lhs: usize,
    _rhs: usize,
) {
    divide_by_zero();
}
