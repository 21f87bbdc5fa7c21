//! A kernel's allocations on the device's C heap: in each compute object of the host build,
//! the calls of the C library's allocator and of `operator new` and `delete` are renamed to
//! the SDK runtime's (its `edges/ffi_heap.rs`), which hold them to the device's 10 KiB heap
//! a call (docs/customop-api.md, "Device parity"). Shape functions run on the host on the
//! device too, and keep the C library's. The device build needs no renaming: the device
//! runtime defines `malloc` and `operator new` itself.

use object::{Object, ObjectSymbol};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use crate::op_error::OpError;

/// Each call the kernel's code makes, by symbol, and the runtime's function it becomes. The
/// `operator new` and `delete` forms for a 32-bit and a 64-bit `size_t` (`j`, `m`); the
/// nothrow `operator new` returns NULL as `malloc` does; sized and nothrow deletes free.
pub const RENAMED: &[(&str, &str)] = &[
    ("malloc", "nt_customop_heap_malloc"),
    ("calloc", "nt_customop_heap_calloc"),
    ("realloc", "nt_customop_heap_realloc"),
    ("free", "nt_customop_heap_free"),
    ("aligned_alloc", "nt_customop_heap_aligned"),
    ("memalign", "nt_customop_heap_aligned"),
    ("posix_memalign", "nt_customop_heap_posix_memalign"),
    ("strdup", "nt_customop_heap_strdup"),
    ("strndup", "nt_customop_heap_strndup"),
    ("_Znwj", "nt_customop_heap_new"),
    ("_Znaj", "nt_customop_heap_new"),
    ("_Znwm", "nt_customop_heap_new"),
    ("_Znam", "nt_customop_heap_new"),
    ("_ZnwjRKSt9nothrow_t", "nt_customop_heap_malloc"),
    ("_ZnajRKSt9nothrow_t", "nt_customop_heap_malloc"),
    ("_ZnwmRKSt9nothrow_t", "nt_customop_heap_malloc"),
    ("_ZnamRKSt9nothrow_t", "nt_customop_heap_malloc"),
    ("_ZdlPv", "nt_customop_heap_free"),
    ("_ZdaPv", "nt_customop_heap_free"),
    ("_ZdlPvj", "nt_customop_heap_free"),
    ("_ZdaPvj", "nt_customop_heap_free"),
    ("_ZdlPvm", "nt_customop_heap_free"),
    ("_ZdaPvm", "nt_customop_heap_free"),
    ("_ZdlPvRKSt9nothrow_t", "nt_customop_heap_free"),
    ("_ZdaPvRKSt9nothrow_t", "nt_customop_heap_free"),
];

/// The renamings an object whose undefined symbols are `calls` needs, in rounds: `objcopy`
/// renames no two symbols to one name in one pass.
pub fn rounds(calls: &BTreeSet<String>) -> Vec<Vec<(&'static str, &'static str)>> {
    let mut rounds: Vec<Vec<(&str, &str)>> = Vec::new();
    for &(from, to) in RENAMED.iter().filter(|(from, _)| calls.contains(*from)) {
        match rounds.iter_mut().find(|r| r.iter().all(|(_, t)| *t != to)) {
            Some(round) => round.push((from, to)),
            None => rounds.push(vec![(from, to)]),
        }
    }
    rounds
}

/// Renames [`RENAMED`]'s calls in the compute object `obj` (binutils' `objcopy`), whose
/// bytes are `data`: nothing to do for an object that allocates nothing.
pub fn rename(obj: &Path, data: &[u8]) -> Result<(), OpError> {
    let file = object::File::parse(data).map_err(|source| OpError::NotObject {
        path: obj.into(),
        source,
    })?;
    let calls: BTreeSet<String> = file
        .symbols()
        .filter(|s| s.is_undefined())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect();
    for round in rounds(&calls) {
        let mut cmd = Command::new("objcopy");
        cmd.args(
            round
                .iter()
                .map(|(from, to)| format!("--redefine-sym={from}={to}")),
        )
        .arg(obj);
        let out = crate::guard::output(&mut cmd).map_err(OpError::start(
            "objcopy (binutils), which renames a kernel's allocations",
        ))?;
        if !out.status.success() {
            return Err(OpError::Rename {
                path: obj.into(),
                status: out.status,
                said: String::from_utf8_lossy(&out.stderr).into(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_becomes_a_function_the_runtime_declares() {
        let header = include_str!("../../../sdk/include/neuron_customop_host/runtime.h");
        for (from, to) in RENAMED {
            assert!(
                header.contains(&format!(" *{to}(")) || header.contains(&format!(" {to}(")),
                "{from}: {to}"
            );
        }
        let mut froms: Vec<_> = RENAMED.iter().map(|(f, _)| f).collect();
        froms.sort();
        froms.dedup();
        assert_eq!(froms.len(), RENAMED.len(), "each call renamed once");
    }

    #[test]
    fn no_round_renames_two_calls_to_one_name_and_each_call_is_in_one() {
        let calls: BTreeSet<String> = ["malloc", "_ZdlPv", "_ZdlPvj", "_Znwj", "_Znaj", "printf"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let rounds = rounds(&calls);
        assert_eq!(rounds.len(), 2);
        let mut renamed: Vec<&str> = rounds.iter().flatten().map(|(f, _)| *f).collect();
        renamed.sort();
        assert_eq!(renamed, ["_ZdlPv", "_ZdlPvj", "_Znaj", "_Znwj", "malloc"]);
        for r in &rounds {
            let mut to: Vec<_> = r.iter().map(|(_, t)| t).collect();
            to.sort();
            to.dedup();
            assert_eq!(to.len(), r.len());
        }
        assert!(super::rounds(&BTreeSet::new()).is_empty());
    }
}
