//! What a kernel's program executed on the emulated Q7, counted by translation block: by
//! the SDK's qemu plugin (sdk/qemu/count_plugin.c: an inline counter per block, chaining
//! on; [`count_blocks`]) or, without it, from qemu's log: qemu lists each block when it
//! translates it (`-d in_asm`: its instructions) and logs each execution of one
//! (`-d exec,nochain`: its address; [`count`], slower, kept as the plugin's oracle). A block
//! runs whole (this ISA's exceptions come at an `entry` or a return, where qemu ends a
//! block), so the counts are exact and repeatable. Each block is counted by the function
//! it starts in: the
//! translation object's, the TCM and stream copies' (the headers' `Copier::copy_in` and
//! `copy_out`: the core's part of a DMA; the data they move goes through the runtime's
//! `nt_device_dma`, counted in bytes, not instructions), the device runtime's (sdk/device:
//! the host runtime's work, left out), the kernel's (the rest).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// Instructions a core executed, by where.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceCounts {
    /// In all, but for the device runtime's.
    pub instructions: u64,
    /// Inside the translation object's functions.
    pub translation: u64,
    /// Inside the TCM and stream copies.
    pub copies: u64,
    /// Inside the device runtime (not in `instructions`: on the device the runtime differs).
    pub runtime: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Kernel,
    Translation,
    Copies,
    Runtime,
}

/// The program's functions, by address: (start, end, class), sorted.
#[derive(Debug, Default)]
pub struct Classes(Vec<(u64, u64, Class)>);

/// Names of the device runtime's functions (sdk/device: each begins so, but for the C
/// library's names it defines).
fn runtime_function(name: &str) -> bool {
    ["nt_customop_", "nt_device_", "__wrap_"]
        .iter()
        .any(|p| name.starts_with(p))
        || ["printf", "vprintf", "puts", "putchar"].contains(&name)
}

/// The TCM and stream copies' own code (their span walk and translate calls: the core's
/// part of a DMA, which moves the data itself through `nt_device_dma`, the runtime's).
fn copy_function(name: &str) -> bool {
    name.contains("6Copier8copy_out") || name.contains("6Copier7copy_in")
}

/// The program's text symbols: (name, address, size).
pub fn text_symbols(path: &Path) -> Vec<(String, u64, u64)> {
    std::fs::read(path)
        .map(|data| text_symbols_in(&data))
        .unwrap_or_default()
}

/// [`text_symbols`] of an ELF file already read.
pub fn text_symbols_in(data: &[u8]) -> Vec<(String, u64, u64)> {
    use object::{Object, ObjectSymbol};
    let Ok(f) = object::File::parse(data) else {
        return Vec::new();
    };
    f.symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text)
        .filter_map(|s| Some((s.name().ok()?.to_string(), s.address(), s.size())))
        .collect()
}

/// The code the program runs without a call (the device runtime's SIGILL handler for
/// MULSH and MULUH and the return from it, sdk/device/mulhigh.S): its address range, for
/// the count plugin's `aside=` (the call tree leaves it out).
pub fn aside_range(program: &Path) -> Option<(u64, u64)> {
    let found: Vec<(u64, u64)> = text_symbols(program)
        .into_iter()
        .filter(|s| ["nt_device_mul_high", "nt_device_sigreturn"].contains(&s.0.as_str()))
        .map(|(_, at, size)| (at, at + size))
        .collect();
    Some((
        found.iter().map(|r| r.0).min()?,
        found.iter().map(|r| r.1).max()?,
    ))
}

impl Classes {
    /// The functions of `program`, those named as `translation`'s counted as translation.
    pub fn of(program: &Path, translation: &Path) -> Classes {
        let names: std::collections::HashSet<String> =
            text_symbols(translation).into_iter().map(|s| s.0).collect();
        let mut v: Vec<(u64, u64, Class)> = text_symbols(program)
            .into_iter()
            .filter(|s| s.2 > 0)
            .map(|(name, at, size)| {
                let class = if names.contains(&name) {
                    Class::Translation
                } else if copy_function(&name) {
                    Class::Copies
                } else if runtime_function(&name) {
                    Class::Runtime
                } else {
                    Class::Kernel
                };
                (at, at + size, class)
            })
            .collect();
        v.sort_unstable_by_key(|r| r.0);
        Classes(v)
    }

    /// Whether a block starting at `pc` counts (is not the device runtime's).
    pub fn counted(&self, pc: u64) -> bool {
        self.class(pc) != Class::Runtime
    }

    fn class(&self, pc: u64) -> Class {
        let k = self.0.partition_point(|r| r.0 <= pc);
        match k.checked_sub(1).map(|k| self.0[k]) {
            Some((_, end, c)) if pc < end => c,
            _ => Class::Kernel,
        }
    }
}

impl DeviceCounts {
    /// Adds `n` instructions executed from `pc` on.
    fn add(&mut self, classes: &Classes, pc: u64, n: u64) {
        let class = classes.class(pc);
        match class {
            Class::Runtime => self.runtime += n,
            Class::Translation => self.translation += n,
            Class::Copies => self.copies += n,
            Class::Kernel => {}
        }
        if class != Class::Runtime {
            self.instructions += n;
        }
    }
}

