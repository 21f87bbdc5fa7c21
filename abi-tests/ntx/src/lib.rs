//! `ntx`, the library behind the command: an object's ABI as a linker sees it
//! ([`model`]), the original's ABI as recorded ([`manifest`]), the comparison ([`diff`]),
//! `ar` archives ([`archive`]), and window tables for people ([`tables`]).

pub mod archive;
pub mod diff;
pub mod manifest;
pub mod model;
pub mod tables;

/// Builds the ABI model of a file: an ELF relocatable, a member of an `ar` archive
/// (`member`, default `translation.o`), or a reference manifest (TOML).
pub fn load(path: &std::path::Path, member: &str) -> Result<model::AbiModel, model::InputError> {
    let source = path.display().to_string();
    let data = std::fs::read(path)
        .map_err(|e| model::InputError::new(&source, format!("cannot read: {e}")))?;
    load_bytes(&data, &source, member)
}

/// [`load`] on bytes already read.
pub fn load_bytes(
    data: &[u8],
    source: &str,
    member: &str,
) -> Result<model::AbiModel, model::InputError> {
    if data.is_empty() {
        return Err(model::InputError::new(source, "empty file"));
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
            Ok(manifest::Manifest::parse(text, source)?.to_model(source))
        }
        _ => Err(model::InputError::new(
            source,
            "not an ELF object, an ar archive or an ABI manifest",
        )),
    }
}
