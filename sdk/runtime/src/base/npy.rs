//! NumPy's `.npy` format (format versions 1.0, 2.0 and 3.0), as the runner reads inputs and
//! writes outputs: C order, little-endian, the eight element types of [`DType`]. NumPy has
//! no bfloat16: a bfloat16 array is stored as its 16-bit patterns, descr `'<u2'` (NumPy reads
//! it back as `uint16`; `.view(ml_dtypes.bfloat16)` gives the values). `uint16` is not an
//! element type of the API, so `'<u2'` means nothing else here.
//!
//! Everything else is refused with the reason, never guessed: a Fortran-ordered array, a
//! big-endian one, another element type, a header that is not NumPy's, a data part
//! shorter or longer than the shape says.

use crate::base::dtype::DType;

/// The magic string every `.npy` file starts with.
const MAGIC: &[u8] = b"\x93NUMPY";
pub use crate::base::codes::MAX_DIMS;

/// An array read from, or to be written to, a `.npy` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// Its element type.
    pub dtype: DType,
    /// Its shape (C order).
    pub shape: Vec<u64>,
    /// Its elements, little-endian, C order.
    pub data: Vec<u8>,
}

pub use crate::base::error::BaseError;

pub use crate::base::error::NpyError;

fn err<T>(e: NpyError) -> Result<T, BaseError> {
    Err(BaseError::Npy(e))
}

/// A `.npy` refusal, as the base layer's error.
fn npy(e: NpyError) -> BaseError {
    BaseError::Npy(e)
}

/// The element type a descr names.
fn dtype_of(descr: &str) -> Result<DType, BaseError> {
    if descr.starts_with('>') {
        return err(NpyError::BigEndian(descr.into()));
    }
    // Each type's descriptor, in native order ('=') too, and with either mark for one byte.
    let named = |row: &crate::base::codes::DTypeRow| {
        let body = &row.npy[1..];
        descr.get(1..) == Some(body)
            && (descr.starts_with(['<', '=']) || (row.size == 1 && descr.starts_with('|')))
    };
    let rows = &crate::base::codes::DTYPES;
    match rows.iter().find(|r| named(r)) {
        Some(row) => Ok(row.dtype),
        None => err(NpyError::UnknownDescr {
            descr: descr.into(),
        }),
    }
}

/// The descr a type is written with.
pub fn descr_of(d: DType) -> &'static str {
    d.row().npy
}

/// The header's dictionary as NumPy writes it: `{'descr': .., 'fortran_order': ..,
/// 'shape': (..), }`, keys in any order.
fn parse_header(h: &str) -> Result<(DType, Vec<u64>), BaseError> {
    let body = h
        .trim()
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or_else(|| npy(NpyError::NotADictionary(h.into())))?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    let mut rest = body.trim();
    while !rest.is_empty() {
        let (key, after) = quoted(rest)?;
        let after = after
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| npy(NpyError::NoColon(key.into())))?
            .trim_start();
        let (value, after) = match key {
            "descr" => quoted(after).map(|(v, a)| (Value::Str(v), a))?,
            "fortran_order" => boolean(after)?,
            "shape" => tuple(after)?,
            other => return err(NpyError::UnknownKey(other.into())),
        };
        match (key, value) {
            ("descr", Value::Str(v)) => descr = Some(dtype_of(v)?),
            ("fortran_order", Value::Bool(b)) => fortran = Some(b),
            ("shape", Value::Shape(s)) => shape = Some(s),
            _ => unreachable!("each key's parser gives its kind of value"),
        }
        rest = after.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    match (descr, fortran, shape) {
        (_, Some(true), _) => err(NpyError::Fortran),
        (Some(d), Some(false), Some(s)) => Ok((d, s)),
        _ => err(NpyError::MissingKey),
    }
}

enum Value<'a> {
    Str(&'a str),
    Bool(bool),
    Shape(Vec<u64>),
}

/// A quoted string at the start of `s` and what follows it.
fn quoted(s: &str) -> Result<(&str, &str), BaseError> {
    let q = s
        .chars()
        .next()
        .filter(|c| *c == '\'' || *c == '"')
        .ok_or_else(|| npy(NpyError::NotQuoted(s.into())))?;
    let inner = &s[1..];
    let end = inner.find(q).ok_or(npy(NpyError::UnterminatedString))?;
    Ok((&inner[..end], &inner[end + 1..]))
}

