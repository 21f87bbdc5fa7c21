//! What the handlers of the kernels' checks call (src/ubsan.c defines them weak; ntx builds
//! kernels with `-fsanitize=integer-divide-by-zero,signed-integer-overflow,shift-exponent,`
//! `float-cast-overflow`, on the host as on the device): each operation is undefined in
//! C++, and the host's value and the device's differ (an integer division by zero: SIGFPE
//! here, a value there), so it is a report at the kernel's line, and the core stops. Not in
//! runtime.h: only the handlers call these.

use crate::base::codes::Undefined;
use crate::base::misuse::Kind;
use crate::percore::state;

/// Reports the division by zero the calling kernel is making.
#[no_mangle]
pub extern "C" fn nt_integer_divide_by_zero() {
    let detail = "an integer division or remainder by zero (undefined in C++)".to_string();
    state::with(|rt| rt.stop_at_caller(Kind::IntegerDivideByZero, detail));
}

/// Reports `what`, which the calling kernel is making.
fn undefined(what: Undefined) {
    let detail = what.words().to_string();
    state::with(|rt| rt.stop_at_caller(Kind::UndefinedArithmetic, detail));
}

/// A signed integer overflow (the most negative value divided by -1 included).
#[no_mangle]
pub extern "C" fn nt_signed_overflow() {
    undefined(Undefined::SignedOverflow)
}

/// A shift by a negative amount or by its operand's width or more.
#[no_mangle]
pub extern "C" fn nt_shift_out_of_bounds() {
    undefined(Undefined::Shift)
}

/// A floating-point value converted to an integer type that cannot hold it.
#[no_mangle]
pub extern "C" fn nt_float_cast_overflow() {
    undefined(Undefined::FloatToInteger)
}
