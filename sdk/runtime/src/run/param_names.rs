//! The kernels' parameter names, read from the op program's own debug information (ntx
//! builds kernels with `-g`): `--describe` gives them, and the Python package names the
//! arguments of each op's PyTorch schema after them. A kernel whose names cannot be read
//! (no debug information, a stripped program, a count that is not the kernel's) has none,
//! and the caller falls back to positions.

use gimli::{AttributeValue, EndianSlice, RunTimeEndian};
use object::{Object, ObjectSection};

type Slice<'a> = EndianSlice<'a, RunTimeEndian>;

/// For each `(address, parameters)` of a function in this process: its parameters' names
/// in order, if the program's debug information says them all.
pub fn of_functions(functions: &[(usize, usize)]) -> Vec<Option<Vec<String>>> {
    let none = || vec![None; functions.len()];
    let Ok(data) = std::fs::read("/proc/self/exe") else {
        return none();
    };
    let Ok(file) = object::File::parse(&*data) else {
        return none();
    };
    let bias = load_bias(&file, functions.first().map_or(0, |f| f.0));
    let wanted: Vec<(u64, usize)> = functions
        .iter()
        .map(|(a, n)| ((*a as u64).wrapping_sub(bias), *n))
        .collect();
    names_in(&file, &wanted).unwrap_or_else(|_| none())
}

/// What to subtract from a run-time address for the file's: the load address of a
/// position-independent program, 0 for one linked at fixed addresses.
fn load_bias(file: &object::File<'_>, any: usize) -> u64 {
    if file.kind() != object::ObjectKind::Dynamic {
        return 0;
    }
    // SAFETY: Dl_info is plain data (pointers and integers), valid all zero.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the dynamic linker's list and writes `info` on success.
    if unsafe { libc::dladdr(any as *const libc::c_void, &mut info) } == 0 {
        return 0;
    }
    info.dli_fbase as u64
}

/// A program's DWARF sections (empty where it has none) and its byte order.
pub fn dwarf_sections<'a>(
    file: &object::File<'a>,
) -> gimli::Result<(gimli::DwarfSections<&'a [u8]>, RunTimeEndian)> {
    let endian = if file.is_little_endian() {
        RunTimeEndian::Little
    } else {
        RunTimeEndian::Big
    };
    let sections = gimli::DwarfSections::load(|id| -> gimli::Result<&'a [u8]> {
        Ok(file
            .section_by_name(id.name())
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]))
    })?;
    Ok((sections, endian))
}

fn names_in(
    file: &object::File<'_>,
    wanted: &[(u64, usize)],
) -> gimli::Result<Vec<Option<Vec<String>>>> {
    let (sections, endian) = dwarf_sections(file)?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    let mut found = vec![None; wanted.len()];
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        names_in_unit(&dwarf, &unit, wanted, &mut found)?;
    }
    Ok(found)
}

/// The subprograms of `unit` whose entry address is wanted: their parameters' names.
fn names_in_unit(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    wanted: &[(u64, usize)],
    found: &mut [Option<Vec<String>>],
) -> gimli::Result<()> {
    let mut cursor = unit.entries();
    // The wanted function being read: its index, depth and the names so far.
    let mut open: Option<(usize, isize, Vec<String>)> = None;
    while let Some(entry) = cursor.next_dfs()? {
        let depth = entry.depth();
        if let Some((k, d, names)) = &mut open {
            if depth > *d {
                if depth == *d + 1 && entry.tag() == gimli::DW_TAG_formal_parameter {
                    names.push(name_of(dwarf, unit, entry)?.unwrap_or_default());
                }
                continue;
            }
            let k = *k;
            finish(found, wanted, k, std::mem::take(names));
            open = None;
        }
        if entry.tag() != gimli::DW_TAG_subprogram {
            continue;
        }
        // Where its code starts: a range of it (one, or a hot and a cold part) begins at
        // the function's address.
        let mut ranges = dwarf.die_ranges(unit, entry)?;
        while let Some(r) = ranges.next()? {
            if let Some(k) = wanted.iter().position(|w| w.0 == r.begin) {
                open = Some((k, depth, Vec::new()));
                break;
            }
        }
    }
    if let Some((k, _, names)) = open {
        finish(found, wanted, k, names);
    }
    Ok(())
}

/// Keeps function `k`'s names if there is one for each parameter, each named.
fn finish(
    found: &mut [Option<Vec<String>>],
    wanted: &[(u64, usize)],
    k: usize,
    names: Vec<String>,
) {
    if names.len() == wanted[k].1 && names.iter().all(|n| !n.is_empty()) {
        found[k] = Some(names);
    }
}

/// A DIE's name, its own or its abstract origin's (an inlined or optimized function's
/// parameters name themselves through the abstract one).
fn name_of(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    entry: &gimli::DebuggingInformationEntry<Slice<'_>>,
) -> gimli::Result<Option<String>> {
    if let Some(v) = entry.attr_value(gimli::DW_AT_name) {
        let s = dwarf.attr_string(unit, v)?;
        return Ok(Some(s.to_string_lossy().into_owned()));
    }
    match entry.attr_value(gimli::DW_AT_abstract_origin) {
        Some(AttributeValue::UnitRef(offset)) => {
            let origin = unit.entry(offset)?;
            match origin.attr_value(gimli::DW_AT_name) {
                Some(v) => Ok(Some(
                    dwarf.attr_string(unit, v)?.to_string_lossy().into_owned(),
                )),
                None => Ok(None),
            }
        }
        _ => Ok(None),
    }
}
