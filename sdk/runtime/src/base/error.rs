//! What the base layer's rules refuse, each with its reason in words.

use crate::base::codes::{DType, DTYPES, MAX_DIMS};

/// An error of the base layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseError {
    /// A `.npy` file's bytes are not an array the API holds.
    #[error("{0}")]
    Npy(NpyError),
    /// A `.npy` file could not be read: the system's reason, as it said it.
    #[error("{0}")]
    Read(String),
    /// A `.npy` path that is not a regular file.
    #[error("not a regular file (a .npy file is read whole, its size known)")]
    NotRegular,
}

/// What is wrong with a `.npy` file's bytes (base/npy.rs).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NpyError {
    #[error("not a .npy file (no \\x93NUMPY magic)")]
    NoMagic,
    #[error("format version {major}.{minor} is not 1.0, 2.0 or 3.0")]
    Version { major: u8, minor: u8 },
    #[error("header too long")]
    HeaderTooLong,
    #[error("the file ends inside its header")]
    EndsInHeader,
    #[error("its header claims {end} bytes, past the file's {size} (or past 1 MiB)")]
    HeaderPastFile { end: u64, size: u64 },
    #[error("the header is not text")]
    NotText,
    #[error("the header is not a dictionary: {0:?}")]
    NotADictionary(String),
    #[error("no ':' after key '{0}'")]
    NoColon(String),
    #[error("unknown header key '{0}'")]
    UnknownKey(String),
    #[error("expected a quoted string at {0:?}")]
    NotQuoted(String),
    #[error("an unterminated string in the header")]
    UnterminatedString,
    #[error("'fortran_order' is not True or False at {0:?}")]
    NotABool(String),
    #[error("'shape' is not a tuple at {0:?}")]
    NotATuple(String),
    #[error("an unterminated shape tuple")]
    UnterminatedShape,
    #[error("shape entry '{0}' is not a size")]
    NotASize(String),
    #[error("{0} dimensions: a tensor has at most {MAX_DIMS}")]
    TooManyDimensions(usize),
    #[error(
        "the array is in Fortran order: save it in C order (np.save(f, np.ascontiguousarray(a)))"
    )]
    Fortran,
    #[error("the header lacks one of 'descr', 'fortran_order' and 'shape'")]
    MissingKey,
    #[error("descr '{0}' is big-endian: convert it first (a.astype(a.dtype.newbyteorder('<')))")]
    BigEndian(String),
    #[error(
        "descr '{descr}' is not an element type of the custom-op API ({})",
        known_descrs()
    )]
    UnknownDescr { descr: String },
    #[error("the shape's element count overflows")]
    CountOverflows,
    #[error("the shape's size overflows")]
    SizeOverflows,
    /// The data's bytes, the shape and type, and the bytes they need.
    #[error("the data part has {bytes} bytes where shape {shape:?} of {dtype} needs {want}{}", if bytes < want { " (truncated)" } else { "" })]
    DataSize {
        bytes: u64,
        shape: Vec<u64>,
        dtype: DType,
        want: u64,
    },
    /// The file's bytes, and what its header promises (`None`: past 2^64).
    #[error("the file has {size} bytes where its header promises {}", want.map_or_else(|| "more than 2^64".into(), |w| w.to_string()))]
    FileSize { size: u64, want: Option<u64> },
}

/// Every element type with its `.npy` descriptor, as a refusal lists them.
fn known_descrs() -> String {
    let each: Vec<String> = DTYPES
        .iter()
        .map(|r| format!("{} '{}'", r.name, r.npy))
        .collect();
    each.join(", ")
}
