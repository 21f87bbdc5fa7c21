//! `--profile`: where a core's counted instructions went, from the counting plugin's
//! `profile=1` lines (sdk/qemu/count_profile.h: each block's instructions' addresses, the
//! call tree, each block's executions at each node of it). Each instruction is put on its
//! source line by the program's line table (DWARF, gimli) and in its function (the symbol
//! table); each block's executions at a node become a call stack. The device runtime's
//! blocks are left out as `--stats` leaves them out, so the lines sum to the same total.

use crate::run::error::RunError;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use gimli::EndianSlice;
use serde::{Deserialize, Serialize};

use crate::run::device::count::{text_symbols, Classes};

/// A source line's instructions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    /// The source file (`(no line table)` where the program has none for it).
    pub file: String,
    /// The line (0 where unknown).
    pub line: u64,
    /// The function its instructions are in.
    pub function: String,
    /// Instructions executed there.
    pub instructions: u64,
}

/// Where a core's (or the op's) counted instructions went.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// All of them: the `--stats` figure `instructions`.
    pub instructions: u64,
    /// By source line, most first.
    pub lines: Vec<Line>,
    /// By function, most first.
    pub functions: Vec<(String, u64)>,
    /// By call stack, `outer;inner` (the flame graph's folded lines), in order.
    pub stacks: Vec<(String, u64)>,
}

impl Profile {
    /// The sum of two profiles (the op's, over its cores).
    pub fn merged(profiles: &[Profile]) -> Profile {
        let mut lines: BTreeMap<(String, u64, String), u64> = BTreeMap::new();
        let mut functions: BTreeMap<String, u64> = BTreeMap::new();
        let mut stacks: BTreeMap<String, u64> = BTreeMap::new();
        let mut instructions = 0;
        for p in profiles {
            instructions += p.instructions;
            for l in &p.lines {
                *lines
                    .entry((l.file.clone(), l.line, l.function.clone()))
                    .or_default() += l.instructions;
            }
            for (f, n) in &p.functions {
                *functions.entry(f.clone()).or_default() += n;
            }
            for (s, n) in &p.stacks {
                *stacks.entry(s.clone()).or_default() += n;
            }
        }
        finish(instructions, lines, functions, stacks)
    }
}

fn finish(
    instructions: u64,
    lines: BTreeMap<(String, u64, String), u64>,
    functions: BTreeMap<String, u64>,
    stacks: BTreeMap<String, u64>,
) -> Profile {
    let mut lines: Vec<Line> = lines
        .into_iter()
        .map(|((file, line, function), instructions)| Line {
            file,
            line,
            function,
            instructions,
        })
        .collect();
    lines.sort_by_key(|l| std::cmp::Reverse(l.instructions));
    let mut functions: Vec<(String, u64)> = functions.into_iter().collect();
    functions.sort_by_key(|f| std::cmp::Reverse(f.1));
    Profile {
        instructions,
        lines,
        functions,
        stacks: stacks.into_iter().collect(),
    }
}

/// The program's functions by address, demangled: (start, end, name), sorted.
struct Functions(Vec<(u64, u64, String)>);

impl Functions {
    fn of(program: &Path) -> Functions {
        let mut v: Vec<(u64, u64, String)> = text_symbols(program)
            .into_iter()
            .filter(|s| !s.0.is_empty())
            .map(|(name, at, size)| {
                let shown = cpp_demangle::Symbol::new(name.as_bytes())
                    .ok()
                    .and_then(|s| s.demangle(&cpp_demangle::DemangleOptions::default()).ok())
                    .unwrap_or(name);
                (at, at + size, shown.replace(';', ","))
            })
            .collect();
        v.sort_unstable_by_key(|r| r.0);
        Functions(v)
    }

