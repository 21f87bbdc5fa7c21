//! The one error type of `ntx`: what went wrong, with which file, and a stable kind a
//! pipeline can match on. Every error is an input problem (`ntx` exits 2 on it); a finding
//! of the diff is not an error.

use std::fmt;

use serde::Serialize;

/// What kind of problem an [`Error`] is. Serialised in kebab-case; the spellings are part
/// of the JSON output and stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKind {
    /// A file could not be read.
    Read,
    /// A file could not be written.
    Write,
    /// Not an ELF object, an `ar` archive or an ABI manifest.
    UnknownFormat,
    /// An ELF file that is not a valid, relocatable object.
    MalformedElf,
    /// A corrupt or unsupported `ar` archive.
    MalformedArchive,
    /// A manifest that is not valid TOML of the manifest's shape.
    MalformedManifest,
    /// The archive has no member of that name.
    MissingMember,
    /// Two objects of another ELF class, byte order or machine.
    NotComparable,
    /// A window table image that is not 168 bytes.
    MalformedTable,
    /// A table spec that is not valid, or describes a table that cannot be built.
    BadSpec,
    /// A command-line value that is not what it should be.
    BadArgument,
    /// A command line `ntx` cannot parse (an unknown flag, a missing value).
    Usage,
    /// A suppression file that is not valid, or a rule without a reason.
    BadSuppressions,
    /// A trace file that is not in the trace format.
    MalformedTrace,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::Read,
        ErrorKind::Write,
        ErrorKind::UnknownFormat,
        ErrorKind::MalformedElf,
        ErrorKind::MalformedArchive,
        ErrorKind::MalformedManifest,
        ErrorKind::MissingMember,
        ErrorKind::NotComparable,
        ErrorKind::MalformedTable,
        ErrorKind::BadSpec,
        ErrorKind::BadArgument,
        ErrorKind::Usage,
        ErrorKind::BadSuppressions,
        ErrorKind::MalformedTrace,
    ];

    /// The kind's stable spelling.
    pub fn spelling(self) -> String {
        // Serialising a unit variant cannot fail.
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    }
}

/// An error that names the file (or `file(member)`, or `command line`) and says what is
/// wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Error {
    /// The kind, for programs.
    pub kind: ErrorKind,
    /// The file concerned.
    pub file: String,
    /// What is wrong, for people.
    pub message: String,
}

impl Error {
    /// An error of `kind` about `file`.
    pub fn new(kind: ErrorKind, file: impl Into<String>, message: impl Into<String>) -> Self {
        Error {
            kind,
            file: file.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::ErrorKind;

    /// The README's list of error kinds is exactly `ALL`, in order.
    #[test]
    fn the_readme_lists_exactly_the_error_kinds() {
        let readme = include_str!("../README.md");
        let list = readme
            .split("`error.kind` is stable: ")
            .nth(1)
            .and_then(|r| r.split(". ").next())
            .expect("README lists the error kinds");
        let listed: Vec<String> = list
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|w| !w.contains(' '))
            .map(String::from)
            .collect();
        let all: Vec<String> = ErrorKind::ALL.iter().map(|k| k.spelling()).collect();
        assert_eq!(listed, all);
    }
}
