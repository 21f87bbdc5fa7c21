//! What the handlers of `-fsanitize=integer-divide-by-zero` call (src/ubsan.c defines them
//! weak; ntx builds kernels with that check, on the host as on the device): an integer
//! division or remainder by zero is undefined in C++ (the host would die of SIGFPE, the
//! device gives a value), so it is a report of its own at the kernel's line, and the core
//! stops. Not in runtime.h: only the handlers call it.

use crate::base::misuse::Kind;
use crate::percore::state;

/// Reports the division by zero the calling kernel is making.
#[no_mangle]
pub extern "C" fn nt_integer_divide_by_zero() {
    let detail = "an integer division or remainder by zero (undefined in C++)".to_string();
    state::with(|rt| rt.stop_at_caller(Kind::IntegerDivideByZero, detail));
}
