//! The Q7's ISA options as docs/q7-isa.md lists them, against what the build uses and what
//! the checks hold: the options the table says kernels are built with are exactly
//! `DEVICE_Q7_OPTIONS` of sdk/device/device.mk, and each per-element bound the table gives
//! is the one check_isa.py holds the emulated core's counts to.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use nt_support::qemu::root;

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The cells of each row of the table whose header row starts with `first_header`.
fn table(doc: &str, first_header: &str) -> Vec<Vec<String>> {
    let mut lines = doc
        .lines()
        .skip_while(|l| !l.starts_with(&format!("| {first_header} |")));
    assert!(lines.next().is_some(), "no table headed {first_header:?}");
    lines
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let inner = l.trim().strip_prefix('|').and_then(|r| r.strip_suffix('|'));
            let inner = inner.unwrap_or_else(|| panic!("a table row: {l}"));
            inner.split('|').map(|c| c.trim().to_string()).collect()
        })
        .collect()
}

/// The `+option` words of a cell (`+div32`, `in +fp` gives `+fp`).
fn options(cell: &str) -> Vec<String> {
    cell.split('`')
        .filter(|w| w.starts_with('+'))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_build_uses_exactly_the_options_the_docs_say() {
    let doc = read("docs/q7-isa.md");
    let mut said = BTreeSet::new();
    for row in table(&doc, "option") {
        assert_eq!(row.len(), 5, "{row:?}");
        if row[4] == "yes" {
            let o = options(&row[2]);
            assert_eq!(o.len(), 1, "a built option names its LLVM feature: {row:?}");
            said.extend(o);
        }
    }
    let mk = read("sdk/device/device.mk");
    let line = mk
        .lines()
        .find_map(|l| l.strip_prefix("DEVICE_Q7_OPTIONS := "))
        .expect("DEVICE_Q7_OPTIONS in device.mk");
    let mut built: BTreeSet<String> = line.split(',').map(str::to_string).collect();
    // The device object's own options come first in the kernels' list (XTENSA_MATTR).
    let spec = read("xtensa/xtensa-ncore2gp-none-elf.json");
    let features = spec
        .lines()
        .find_map(|l| l.trim().strip_prefix("\"features\": \""))
        .expect("the target specification's features");
    built.extend(
        features
            .trim_end_matches(['"', ','])
            .split(',')
            .map(str::to_string),
    );
    assert_eq!(built, said, "device.mk and xtensa/ against docs/q7-isa.md");
}

#[test]
fn the_checks_hold_the_bounds_the_docs_give() {
    let doc = read("docs/q7-isa.md");
    let mut said = BTreeMap::new();
    for row in table(&doc, "op (`isa_costs.cpp`, `isa_products.cpp`)") {
        assert_eq!(row.len(), 5, "{row:?}");
        let op = row[0].trim_matches('`').to_string();
        if let Ok(bound) = row[4].parse::<u32>() {
            said.insert(op, bound);
        } else {
            assert_eq!(row[4], "none yet", "{row:?}");
        }
    }
    let script = read("sdk/tests/customops/check_isa.py");
    // The dictionary, on one line or one entry a line (as the formatter lays it out).
    let from = script.find("BOUNDS = {").expect("BOUNDS in check_isa.py") + "BOUNDS = {".len();
    let body = &script[from..from + script[from..].find('}').expect("BOUNDS ends")];
    let held: BTreeMap<String, u32> = body
        .split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once(':').expect("op: bound");
            (
                k.trim().trim_matches('"').to_string(),
                v.trim().parse().expect("a bound"),
            )
        })
        .collect();
    assert!(!held.is_empty());
    assert_eq!(held, said, "check_isa.py's BOUNDS against docs/q7-isa.md");
}
