//! The proof costs the same every run (docs/prove.md, "The same proof every run"): a unit of
//! `make prove` run again on its own, in another process, with a CPU-bound loop beside it
//! (and the other test's), explores the same paths and makes the same queries with the same solver work (z3's
//! resource count) as it did in `make prove` (target/prove/result.json), where it shared
//! the machine with the other units. Nothing here compares times.
//!
//! And `make prove` builds its Python environment once: right after it, a dry run of
//! `make prove` (and of `make test`) has no environment step left to do.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use nt_support::qemu::root;
use nt_support::tools::{product, run_ok, tool};

/// The figures `make prove` recorded for one unit.
fn recorded(function: &str, group: &str) -> serde_json::Value {
    let path = root().join("target/prove/result.json");
    let text = std::fs::read(&path)
        .unwrap_or_else(|_| panic!("{}: run `make prove` first", path.display()));
    let all: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let f = all
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == function)
        .unwrap_or_else(|| panic!("{function} is not in {}", path.display()));
    assert_eq!(f["proven"], true, "{function}: make prove did not prove it");
    f["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["group"] == group)
        .unwrap_or_else(|| panic!("{function} has no unit {group:?}"))
        .clone()
}

/// The unit run alone, with a CPU-bound busy loop beside it.
fn again_under_load(function: &str, group: &str) -> serde_json::Value {
    let stop = Arc::new(AtomicBool::new(false));
    let burner = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut x = 0u64;
            while !stop.load(Ordering::Relaxed) {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
            }
        })
    };
    let out = Command::new(root().join(tool("PROVE_PY")))
        .current_dir(root().join("prove"))
        .arg("validate.py")
        .arg(product("NT_DEVICE_OBJ"))
        .args(["--ld", &tool("XTENSA_LD")])
        .args(["--seed", &tool("PROVE_SEED")])
        .args(["--unit", &format!("{function}:{group}")])
        .env("PYTHONHASHSEED", tool("PYTHONHASHSEED"))
        .output()
        .expect("the validator runs");
    stop.store(true, Ordering::Relaxed);
    burner.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{function} [{group}] again: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("the unit's figures: {e}\n{stdout}"))
}

fn same_figures(function: &str, group: &str) {
    let before = recorded(function, group);
    let again = again_under_load(function, group);
    for figure in ["explored_paths", "checked_paths", "queries", "rlimit"] {
        assert!(
            before[figure].as_u64().is_some_and(|v| v > 0),
            "{function} [{group}]: no {figure} recorded"
        );
        assert_eq!(
            before[figure], again[figure],
            "{function} [{group}]: {figure} differs between make prove and a run under load"
        );
    }
}

/// The lines `make -n TARGET` prints that would build the validator's environment.
fn environment_steps(target: &str) -> Vec<String> {
    // Not the calling make's flags (its jobserver): a make of its own.
    let out = run_ok(
        Command::new("make")
            .current_dir(root())
            .args(["-n", target])
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS")
            .env_remove("MAKELEVEL"),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            l.contains("-m venv") || l.contains("pip install") || l.contains("prove-venv/installed")
        })
        .map(str::to_owned)
        .collect()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_init_unit_costs_the_same_under_load() {
    // The smallest unit (a second alone): the property is the solver's, not the unit's, and
    // a larger one here (neuron_translate's, 12 s alone) cost make test its time twice over,
    // the busy loop's included.
    same_figures("_init_translate_ctx", "");
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_span_unit_explores_and_solves_the_same_under_load() {
    // A span unit: the one kind whose exploration takes bounded feasibility queries.
    same_figures("neuron_translate_span", "hit 0");
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_environment_is_not_rebuilt_after_make_prove() {
    assert_eq!(
        environment_steps("prove"),
        Vec::<String>::new(),
        "make -n prove after make prove"
    );
    assert_eq!(
        environment_steps("test"),
        Vec::<String>::new(),
        "make -n test after make prove"
    );
}