    /// The function at `pc`: the symbol whose extent holds it, else the nearest one
    /// before it without a size (an assembly label), else `(no symbol)`.
    fn name(&self, pc: u64) -> String {
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

/// The program's line table: (address, file and line or none past a sequence's end),
/// sorted by address.
struct LineTable(Vec<Row>);

/// A line table's row: its address, and its file and line (none past a sequence's end).
type Row = (u64, Option<(String, u64)>);

impl LineTable {
    fn of(program: &Path) -> LineTable {
        let rows = std::fs::read(program)
            .ok()
            .and_then(|data| rows(&data).ok())
            .unwrap_or_default();
        LineTable(rows)
    }

    fn at(&self, pc: u64) -> (String, u64) {
        let k = self.0.partition_point(|r| r.0 <= pc);
        match k.checked_sub(1).and_then(|k| self.0[k].1.clone()) {
            Some(found) => found,
            None => ("(no line table)".into(), 0),
        }
    }
}

fn rows(data: &[u8]) -> gimli::Result<Vec<Row>> {
    let Ok(file) = object::File::parse(data) else {
        return Ok(Vec::new());
    };
    let (sections, endian) = crate::run::param_names::dwarf_sections(&file)?;
    let dwarf = sections.borrow(|s| EndianSlice::new(s, endian));
    let mut out = Vec::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next()? {
        let unit = dwarf.unit(header)?;
        let Some(program) = unit.line_program.clone() else {
            continue;
        };
        let text = |v| -> Option<String> {
            Some(
                dwarf
                    .attr_string(&unit, v)
                    .ok()?
                    .to_string_lossy()
                    .into_owned(),
            )
        };
        let comp_dir = unit
            .comp_dir
            .map(|d| d.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut rows = program.rows();
        while let Some((header, row)) = rows.next_row()? {
            if row.end_sequence() {
                out.push((row.address(), None));
                continue;
            }
            // Line 0 is code the compiler made for no one line: kept under its file.
            let place = row.file(header).and_then(|f| {
                let name = text(f.path_name())?;
                let dir = f.directory(header).and_then(text).unwrap_or_default();
                let path = Path::new(&comp_dir).join(dir).join(name);
                Some((
                    path.to_string_lossy().into_owned(),
                    row.line().map_or(0, |l| l.get()),
                ))
            });
            out.push((row.address(), place.or(Some(("(no line table)".into(), 0)))));
        }
    }
    out.sort_by_key(|r| (r.0, r.1.is_some()));
    Ok(out)
}

/// The plugin's `profile=1` lines, read.
#[derive(Default)]
struct Raw {
    /// Block number: its start and its instructions' addresses.
    blocks: HashMap<u32, (u64, Vec<u64>)>,
    /// Node: its parent and its entry address.
    nodes: HashMap<u32, (u32, u64)>,
    /// (node, block, executions).
    pairs: Vec<(u32, u32, u64)>,
}

fn raw(lines: &[String]) -> Option<Raw> {
    let hex = |s: &str| u64::from_str_radix(s, 16).ok();
    let mut r = Raw::default();
    for line in lines {
        let f: Vec<&str> = line.split(' ').collect();
        match f.as_slice() {
            ["b", id, start, n, addrs @ ..] => {
                let addrs: Option<Vec<u64>> = addrs.iter().map(|a| hex(a)).collect();
                let addrs = addrs?;
                (addrs.len() as u64 == n.parse::<u64>().ok()?).then_some(())?;
                r.blocks.insert(id.parse().ok()?, (hex(start)?, addrs));
            }
            ["n", id, parent, entry] => {
                r.nodes
                    .insert(id.parse().ok()?, (parent.parse().ok()?, hex(entry)?));
            }
            ["p", node, block, n] => {
                r.pairs
                    .push((node.parse().ok()?, block.parse().ok()?, n.parse().ok()?));
            }
            _ => return None,
        }
    }
    Some(r)
}

/// The call stack of node `node` ending in the function at `leaf`, outermost first.
fn stack(r: &Raw, functions: &Functions, node: u32, leaf: u64) -> String {
    let mut frames = Vec::new();
    let mut at = node;
    while let Some(&(parent, entry)) = r.nodes.get(&at) {
        frames.push(functions.name(entry));
        if frames.len() > 512 {
            break;
        }
        at = parent;
    }
    frames.reverse();
    let last = functions.name(leaf);
    if frames.last() != Some(&last) {
        frames.push(last);
    }
    frames.join(";")
}

/// The profile of one core's run of `program` from the plugin's `profile=1` lines; its
/// total must be `counted` (the `--stats` figure from the same run), or the reason.
pub fn of(
    lines: &[String],
    classes: &Classes,
    program: &Path,
    counted: u64,
) -> Result<Profile, RunError> {
    let r = raw(lines).ok_or_else(|| {
        RunError::Profile("the counting plugin's profile lines do not read".into())
    })?;
    let (functions, table) = (Functions::of(program), LineTable::of(program));
    let mut by_line: BTreeMap<(String, u64, String), u64> = BTreeMap::new();
    let mut by_function: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_stack: BTreeMap<String, u64> = BTreeMap::new();
    let mut total = 0u64;
    for &(node, block, executions) in &r.pairs {
        let (start, addrs) = r.blocks.get(&block).ok_or_else(|| {
            RunError::Profile(format!(
                "the profile names block {block}, which it does not list"
            ))
        })?;
        if !classes.counted(*start) {
            continue;
        }
        for &a in addrs {
            let (file, line) = table.at(a);
            let function = functions.name(a);
            *by_line.entry((file, line, function.clone())).or_default() += executions;
            *by_function.entry(function).or_default() += executions;
        }
        let n = executions * addrs.len() as u64;
        *by_stack
            .entry(stack(&r, &functions, node, *start))
            .or_default() += n;
        total += n;
    }
    if total != counted {
        return Err(RunError::Profile(format!(
            "the profile's instructions ({total}) are not the count's ({counted})"
        )));
    }
    Ok(finish(total, by_line, by_function, by_stack))
}
