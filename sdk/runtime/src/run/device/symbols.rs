//! What the device program's debug information and symbols say of an address: its
//! function (the symbol table, demangled: C++'s and Rust's), its source line (the line
//! table, DWARF through gimli) and the calls inlined there (each inlined call's site, in
//! the function it was inlined into), so that the profile can charge code to the line that
//! called it.

use std::path::Path;

use gimli::EndianSlice;

use crate::run::device::count::text_symbols_in;

/// The program's functions by address, demangled: (start, end, name), sorted.
pub(crate) struct Functions(Vec<(u64, u64, String)>);

impl Functions {
    /// The functions of a program's ELF file (read once by the caller, with the tables
    /// below).
    pub(crate) fn of(program: &[u8]) -> Functions {
        let mut v: Vec<(u64, u64, String)> = text_symbols_in(program)
            .into_iter()
            .filter(|s| !s.0.is_empty())
            .map(|(name, at, size)| {
                let shown = demangled(&name);
                (at, at + size, shown.replace(';', ","))
            })
            .collect();
        v.sort_unstable_by_key(|r| r.0);
        Functions(v)
    }

    /// The function at `pc`: the symbol whose extent holds it, else the nearest one
    /// before it without a size (an assembly label), else `(no symbol)`.
    pub(crate) fn name(&self, pc: u64) -> String {
        let k = self.0.partition_point(|r| r.0 <= pc);
        let before = &self.0[..k];
        let sized = before.iter().rev().find(|r| r.1 > r.0);
        if let Some((_, _, name)) = sized.filter(|r| pc < r.1) {
            return name.clone();
        }
        let label = before.iter().rev().find(|r| r.1 == r.0);
        match label {
            Some((at, _, name)) if sized.is_none_or(|s| s.0 < *at) => name.clone(),
            _ => "(no symbol)".into(),
        }
    }
}

/// A symbol as its author wrote it: Rust's (v0 or legacy, without the hash) or C++'s,
/// else as it is.
pub(crate) fn demangled(name: &str) -> String {
    if let Ok(d) = rustc_demangle::try_demangle(name) {
        return format!("{d:#}");
    }
    cpp_demangle::Symbol::new(name.as_bytes())
        .ok()
        .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
        .unwrap_or_else(|| name.to_string())
}

/// The program's line table: (address, file and line or none past a sequence's end),
/// sorted by address.
pub(crate) struct LineTable(Vec<Row>);

/// A line table's row: its address, and its file and line (none past a sequence's end).
type Row = (u64, Option<(String, u64)>);

impl LineTable {
    pub(crate) fn of(program: &[u8]) -> LineTable {
        LineTable(rows(program).unwrap_or_default())
    }

    /// `pc`'s file and line; code the compiler gave no line (line 0) takes the line before
    /// it in its sequence, the line it was made for as near as the table says.
    pub(crate) fn enclosing(&self, pc: u64) -> (String, u64) {
        let k = self.0.partition_point(|r| r.0 <= pc);
        let before = self.0[..k].iter().rev().map_while(|r| r.1.as_ref());
        let known = before.take(64).find(|(_, line)| *line > 0);
        known.cloned().unwrap_or_else(|| self.at(pc))
    }

    pub(crate) fn at(&self, pc: u64) -> (String, u64) {
        let k = self.0.partition_point(|r| r.0 <= pc);
        match k.checked_sub(1).and_then(|k| self.0[k].1.clone()) {
            Some(found) => found,
            None => ("(no line table)".into(), 0),
        }
    }
}

fn rows(data: &[u8]) -> gimli::Result<Vec<Row>> {
    let mut out = Vec::new();
    each_unit(data, |dwarf, unit, program| {
        let mut rows = program.rows();
        while let Some((header, row)) = rows.next_row()? {
            if row.end_sequence() {
                out.push((row.address(), None));
                continue;
            }
            // Line 0 is code the compiler made for no one line: kept under its file.
            let place = row.file(header).and_then(|f| {
                let path = path_of(dwarf, unit, header, f)?;
                Some((path, row.line().map_or(0, |l| l.get())))
            });
            out.push((row.address(), place.or(Some(("(no line table)".into(), 0)))));
        }
        Ok(())
    })?;
    out.sort_by_key(|r| (r.0, r.1.is_some()));
    Ok(out)
}

/// The slices the debug information is read from.
type Slice<'a> = EndianSlice<'a, gimli::RunTimeEndian>;

/// A line program's file as a path: the unit's folder, the entry's folder, its name.
fn path_of(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    header: &gimli::LineProgramHeader<Slice<'_>>,
    f: &gimli::FileEntry<Slice<'_>>,
) -> Option<String> {
    let text = |v| {
        Some(
            dwarf
                .attr_string(unit, v)
                .ok()?
                .to_string_lossy()
                .into_owned(),
        )
    };
    let comp_dir = unit
        .comp_dir
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = text(f.path_name())?;
    let dir = f.directory(header).and_then(text).unwrap_or_default();
    Some(
        Path::new(&comp_dir)
            .join(dir)
            .join(name)
            .to_string_lossy()
            .into_owned(),
    )
}

/// Calls `f` with each unit of the program's debug information that has a line program.
fn each_unit(
    data: &[u8],
    mut f: impl FnMut(
        &gimli::Dwarf<Slice<'_>>,
        &gimli::Unit<Slice<'_>>,
        gimli::IncompleteLineProgram<Slice<'_>>,
    ) -> gimli::Result<()>,
) -> gimli::Result<()> {
    let Ok(file) = object::File::parse(data) else {
        return Ok(());
    };
    let (sections, endian) = crate::run::param_names::dwarf_sections(&file)?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        if let Some(program) = unit.line_program.clone() {
            f(&dwarf, &unit, program)?;
        }
    }
    Ok(())
}

