//! The summary `make bench` prints after criterion's runs: the library against the seed's
//! C, the hits head to head with their spread, and the host model's figures beside this
//! machine's floors, measured in the same run by bench/remap_cost.c (the Makefile runs it
//! first and leaves its output in target/bench/remap_cost.txt).

use std::path::{Path, PathBuf};

use super::{KERNEL_ELEMS, KERNEL_PER_ELEMENT_ELEMS, KERNEL_REGIONS_ELEMS};

/// The workspace's target directory.
fn target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target")
}

/// This run's median of criterion's benchmark `group`/`name`, in ns.
fn median(group: &str, name: &str) -> Option<f64> {
    let file = target()
        .join("criterion")
        .join(group)
        .join(name)
        .join("new/estimates.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
    v["median"]["point_estimate"].as_f64()
}

/// remap_cost.c's figure on the line starting `what`, after `key` (ns).
fn floor(text: &str, what: &str, key: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with(what))?;
    let after = line.split(key).nth(1)?;
    after
        .split_whitespace()
        .next()?
        .trim_end_matches(',')
        .parse()
        .ok()
}

/// (min, median, max) of `v`.
fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

/// Prints the tables: `paths` as the library benchmarks ran them, `rounds` the hits head
/// to head (library 0, C 0, library 4, C 4, model 0 per round).
pub fn print(paths: &[(String, u64, bool)], rounds: &[[f64; 5]]) {
    println!("\n| path | rust (ns) | reference C (ns) | rust / reference |\n| --- | ---: | ---: | ---: |");
    for (path, _, _) in paths {
        if let (Some(r), Some(c)) = (median(path, "rust"), median(path, "reference")) {
            println!("| {path} | {r:.2} | {c:.2} | {:.2} |", r / c);
        }
    }
    println!(
        "\nHits head to head, {} interleaved rounds: each ratio's min / median / max over the rounds\n",
        rounds.len()
    );
    println!("| measure | min | median | max | goal |\n| --- | ---: | ---: | ---: | ---: |");
    let ratio = |num: usize, den: usize| spread(rounds.iter().map(|r| r[num] / r[den]).collect());
    for (what, (num, den), goal) in [
        ("library hit slot 0 / seed C", (0, 1), "<= 1"),
        ("library hit slot 4 / seed C", (2, 3), "<= 1"),
        ("model hit slot 0 / library hit slot 0", (4, 0), "<= 1.5"),
    ] {
        let (lo, mid, hi) = ratio(num, den);
        println!("| {what} | {lo:.2} | {mid:.2} | {hi:.2} | {goal} |");
    }
    model_table();
}

/// The host model's figures, each beside its floor on this machine.
fn model_table() {
    let text = std::fs::read_to_string(target().join("bench/remap_cost.txt")).unwrap_or_default();
    let untouched = floor(&text, "16 MiB view, nothing touched", "mmap");
    let touched = floor(&text, "16 MiB view, a page touched", "mmap");
    let store = floor(&text, "16 MiB view, a page touched", "first store");
    let touch_floor = touched.zip(store).map(|(m, s)| m + s);
    println!(
        "\nThe host model beside this machine's floors (bench/remap_cost.c, this run{}):\n",
        if text.is_empty() {
            ": not run, use make bench"
        } else {
            ""
        }
    );
    println!("| measure | now (us) | floor (us) | now / floor | goal |\n| --- | ---: | ---: | ---: | ---: |");
    let us = |v: Option<f64>| v.map(|t| t / 1e3);
    for (what, now, floor) in [
        (
            "refill (floor: mmap of a 16 MiB view)",
            median("model", "refill"),
            untouched,
        ),
        (
            "refill + first touch (floor: mmap over a touched view + first store)",
            median("model", "refill-touch"),
            touch_floor,
        ),
        (
            "five-stream kernel, per call (floor as above)",
            median("model", "five-streams"),
            touch_floor,
        ),
    ] {
        let cell = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.2}"));
        let r = now.zip(floor).map(|(n, f)| n / f);
        println!(
            "| {what} | {} | {} | {} | <= 1.25 |",
            cell(us(now)),
            cell(us(floor)),
            cell(r)
        );
    }
    kernel_table();
}

/// The accessor's kernel per element, in one window and across regions.
fn kernel_table() {
    println!("\nThe C++ accessor's kernel c[i] = a[i] + 3 * b[i] + 1 over three uint32_t tensors (ns per element):\n");
    println!("| layout | plain memory | accessor on the model | accessor / plain | goal |\n| --- | ---: | ---: | ---: | ---: |");
    for (layout, group, elems) in [
        (
            "three 32 MiB tensors, two 16 MiB regions each, repeated passes",
            "kernel3-regions",
            KERNEL_REGIONS_ELEMS,
        ),
        (
            "the same, the model keeping no view (keep 0)",
            "kernel3-regions-keep-0",
            KERNEL_REGIONS_ELEMS,
        ),
        (
            "three 4 MiB tensors in one 16 MiB region (no refill)",
            "kernel3",
            KERNEL_ELEMS,
        ),
    ] {
        let per = |name: &str| median(group, name).map(|t| t / elems as f64);
        if let (Some(acc), Some(plain)) = (per("accessor"), per("plain")) {
            println!(
                "| {layout} | {plain:.3} | {acc:.3} | {:.2} | <= 1.5 |",
                acc / plain
            );
        }
    }
    if let Some(t) = median("kernel3", "per-element") {
        let per = t / KERNEL_PER_ELEMENT_ELEMS as f64;
        println!(
            "\nPer element on the model (get, get, set; in one window): {per:.2} ns per element."
        );
    }
    if let Some(t) = median("model", "hit-0-traced") {
        println!("A model hit with a trace file open: {t:.2} ns.");
    }
}