fn boolean(s: &str) -> Result<(Value<'_>, &str), BaseError> {
    if let Some(r) = s.strip_prefix("True") {
        Ok((Value::Bool(true), r))
    } else if let Some(r) = s.strip_prefix("False") {
        Ok((Value::Bool(false), r))
    } else {
        err(NpyError::NotABool(s.into()))
    }
}

fn tuple(s: &str) -> Result<(Value<'_>, &str), BaseError> {
    let inner = s
        .strip_prefix('(')
        .ok_or_else(|| npy(NpyError::NotATuple(s.into())))?;
    let end = inner.find(')').ok_or(npy(NpyError::UnterminatedShape))?;
    let mut dims = Vec::new();
    for part in inner[..end]
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let d = part
            .trim_end_matches('L')
            .parse::<u64>()
            .map_err(|_| npy(NpyError::NotASize(part.into())))?;
        dims.push(d);
    }
    if dims.len() > MAX_DIMS {
        return err(NpyError::TooManyDimensions(dims.len()));
    }
    Ok((Value::Shape(dims), &inner[end + 1..]))
}

/// Reads an array from the bytes of a `.npy` file.
pub fn parse(file: &[u8]) -> Result<Array, BaseError> {
    if file.len() < 10 || &file[..6] != MAGIC {
        return err(NpyError::NoMagic);
    }
    let (major, minor) = (file[6], file[7]);
    let (len, start) = match major {
        1 => (usize::from(u16::from_le_bytes([file[8], file[9]])), 10usize),
        2 | 3 if file.len() >= 12 => {
            let n = u32::from_le_bytes([file[8], file[9], file[10], file[11]]);
            (
                usize::try_from(n).map_err(|_| npy(NpyError::HeaderTooLong))?,
                12,
            )
        }
        _ => return err(NpyError::Version { major, minor }),
    };
    let header = file
        .get(start..start.saturating_add(len))
        .ok_or(npy(NpyError::EndsInHeader))?;
    let header = std::str::from_utf8(header).map_err(|_| npy(NpyError::NotText))?;
    let (dtype, shape) = parse_header(header)?;
    let numel = shape
        .iter()
        .try_fold(1u64, |n, d| n.checked_mul(*d))
        .ok_or(npy(NpyError::CountOverflows))?;
    let want = numel
        .checked_mul(dtype.size() as u64)
        .ok_or(npy(NpyError::SizeOverflows))?;
    let data = &file[start + len..];
    if data.len() as u64 != want {
        return err(NpyError::DataSize {
            bytes: data.len() as u64,
            shape,
            dtype,
            want,
        });
    }
    Ok(Array {
        dtype,
        shape,
        data: data.to_vec(),
    })
}

/// Reads the `.npy` file at `path`: a regular file whose size is exactly what its header
/// promises (the header, then the data its shape and type need), read no further than
/// that, so a device, a pipe or an endless file is refused at once with bounded memory.
pub fn read_file(path: &std::path::Path) -> Result<Array, BaseError> {
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| BaseError::Read(e.to_string()))?;
    let meta = file
        .metadata()
        .map_err(|e| BaseError::Read(e.to_string()))?;
    if !meta.is_file() {
        return Err(BaseError::NotRegular);
    }
    let size = meta.len();
    let mut bytes = Vec::new();
    let mut read_to = |bytes: &mut Vec<u8>, end: u64| {
        let more = end.saturating_sub(bytes.len() as u64);
        (&mut file)
            .take(more)
            .read_to_end(bytes)
            .map_err(|e| BaseError::Read(e.to_string()))
    };
    read_to(&mut bytes, 12)?;
    // Not a .npy header: `parse` says why.
    let Some((text_at, header_end)) = header_extent(&bytes) else {
        return parse(&bytes);
    };
    if header_end > size.min(1 << 20) {
        return err(NpyError::HeaderPastFile {
            end: header_end,
            size,
        });
    }
    read_to(&mut bytes, header_end)?;
    let header = std::str::from_utf8(&bytes[text_at..]).map_err(|_| npy(NpyError::NotText))?;
    let (dtype, shape) = parse_header(header)?;
    let want = shape
        .iter()
        .try_fold(dtype.size() as u64, |n, d| n.checked_mul(*d))
        .and_then(|n| n.checked_add(header_end));
    if want != Some(size) {
        return err(NpyError::FileSize { size, want });
    }
    read_to(&mut bytes, size)?;
    parse(&bytes)
}

