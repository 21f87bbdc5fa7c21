//! `--profile`: where a core's counted instructions went, from the counting plugin's
//! `profile=1` lines (sdk/qemu/count_profile.h: each block's instructions' addresses, the
//! call tree by call site, each block's executions at each node of it). Each instruction
//! gets its place as the author reads it ([`crate::run::device::symbols`]): its own line,
//! then the sites of the calls inlined there, then the sites of the calls it ran under.
//! From that chain each line gets
//!
//! * `self`: the instructions on it (code the compiler gave no line, line 0, goes to the
//!   line before it in the line table, else to the line that encloses it in the chain);
//! * `inclusive`: the instructions it ran, itself or through what it called, inlined or
//!   not, the SDK's and the compiler runtime's code included;
//! * `attributed`: the instructions whose innermost line of the author's sources it is.
//!   Each instruction is attributed to one author line or to the SDK's share, so the
//!   author lines' attributed counts and the SDK's share sum to the total.
//!
//! The device runtime's blocks are left out as `--stats` leaves them out.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::run::device::count::Classes;
use crate::run::device::symbols::{Functions, Inlines, LineTable, Place};
use crate::run::error::{ProfileError, RunError};
use crate::run::place::authors_file;

/// A source line's instructions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    /// The source file (`(no line table)` where the program has none for it).
    pub file: String,
    /// The line (0 where unknown).
    pub line: u64,
    /// The function it is in.
    pub function: String,
    /// Whether it is a line of the author's sources (not the SDK's, the system's or the
    /// compiler runtime's).
    pub author: bool,
    /// Instructions on it.
    #[serde(rename = "self")]
    pub own: u64,
    /// Instructions it ran, itself or through its calls.
    pub inclusive: u64,
    /// Instructions whose innermost author line it is.
    pub attributed: u64,
}

/// A function's instructions: its own, and those it ran through its calls too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Function {
    /// Its name, demangled.
    pub function: String,
    /// Instructions in it.
    #[serde(rename = "self")]
    pub own: u64,
    /// Instructions while it was on the stack.
    pub inclusive: u64,
}

/// Where a core's (or the op's) counted instructions went.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// All of them: the `--stats` figure `instructions`.
    pub instructions: u64,
    /// Those no author line ran: the SDK's, the compiler runtime's, the start's.
    pub sdk: u64,
    /// By source line, the author's first, most attributed first.
    pub lines: Vec<Line>,
    /// By function, most inclusive first.
    pub functions: Vec<Function>,
    /// By call stack, `outer;inner` (the flame graph's folded lines), in order.
    pub stacks: Vec<(String, u64)>,
}

/// The sums a profile is made of, keyed for merging.
#[derive(Default)]
struct Sums {
    total: u64,
    sdk: u64,
    /// By file and line (and function, for code with no line: each its own row).
    lines: BTreeMap<(String, u64, String), Line>,
    functions: BTreeMap<String, Function>,
    stacks: BTreeMap<String, u64>,
}

impl Sums {
    fn line(&mut self, p: &Place) -> &mut Line {
        let function = if p.1 == 0 { p.2.clone() } else { String::new() };
        self.lines
            .entry((p.0.clone(), p.1, function))
            .or_insert_with(|| Line {
                file: p.0.clone(),
                line: p.1,
                function: p.2.clone(),
                author: authors_file(&p.0),
                ..Line::default()
            })
    }

    fn function(&mut self, name: &str) -> &mut Function {
        self.functions
            .entry(name.into())
            .or_insert_with(|| Function {
                function: name.into(),
                ..Function::default()
            })
    }

    fn finish(self) -> Profile {
        let mut lines: Vec<Line> = self.lines.into_values().collect();
        lines.sort_by_key(|l| {
            (
                !l.author,
                std::cmp::Reverse((l.attributed, l.inclusive, l.own)),
            )
        });
        let mut functions: Vec<Function> = self.functions.into_values().collect();
        functions.sort_by_key(|f| std::cmp::Reverse((f.inclusive, f.own)));
        Profile {
            instructions: self.total,
            sdk: self.sdk,
            lines,
            functions,
            stacks: self.stacks.into_iter().collect(),
        }
    }
}

impl Profile {
    /// The sum of profiles (the op's, over its cores).
    pub fn merged(profiles: &[Profile]) -> Profile {
        let mut s = Sums::default();
        for p in profiles {
            s.total += p.instructions;
            s.sdk += p.sdk;
            for l in &p.lines {
                let m = s.line(&(l.file.clone(), l.line, l.function.clone()));
                (m.own, m.inclusive, m.attributed) = (
                    m.own + l.own,
                    m.inclusive + l.inclusive,
                    m.attributed + l.attributed,
                );
            }
            for f in &p.functions {
                let m = s.function(&f.function);
                (m.own, m.inclusive) = (m.own + f.own, m.inclusive + f.inclusive);
            }
            for (k, n) in &p.stacks {
                *s.stacks.entry(k.clone()).or_default() += n;
            }
        }
        s.finish()
    }
}

