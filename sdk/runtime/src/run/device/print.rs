//! A device kernel's `printf` (sdk/device/printf.c): the pieces it sends, each a text or
//! one conversion with its argument, formatted by this process's C library as the host
//! run's `printf` formats them, to its stdout (the core's).

use std::ffi::CString;

use crate::base::codes::PrintPiece;
use crate::base::wire::{self, Wire};

/// Piece types, for `match` patterns.
const TEXT: u8 = PrintPiece::Text as u8;
const INT: u8 = PrintPiece::Int as u8;
const DOUBLE: u8 = PrintPiece::Double as u8;
const STRING: u8 = PrintPiece::String as u8;

/// One conversion `spec` formatted by `f` (snprintf with the value bound).
fn format(
    spec: &[u8],
    f: impl Fn(*mut libc::c_char, usize, *const libc::c_char) -> i32,
) -> Vec<u8> {
    let Ok(spec) = CString::new(spec) else {
        return Vec::new();
    };
    let Ok(n) = usize::try_from(f(core::ptr::null_mut(), 0, spec.as_ptr())) else {
        return Vec::new();
    };
    let mut buf = vec![0u8; n + 1];
    f(buf.as_mut_ptr().cast(), buf.len(), spec.as_ptr());
    buf.truncate(n);
    buf
}

/// The text of the pieces in `p` (a malformed tail is dropped).
pub fn text(mut p: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(head) = wire::Piece::take(&mut p) {
        let Some(spec) = p.get(..usize::from(head.spec_bytes)) else {
            break;
        };
        p = &p[spec.len()..];
        match head.kind {
            TEXT => out.extend_from_slice(spec),
            INT => {
                let Some(wire::PieceInt { value: v }) = wire::PieceInt::take(&mut p) else {
                    break;
                };
                // SAFETY: a spec of one integer conversion ("ll" given), one argument.
                out.extend(format(spec, |b, l, s| unsafe {
                    libc::snprintf(b, l, s, v as libc::c_longlong)
                }));
            }
            DOUBLE => {
                let Some(wire::PieceDouble { value: v }) = wire::PieceDouble::take(&mut p) else {
                    break;
                };
                // SAFETY: a spec of one floating-point conversion, one argument.
                out.extend(format(spec, |b, l, s| unsafe {
                    libc::snprintf(b, l, s, v)
                }));
            }
            STRING => {
                let Some(wire::PieceString { bytes }) = wire::PieceString::take(&mut p) else {
                    break;
                };
                let Some(s) = p.get(..bytes as usize) else {
                    break;
                };
                p = &p[s.len()..];
                let s = CString::new(s.iter().copied().filter(|b| *b != 0).collect::<Vec<u8>>())
                    .unwrap_or_default();
                // SAFETY: a spec of one %s conversion, one NUL-terminated argument.
                out.extend(format(spec, |b, l, f| unsafe {
                    libc::snprintf(b, l, f, s.as_ptr())
                }));
            }
            _ => break,
        }
    }
    out
}

/// Prints the pieces in `p` as the kernel's text, to this core's stdout (which the runner
/// collects, as a host kernel's): the bytes printed.
pub fn print(p: &[u8]) -> u32 {
    use std::io::Write;
    let t = text(p);
    let mut o = std::io::stdout().lock();
    let _ = o.write_all(&t).and_then(|()| o.flush());
    t.len() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_format_as_the_host_printf_does() {
        let mut p = vec![TEXT, 3];
        p.extend(b"n: ");
        p.extend([INT, 6]);
        p.extend(b"%+5lld");
        p.extend(42i64.to_le_bytes());
        p.extend([TEXT, 1, b' ', DOUBLE, 4]);
        p.extend(b"%.2f");
        p.extend(2.5f64.to_le_bytes());
        p.extend([STRING, 4]);
        p.extend(b"%-4s");
        p.extend(2u32.to_le_bytes());
        p.extend(b"ab");
        p.extend([INT, 4]);
        p.extend(b"%llx");
        assert_eq!(text(&p), b"n:   +42 2.50ab  ", "a cut-off value ends it");
    }
}