impl std::ops::AddAssign for DeviceCounts {
    fn add_assign(&mut self, o: DeviceCounts) {
        self.instructions += o.instructions;
        self.translation += o.translation;
        self.copies += o.copies;
        self.runtime += o.runtime;
    }
}

/// The last few lines qemu said of its own (not counts), for a report.
#[derive(Default)]
struct Tail(Vec<String>);

impl Tail {
    fn push(&mut self, line: String) {
        if !line.trim().is_empty() {
            self.0.push(line);
            if self.0.len() > 4 {
                self.0.remove(0);
            }
        }
    }

    /// ` (line; line)`, or nothing.
    fn text(&self) -> String {
        if self.0.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.0.join("; "))
        }
    }
}

/// The plugin's lines (`start instructions executions` per block, then `end`), counted by
/// class, with its `profile=1` lines (`b`, `n`, `p`: [`crate::run::device::profile`]) and
/// its store watch's (`s`: [`crate::run::device::watch`]) kept as they are: `None` if they stop before `end` or a line is not one (the program did
/// not reach its exit, or the plugin failed).
pub fn count_blocks(lines: impl Read, classes: &Classes) -> Option<(DeviceCounts, Vec<String>)> {
    let mut c = DeviceCounts::default();
    let mut profile = Vec::new();
    for line in BufReader::with_capacity(1 << 16, lines).lines() {
        let line = line.ok()?;
        if line == "end" {
            return Some((c, profile));
        }
        // A profile line (and the store watch's `s`) is a letter and a space; a count line
        // starts with a hexadecimal address, which may begin with `b` but is never one
        // letter alone.
        if ["b ", "n ", "p ", "s "].iter().any(|p| line.starts_with(p)) {
            profile.push(line);
            continue;
        }
        let mut f = line.split(' ');
        let pc = u64::from_str_radix(f.next()?, 16).ok()?;
        let insns: u64 = f.next()?.parse().ok()?;
        let executions: u64 = f.next()?.parse().ok()?;
        c.add(classes, pc, insns.checked_mul(executions)?);
    }
    None
}

/// The last few lines qemu printed on its stderr (its own messages), for a report.
pub fn tail(stderr: impl Read) -> String {
    let mut other = Tail::default();
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        other.push(line);
    }
    other.text()
}

/// The blocks' sizes and executions read from qemu's `log`, counted by class; and the
/// last lines that were neither (qemu's own messages, for a report). One address may have
/// several blocks (translated under other flags: the window state decides where a block
/// ends), so a block is known by its address, flags and compile flags, as its `Trace`
/// lines give them; qemu runs a block right after it lists it, so a listing's size goes to
/// the next `Trace` of its address.
pub fn count(log: impl Read, classes: &Classes) -> (DeviceCounts, String) {
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    let mut sizes: HashMap<(u64, u64, u64), u64> = HashMap::new();
    let mut listing: Option<(Option<u64>, u64)> = None;
    let mut listed: Option<(u64, u64)> = None;
    let mut c = DeviceCounts::default();
    let mut other = Tail::default();
    for line in BufReader::with_capacity(1 << 20, log).lines() {
        let Ok(line) = line else { break };
        if line.starts_with("IN:") {
            listing = Some((None, 0));
            continue;
        }
        if let Some((start, n)) = listing.as_mut() {
            if let Some(at) = line
                .split(':')
                .next()
                .filter(|_| line.starts_with("0x"))
                .and_then(hex)
            {
                start.get_or_insert(at);
                *n += 1;
                continue;
            }
        }
        if let Some((Some(start), n)) = listing.take() {
            listed = Some((start, n));
        }
        // Trace 0: 0x7fbd480000c0 [00000000/004000e4/0005bfd3/00000201] symbol
        let key: Option<Vec<u64>> = line
            .strip_prefix("Trace ")
            .and_then(|l| l.split_once('[')?.1.split_once(']'))
            .map(|(fields, _)| fields.split('/').skip(1).filter_map(hex).collect());
        let Some(&[pc, flags, cflags]) = key.as_deref() else {
            if !line.starts_with("---") {
                other.push(line);
            }
            continue;
        };
        if let Some((_, n)) = listed.filter(|l| l.0 == pc) {
            sizes.insert((pc, flags, cflags), n);
            listed = None;
        }
        c.add(
            classes,
            pc,
            sizes.get(&(pc, flags, cflags)).copied().unwrap_or(0),
        );
    }
    (c, other.text())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_at_an_address_beginning_with_b_is_counted_and_profile_lines_kept_apart() {
        let lines = "b0001000 3 2\nb 0 b0001000 3 b0001000 b0001003 b0001005\nn 1 0 b0001000\np 1 0 2\nend\n";
        let (c, profile) = count_blocks(lines.as_bytes(), &Classes::default()).unwrap();
        assert_eq!(c.instructions, 6);
        assert_eq!(profile.len(), 3, "{profile:?}");
        assert!(
            count_blocks("4000 1 1\n".as_bytes(), &Classes::default()).is_none(),
            "no end"
        );
    }
}
