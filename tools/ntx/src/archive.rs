//! `ar` archives: reading members (with the `object` crate) and writing a GNU archive with
//! a symbol index, for `ntx relink`.

use object::read::archive::ArchiveFile;
use object::{Object, ObjectSymbol};

use crate::error::{Error, ErrorKind};

/// One member, with what its header said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The member's name.
    pub name: Vec<u8>,
    /// Its bytes, exactly.
    pub data: Vec<u8>,
    /// Header fields kept as they were: mtime, uid, gid, mode.
    pub date: u64,
    /// Owner.
    pub uid: u64,
    /// Group.
    pub gid: u64,
    /// Mode (octal in the header).
    pub mode: u64,
}

/// Reads every member of an archive, in order. The symbol index and long-name table are
/// not members.
pub fn read_members(data: &[u8], source: &str) -> Result<Vec<Member>, Error> {
    let archive = ArchiveFile::parse(data).map_err(|e| {
        Error::new(
            ErrorKind::MalformedArchive,
            source,
            format!("not a valid ar archive: {e}"),
        )
    })?;
    if archive.is_thin() {
        return Err(Error::new(
            ErrorKind::MalformedArchive,
            source,
            "a thin archive (members are outside it): not supported",
        ));
    }
    let mut out = Vec::new();
    for m in archive.members() {
        let m = m.map_err(|e| {
            Error::new(
                ErrorKind::MalformedArchive,
                source,
                format!("corrupt archive member: {e}"),
            )
        })?;
        let bytes = m.data(data).map_err(|e| {
            Error::new(
                ErrorKind::MalformedArchive,
                source,
                format!(
                    "corrupt archive member {}: {e}",
                    String::from_utf8_lossy(m.name())
                ),
            )
        })?;
        out.push(Member {
            name: m.name().to_vec(),
            data: bytes.to_vec(),
            date: m.date().unwrap_or(0),
            uid: m.uid().unwrap_or(0),
            gid: m.gid().unwrap_or(0),
            mode: m.mode().unwrap_or(0o644),
        });
    }
    Ok(out)
}

/// The bytes of the member called `name`, or an error listing the members there are.
pub fn member<'a>(members: &'a [Member], name: &str, source: &str) -> Result<&'a Member, Error> {
    members
        .iter()
        .find(|m| m.name == name.as_bytes())
        .ok_or_else(|| {
            let names: Vec<String> = members
                .iter()
                .map(|m| String::from_utf8_lossy(&m.name).into_owned())
                .collect();
            Error::new(
                ErrorKind::MissingMember,
                source,
                format!(
                    "no member named {name} (members: {})",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                ),
            )
        })
}

/// The global symbols a member defines, for the archive's symbol index (none for a member
/// that is not an object file).
pub fn defined_globals(data: &[u8]) -> Vec<String> {
    let Ok(file) = object::File::parse(data) else {
        return Vec::new();
    };
    file.symbols()
        .filter(|s| s.is_global() && !s.is_undefined() && s.kind() != object::SymbolKind::Section)
        .filter_map(|s| s.name().ok().map(String::from))
        .filter(|n| !n.is_empty())
        .collect()
}

fn header(name: &[u8], date: u64, uid: u64, gid: u64, mode: u64, size: usize) -> Vec<u8> {
    let mut h = Vec::with_capacity(60);
    let mut field = |v: &[u8], w: usize| {
        let mut f = v[..v.len().min(w)].to_vec();
        f.resize(w, b' ');
        h.extend_from_slice(&f);
    };
    field(name, 16);
    field(date.to_string().as_bytes(), 12);
    field(uid.to_string().as_bytes(), 6);
    field(gid.to_string().as_bytes(), 6);
    field(format!("{mode:o}").as_bytes(), 8);
    field(size.to_string().as_bytes(), 10);
    h.extend_from_slice(b"`\n");
    h
}

/// Writes a GNU archive of `members`, in order, with a symbol index (`/`) and, when a name
/// needs it, a long-name table (`//`). Member bytes are copied exactly.
pub fn write_gnu(members: &[Member]) -> Vec<u8> {
    // Long names.
    let mut long_names = Vec::new();
    let mut names = Vec::new();
    for m in members {
        if m.name.len() > 15 || m.name.contains(&b'/') || m.name.contains(&b' ') {
            names.push(format!("/{}", long_names.len()).into_bytes());
            long_names.extend_from_slice(&m.name);
            long_names.extend_from_slice(b"/\n");
        } else {
            let mut n = m.name.clone();
            n.push(b'/');
            names.push(n);
        }
    }
    if long_names.len() % 2 == 1 {
        long_names.push(b'\n');
    }
    let symbols: Vec<Vec<String>> = members.iter().map(|m| defined_globals(&m.data)).collect();
    let sym_count: usize = symbols.iter().map(Vec::len).sum();
    let sym_names_len: usize = symbols.iter().flatten().map(|s| s.len() + 1).sum();
    let mut symtab_len = 4 + 4 * sym_count + sym_names_len;
    symtab_len += symtab_len % 2;

    // Offsets of each member header.
    let mut offset = 8 + 60 + symtab_len;
    if !long_names.is_empty() {
        offset += 60 + long_names.len();
    }
    let mut offsets = Vec::new();
    for m in members {
        offsets.push(offset);
        offset += 60 + m.data.len() + m.data.len() % 2;
    }

    let mut out = b"!<arch>\n".to_vec();
    out.extend(header(b"/", 0, 0, 0, 0, symtab_len));
    out.extend_from_slice(&(sym_count as u32).to_be_bytes());
    for (i, syms) in symbols.iter().enumerate() {
        for _ in syms {
            out.extend_from_slice(&(offsets[i] as u32).to_be_bytes());
        }
    }
    for s in symbols.iter().flatten() {
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    }
    if (4 + 4 * sym_count + sym_names_len) % 2 == 1 {
        out.push(0);
    }
    if !long_names.is_empty() {
        out.extend(header(b"//", 0, 0, 0, 0, long_names.len()));
        out.extend_from_slice(&long_names);
    }
    for (m, n) in members.iter().zip(&names) {
        out.extend(header(n, m.date, m.uid, m.gid, m.mode, m.data.len()));
        out.extend_from_slice(&m.data);
        if m.data.len() % 2 == 1 {
            out.push(b'\n');
        }
    }
    out
}