/// The plugin's `profile=1` lines, read.
#[derive(Default)]
struct Raw {
    /// Block number: its start and its instructions' addresses.
    blocks: HashMap<u32, (u64, Vec<u64>)>,
    /// Node: its parent, its entry address and its call site.
    nodes: HashMap<u32, (u32, u64, u64)>,
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
            ["n", id, parent, entry, site] => {
                let node = (parent.parse().ok()?, hex(entry)?, hex(site)?);
                r.nodes.insert(id.parse().ok()?, node);
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

/// What the program's debug information says of addresses, asked once each.
struct Places {
    functions: Functions,
    table: LineTable,
    inlines: Inlines,
    chains: HashMap<u64, Vec<Place>>,
}

impl Places {
    /// `pc`'s chain: its own line, then the sites of the calls inlined there, innermost
    /// first, each with the function it is in.
    fn chain(&mut self, pc: u64) -> &[Place] {
        let (functions, table, inlines) = (&self.functions, &self.table, &self.inlines);
        self.chains.entry(pc).or_insert_with(|| {
            let function = functions.name(pc);
            crate::run::device::symbols::chain_at(table, inlines, pc)
                .into_iter()
                .map(|(f, l)| (f, l, function.clone()))
                .collect()
        })
    }
}

/// The call stack of node `node` ending in the function at `leaf`, outermost first, from
/// the outermost function of the author's sources (the frames above it, the program's
/// start and the SDK's calls into the kernel, left out; a stack with none is the SDK's
/// share, one frame), a function that calls itself named once where it repeats.
/// Also every function on the stack, each once (for their inclusive counts).
fn stack(r: &Raw, places: &Places, node: u32, leaf: u64) -> (String, Vec<String>) {
    let mut entries = Vec::new();
    let mut at = node;
    while let Some(&(parent, entry, _)) = r.nodes.get(&at) {
        entries.push(entry);
        if entries.len() > 512 {
            break;
        }
        at = parent;
    }
    entries.reverse();
    entries.push(leaf);
    let names: Vec<String> = entries.iter().map(|&e| places.functions.name(e)).collect();
    let mut all = names.clone();
    all.sort_unstable();
    all.dedup();
    let first = entries
        .iter()
        .position(|&e| authors_file(&places.table.enclosing(e).0));
    let Some(first) = first else {
        return (SDK_FRAME.into(), all);
    };
    let mut frames = names[first..].to_vec();
    frames.dedup();
    (frames.join(";"), all)
}

/// The flame graph's one frame for what ran under no function of the author's.
const SDK_FRAME: &str = "(the SDK and the runtime, under no function of the author's)";

/// The places of the call sites from `node` up to the root, innermost first.
fn up(r: &Raw, places: &mut Places, node: u32) -> Vec<Place> {
    let mut out = Vec::new();
    let mut at = node;
    while let Some(&(parent, _, site)) = r.nodes.get(&at) {
        out.extend_from_slice(places.chain(site));
        if out.len() > 4096 {
            break;
        }
        at = parent;
    }
    out
}

/// Adds `n` executions of an instruction whose chain is `own` then `up`.
fn account(s: &mut Sums, own: &[Place], up: &[Place], n: u64) {
    let known = |p: &&Place| p.1 > 0;
    let here = own.iter().find(known).unwrap_or(&own[0]);
    s.line(here).own += n;
    s.function(&own[0].2).own += n;
    let mut seen: Vec<(&str, u64)> = Vec::new();
    for p in own.iter().chain(up).filter(known) {
        if !seen.contains(&(p.0.as_str(), p.1)) {
            seen.push((p.0.as_str(), p.1));
            s.line(p).inclusive += n;
        }
    }
    match own.iter().chain(up).find(|p| p.1 > 0 && authors_file(&p.0)) {
        Some(p) => s.line(p).attributed += n,
        None => s.sdk += n,
    }
}

/// The profile of one core's run of `program` from the plugin's `profile=1` lines; its
/// total must be `counted` (the `--stats` figure from the same run), or the reason.
pub fn of(
    lines: &[String],
    classes: &Classes,
    program: &Path,
    counted: u64,
) -> Result<Profile, RunError> {
    let r = raw(lines).ok_or(RunError::Profile(ProfileError::Unreadable))?;
    // One read of the program for its symbols, line table and inlined calls (an unreadable
    // one leaves them empty: its places read `(no symbol)` and `(no line table)`).
    let data = std::fs::read(program).unwrap_or_default();
    let mut places = Places {
        functions: Functions::of(&data),
        table: LineTable::of(&data),
        inlines: Inlines::of(&data),
        chains: HashMap::new(),
    };
    let mut s = Sums::default();
    let mut ups: HashMap<u32, Vec<Place>> = HashMap::new();
    for &(node, block, executions) in &r.pairs {
        let (start, addrs) = r
            .blocks
            .get(&block)
            .ok_or(RunError::Profile(ProfileError::UnlistedBlock(block)))?;
        if !classes.counted(*start) {
            continue;
        }
        let up = ups.entry(node).or_insert_with(|| up(&r, &mut places, node));
        for &a in addrs {
            account(&mut s, places.chain(a), up, executions);
        }
        let (folded, on_stack) = stack(&r, &places, node, *start);
        let n = executions * addrs.len() as u64;
        for f in &on_stack {
            s.function(f).inclusive += n;
        }
        *s.stacks.entry(folded).or_default() += n;
        s.total += n;
    }
    if s.total != counted {
        return Err(RunError::Profile(ProfileError::NotTheCount {
            profiled: s.total,
            counted,
        }));
    }
    Ok(s.finish())
}