/// A source place: file, line (0: none), and the function it is in.
pub(crate) type Place = (String, u64, String);

/// An inlined call: its address range `[lo, hi)`, its depth in the debug information's
/// tree (deeper: called from within a shallower one), its call site (file, line) and the
/// function inlined (demangled; empty where the debug information does not say).
type Inlined = (u64, u64, usize, (String, u64), String);

/// The calls the compiler inlined into the program's functions.
pub(crate) struct Inlines(Vec<Inlined>);

impl Inlines {
    pub(crate) fn of(program: &[u8]) -> Inlines {
        Inlines(inlined(program).unwrap_or_default())
    }

    /// The sites of the calls inlined at `pc`, innermost first.
    pub(crate) fn at(&self, pc: u64) -> Vec<(String, u64)> {
        self.holding(pc).into_iter().map(|r| r.3.clone()).collect()
    }

    /// The functions inlined at `pc`, innermost first.
    pub(crate) fn names_at(&self, pc: u64) -> Vec<String> {
        self.holding(pc).into_iter().map(|r| r.4.clone()).collect()
    }

    fn holding(&self, pc: u64) -> Vec<&Inlined> {
        let mut holding: Vec<&Inlined> = self.0.iter().filter(|r| r.0 <= pc && pc < r.1).collect();
        holding.sort_by_key(|r| std::cmp::Reverse(r.2));
        holding
    }
}

/// The program's inlined calls, from its debug information.
fn inlined(data: &[u8]) -> gimli::Result<Vec<Inlined>> {
    let mut out = Vec::new();
    each_unit(data, |dwarf, unit, program| {
        let header = program.header();
        let mut cursor = unit.entries();
        while let Some(entry) = cursor.next_dfs()? {
            if entry.tag() != gimli::DW_TAG_inlined_subroutine {
                continue;
            }
            let file = match entry.attr_value(gimli::DW_AT_call_file) {
                Some(gimli::AttributeValue::FileIndex(i)) => header.file(i),
                Some(v) => v.udata_value().and_then(|i| header.file(i)),
                None => None,
            };
            let path = file.and_then(|f| path_of(dwarf, unit, header, f));
            let line = entry
                .attr_value(gimli::DW_AT_call_line)
                .and_then(|v| v.udata_value())
                .unwrap_or(0);
            let (Some(path), depth) = (path, entry.depth()) else {
                continue;
            };
            let name = origin_name(dwarf, unit, entry)?;
            let mut ranges = dwarf.die_ranges(unit, entry)?;
            while let Some(r) = ranges.next()? {
                let site = (path.clone(), line);
                out.push((r.begin, r.end, depth.max(0) as usize, site, name.clone()));
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// An inlined call's function, demangled from its abstract origin's linkage name (or its
/// declaration's), else that origin's plain name, else empty.
fn origin_name(
    dwarf: &gimli::Dwarf<Slice<'_>>,
    unit: &gimli::Unit<Slice<'_>>,
    entry: &gimli::DebuggingInformationEntry<Slice<'_>>,
) -> gimli::Result<String> {
    let mut at = entry.attr_value(gimli::DW_AT_abstract_origin);
    let mut plain = String::new();
    // The origin, then its declaration (DW_AT_specification), at most.
    for _ in 0..2 {
        let Some(gimli::AttributeValue::UnitRef(offset)) = at else {
            break;
        };
        let origin = unit.entry(offset)?;
        let text = |v| {
            dwarf
                .attr_string(unit, v)
                .map(|s| s.to_string_lossy().into_owned())
        };
        if let Some(v) = origin.attr_value(gimli::DW_AT_linkage_name) {
            return Ok(demangled(&text(v)?));
        }
        if let (Some(v), true) = (origin.attr_value(gimli::DW_AT_name), plain.is_empty()) {
            plain = text(v)?;
        }
        at = origin.attr_value(gimli::DW_AT_specification);
    }
    Ok(plain)
}

/// A return address the device runtime took with `__builtin_return_address` (its top two
/// bits the caller's window increment, as the windowed ABI keeps them) as a code address:
/// the device program's code lies below 1 GiB.
pub fn code_address(ret: u64) -> u64 {
    ret & 0x3fff_ffff
}

/// Address `pc` of the device program at `program` in the author's terms, as the host's
/// reports give a place: `function (file:line)`, the line the innermost of the author's
/// sources where the SDK's code was inlined into theirs, else the innermost with a line;
/// `pc 0x... in the device program (no line)` where its debug information has none.
pub fn place_in(program: &Path, pc: u64) -> String {
    let data = std::fs::read(program).unwrap_or_default();
    let inlines = Inlines::of(&data);
    let chain = chain_at(&LineTable::of(&data), &inlines, pc);
    let known = |k: &usize| chain[*k].1 > 0;
    let chosen = (0..chain.len())
        .filter(known)
        .find(|k| crate::run::place::authors_file(&chain[*k].0))
        .or_else(|| (0..chain.len()).find(known));
    let Some(k) = chosen else {
        return format!("pc {pc:#x} in the device program (no line)");
    };
    // Line k of the chain is in the k-th function inlined at pc (innermost first), or in
    // the function the symbol table names when k is past them.
    let function = inlines
        .names_at(pc)
        .into_iter()
        .nth(k)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| Functions::of(&data).name(pc));
    let (file, line) = &chain[k];
    format!("{function} ({file}:{line})")
}

/// `pc`'s own file and line, then the sites of the calls inlined there, innermost first.
pub(crate) fn chain_at(table: &LineTable, inlines: &Inlines, pc: u64) -> Vec<(String, u64)> {
    let mut chain = vec![table.enclosing(pc)];
    chain.extend(inlines.at(pc));
    chain
}