/// Where a `.npy` file's header text starts and where the header ends, from its first 12
/// bytes (format 1.0: a 2-byte length at 8; 2.0 and 3.0: 4 bytes), if they are a header's.
fn header_extent(prefix: &[u8]) -> Option<(usize, u64)> {
    if prefix.get(..6)? != MAGIC {
        return None;
    }
    match prefix.get(6)? {
        1 => Some((
            10,
            10 + u64::from(u16::from_le_bytes([*prefix.get(8)?, *prefix.get(9)?])),
        )),
        2 | 3 => {
            let n = u32::from_le_bytes(prefix.get(8..12)?.try_into().ok()?);
            Some((12, 12 + u64::from(n)))
        }
        _ => None,
    }
}

/// The bytes of a `.npy` file (format 1.0) holding `a`.
pub fn to_bytes(a: &Array) -> Vec<u8> {
    let dims: Vec<String> = a.shape.iter().map(u64::to_string).collect();
    let shape = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
        descr_of(a.dtype)
    );
    // Magic, version, length and header (ending in '\n') come to a multiple of 64.
    let total = (MAGIC.len() + 4 + header.len() + 1).div_ceil(64) * 64;
    while MAGIC.len() + 4 + header.len() + 1 < total {
        header.push(' ');
    }
    header.push('\n');
    let mut out = Vec::with_capacity(total + a.data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&a.data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(header: &str, data: &[u8]) -> Vec<u8> {
        let mut v = MAGIC.to_vec();
        v.extend_from_slice(&[1, 0]);
        v.extend_from_slice(&(header.len() as u16).to_le_bytes());
        v.extend_from_slice(header.as_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn each_type_is_read_by_its_descr_in_either_order_and_written_by_one() {
        for &d in DType::ALL {
            let descr = descr_of(d);
            assert_eq!(dtype_of(descr).ok(), Some(d));
            assert_eq!(dtype_of(&format!("={}", &descr[1..])).ok(), Some(d));
            assert_eq!(descr[2..].parse::<usize>().ok(), Some(d.size()), "{descr}");
            assert!(dtype_of(&format!(">{}", &descr[1..])).is_err());
            let one_byte = dtype_of(&format!("|{}", &descr[1..])).is_ok();
            assert_eq!(one_byte, d.size() == 1, "{descr}");
        }
        let e = dtype_of("<f8").unwrap_err().to_string();
        assert!(
            e.contains("float32 '<f4'") && e.contains("bfloat16 '<u2'"),
            "{e}"
        );
        assert!(dtype_of("é1").is_err() && dtype_of("").is_err());
    }

    #[test]
    fn round_trips_every_type_and_numpy_shapes() {
        for &d in DType::ALL {
            for shape in [vec![], vec![3], vec![2, 3], vec![1, 0, 4]] {
                let n: u64 = shape.iter().product();
                let data = (0..n as usize * d.size()).map(|i| i as u8).collect();
                let a = Array {
                    dtype: d,
                    shape,
                    data,
                };
                let bytes = to_bytes(&a);
                assert_eq!(bytes.iter().position(|b| *b == b'\n').unwrap() % 64, 63);
                assert_eq!(parse(&bytes).unwrap(), a);
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_take_with_the_reason() {
        let cases = [
            (
                file(
                    "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 4],
                ),
                "big-endian",
            ),
            (
                file(
                    "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }",
                    &[0; 4],
                ),
                "Fortran",
            ),
            (
                file(
                    "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 8],
                ),
                "not an element type",
            ),
            (
                file(
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
                    &[0; 4],
                ),
                "truncated",
            ),
            (
                file(
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }",
                    &[0; 5],
                ),
                "needs 4",
            ),
            (file("{'descr': '<f4', 'shape': (1,), }", &[0; 4]), "lacks"),
            (
                file(
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }",
                    &[0; 4],
                ),
                "at most 8",
            ),
            (b"\x93NUMPY\x01\x00\xff\x00{".to_vec(), "ends inside"),
            (b"PK\x03\x04".to_vec(), "magic"),
        ];
        for (bytes, why) in cases {
            let e = parse(&bytes).unwrap_err();
            assert!(
                matches!(&e, BaseError::Npy(_)) && e.to_string().contains(why),
                "{why}: {e}"
            );
        }
    }
}
