//! `ntx`, the library behind the command: an object's ABI as a linker sees it
//! ([`model`]), the original's ABI as recorded ([`manifest`]), the comparison ([`diff`]),
//! `ar` archives ([`archive`]), and window tables for people ([`tables`]).

pub mod archive;
pub mod diff;
pub mod error;
pub mod finding;
pub mod guard;
pub mod manifest;
pub mod model;
pub mod op;
pub mod op_deps;
pub mod op_device;
pub mod op_error;
pub mod op_heap;
pub mod op_sdk;
pub mod parity;
pub mod report;
pub mod simulate;
pub mod suppress;
pub mod tables;

use error::{Error, ErrorKind};

/// Builds the ABI model of a file: an ELF relocatable, a member of an `ar` archive
/// (`member`, default `translation.o`), or a reference manifest (TOML).
pub fn load(path: &std::path::Path, member: &str) -> Result<model::AbiModel, Error> {
    let source = path.display().to_string();
    let data = std::fs::read(path)
        .map_err(|e| Error::new(ErrorKind::Read, &source, format!("cannot read: {e}")))?;
    load_bytes(&data, &source, member)
}

/// [`load`] on bytes already read.
pub fn load_bytes(data: &[u8], source: &str, member: &str) -> Result<model::AbiModel, Error> {
    if data.is_empty() {
        return Err(Error::new(ErrorKind::UnknownFormat, source, "empty file"));
    }
    if data.starts_with(b"!<arch>\n") || data.starts_with(b"!<thin>\n") {
        let members = archive::read_members(data, source)?;
        let m = archive::member(&members, member, source)?;
        return model::from_elf(&m.data, &format!("{source}({member})"));
    }
    if data.starts_with(b"\x7fELF") {
        return model::from_elf(data, source);
    }
    match std::str::from_utf8(data) {
        Ok(text) if text.contains("[object]") => {
            manifest::Manifest::parse(text, source)?.to_model(source)
        }
        _ => Err(Error::new(
            ErrorKind::UnknownFormat,
            source,
            "not an ELF object, an ar archive or an ABI manifest",
        )),
    }
}
