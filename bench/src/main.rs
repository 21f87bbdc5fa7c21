//! `nt-bench`: dynamic instruction counts of every path of the device object under
//! qemu-xtensa, beside the original's issue-slot counts (bench/original.toml) and the
//! seed's reference C compiled by clang for the same core; checked against the budget
//! (bench/budget.toml) with `--check`.
//!
//! Counts are exact and repeatable: qemu runs one instruction per translation block
//! (`-singlestep`), logs each executed block (`-d exec,nochain`), and only instructions
//! inside the measured implementation's functions are counted, entry and return included,
//! between two calls of the driver's `bench_mark()`.
//!
//! usage: nt-bench [--check] [--out DIR]   (tool paths from the environment: run via make)

mod chart;
mod kernel;
mod scenarios;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Parser;

use chart::{chart, ChartRow, CHART};
use kernel::{kernel_counts, KERNEL_ELEMS, KERNEL_PER_ELEMENT_ELEMS, KERNEL_SPEEDUP_TARGET};
use nt_support::qemu::{compile_c, functions, link, root, start_object, trace_pcs};
use scenarios::{header, scenarios, Func, Impl, Scenario};

/// Elements of the tensor the two accessor loops sum (abi-tests/consumers/tensor_loop.h:
/// five 4 KiB windows of uint32_t).
const TENSOR_ELEMS: u64 = 5 * 4096 / 4;

/// The span loop must cost at most this fraction of the per-element loop (issue target).
const SPAN_SPEEDUP_TARGET: u64 = 8;

/// Notes in `over` a count above its budget, or a path with no budget.
fn check_budget(over: &mut Vec<String>, key: &str, n: u64, budget: Option<u64>) {
    match budget {
        Some(b) if n > b => over.push(format!("{key}: {n} instructions, budget {b}")),
        None => over.push(format!("{key}: no budget in bench/budget.toml")),
        _ => {}
    }
}

fn read_toml(path: &Path) -> BTreeMap<String, u64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let v: toml::Table =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    v.into_iter()
        .map(|(k, v)| {
            let n = v
                .as_integer()
                .unwrap_or_else(|| panic!("{}: {k} is not a number", path.display()));
            (k, n as u64)
        })
        .collect()
}

/// Dynamic instruction counts of every path of the device object under qemu, against the
/// original's (bench/original.toml) and the reference C; run through `make bench`.
#[derive(Parser, Debug)]
#[command(name = "nt-bench")]
struct Args {
    /// Fail (exit 1) when a count is over bench/budget.toml.
    #[arg(long)]
    check: bool,
    /// Where to write the programs and the trace (default target/bench).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() {
    let args = Args::parse();
    let out_dir = args.out.unwrap_or_else(|| root().join("target/bench"));
    std::fs::create_dir_all(&out_dir).unwrap();

    let sc = scenarios();
    let counts = path_counts(&out_dir, &sc);
    let mut r = Report::new();
    let rows = r.paths(&sc, &counts);
    r.tensor_loops(&sc, &counts);
    r.kernel(kernel_counts(&out_dir, &out_dir.join("support.o")));
    print!("{}", r.text);
    std::fs::write(out_dir.join("counts.md"), &r.text).unwrap();
    // The chart: written by `make bench`; `make test` (--check) fails when the committed
    // one no longer shows these counts.
    let svg = chart(&rows);
    let committed = root().join(CHART);
    if args.check {
        if std::fs::read_to_string(&committed).ok().as_deref() != Some(svg.as_str()) {
            r.over.push(format!(
                "{CHART} does not show these counts: run `make bench` and commit it"
            ));
        }
    } else {
        std::fs::write(&committed, &svg).unwrap();
        println!("wrote {CHART}");
    }
    if args.check && !r.over.is_empty() {
        eprintln!("nt-bench: over budget:\n  {}", r.over.join("\n  "));
        std::process::exit(1);
    }
}

/// Builds the driver with every scenario, runs it under qemu with its trace, and counts
/// each scenario's instructions: those inside its implementation's functions between two
/// marks (the accessor loops: everything).
fn path_counts(out_dir: &Path, sc: &[Scenario]) -> Vec<u64> {
    std::fs::write(out_dir.join("bench_scenarios.h"), header(sc)).unwrap();
    let q = root().join("abi-tests/qemu");
    let include = root().join("include");
    let consumers = root().join("abi-tests/consumers");
    let mut objs = vec![start_object(out_dir)];
    for (src, o) in [
        (root().join("bench/qemu/bench.c"), "bench.o"),
        (q.join("support.c"), "support.o"),
        (root().join("abi-tests/csrc/reference.c"), "reference.o"),
    ] {
        let obj = out_dir.join(o);
        compile_c(&src, &obj, &[&include, &q, out_dir, &consumers]);
        objs.push(obj);
    }
    let elf = out_dir.join("bench.elf");
    link(&objs, &elf);
    let pcs = trace_pcs(&elf, &out_dir.join("trace.log"));

    // Which instructions belong to which implementation.
    let funcs = functions(&elf);
    let device_names: Vec<String> = functions(&nt_support::tools::product("NT_DEVICE_OBJ"))
        .into_keys()
        .collect();
    let ranges = |imp: Impl| -> Vec<(u32, u32)> {
        funcs
            .iter()
            .filter(|(n, _)| match imp {
                Impl::Rust => device_names.contains(n),
                Impl::Reference => n.starts_with("ref_"),
            })
            .map(|(_, r)| *r)
            .collect()
    };
    let (rust, reference) = (ranges(Impl::Rust), ranges(Impl::Reference));
    let mark = funcs.get("bench_mark").expect("bench_mark in the driver").0;
    let mut counts = vec![0u64; sc.len()];
    let mut cur: Option<usize> = None;
    let mut marks = 0;
    for pc in pcs {
        if pc == mark {
            cur = Some(marks);
            marks += 1;
            continue;
        }
        let Some((i, s)) = cur.and_then(|i| Some((i, sc.get(i)?))) else {
            continue;
        };
        let whole_loop = matches!(s.func, Func::TensorPerElement | Func::TensorSpans);
        let r = if s.imp == Impl::Rust {
            &rust
        } else {
            &reference
        };
        // The accessor loops count everything: the loop's own code, the calls, the library.
        if whole_loop || r.iter().any(|&(a, b)| a <= pc && pc < b) {
            counts[i] += 1;
        }
    }
    assert_eq!(
        marks,
        sc.len() + 1,
        "every scenario ran once (and a closing mark)"
    );
    counts
}

/// The report's text, what is over budget or target, and the inputs they are judged by.
struct Report {
    text: String,
    over: Vec<String>,
    original: BTreeMap<String, u64>,
    budget: BTreeMap<String, u64>,
}

/// Per scenario (path, shape): its count.
type ByPath = BTreeMap<(String, String), u64>;

impl Report {
    fn new() -> Report {
        Report {
            text: String::new(),
            over: Vec::new(),
            original: read_toml(&root().join("bench/original.toml")),
            budget: read_toml(&root().join("bench/budget.toml")),
        }
    }

    /// The table of paths (ours, the reference C's, the original's, the budget), checked;
    /// returns the chart's rows.
    fn paths(&mut self, sc: &[Scenario], counts: &[u64]) -> Vec<ChartRow> {
        let (ours, refc) = split(sc, counts);
        self.text.push_str(
            "| path | table shape | original (seed, issue slots) | reference C (clang-22) | neuron-translate | budget |\n\
             | --- | --- | ---: | ---: | ---: | ---: |\n",
        );
        let mut seen = Vec::new();
        let mut rows: Vec<ChartRow> = Vec::new();
        for s in sc.iter().filter(|s| s.imp == Impl::Rust) {
            let key = (s.path.clone(), s.shape.to_string());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key.clone());
            let n = ours[&key];
            let bkey = if s.shape == "-" {
                s.path.clone()
            } else {
                format!("{}.{}", s.path, s.shape)
            };
            let b = self.budget.get(&bkey).copied();
            let original = self.original.get(&s.path).copied();
            if !matches!(s.func, Func::TensorPerElement | Func::TensorSpans) {
                rows.push(ChartRow {
                    path: s.path.clone(),
                    shape: s.shape,
                    original,
                    clang: refc.get(&key).copied(),
                    ours: n,
                });
            }
            let show = |v: Option<u64>| v.map_or("n/a".to_string(), |v| v.to_string());
            let _ = writeln!(
                self.text,
                "| {} | {} | {} | {} | {} | {} |",
                s.path,
                s.shape,
                show(original),
                show(refc.get(&key).copied()),
                n,
                show(b)
            );
            check_budget(&mut self.over, &bkey, n, b);
        }
        rows
    }

    /// The two accessor loops over one tensor: per element and per span, and the span
    /// loop's target.
    fn tensor_loops(&mut self, sc: &[Scenario], counts: &[u64]) {
        let (ours, _) = split(sc, counts);
        let per_element = ours[&("tensor-per-element".to_string(), "-".to_string())];
        let spans = ours[&("tensor-spans".to_string(), "-".to_string())];
        let _ = write!(
            self.text,
            "\nAccessor loop over a tensor of {TENSOR_ELEMS} uint32_t in 5 windows (everything executed, per element):\n\n\
             | loop | instructions | per element |\n| --- | ---: | ---: |\n\
             | translate per element | {per_element} | {:.2} |\n| translate per span | {spans} | {:.2} |\n\n\
             The span loop takes {:.1}x fewer instructions per element (target: at least {SPAN_SPEEDUP_TARGET}x).\n",
            per_element as f64 / TENSOR_ELEMS as f64,
            spans as f64 / TENSOR_ELEMS as f64,
            per_element as f64 / spans as f64
        );
        if spans * SPAN_SPEEDUP_TARGET > per_element {
            self.over.push(format!(
                "the span loop is only {:.1}x cheaper than the per-element loop",
                per_element as f64 / spans as f64
            ));
        }
    }

    /// The C++ accessor's kernel: (the accessor, the per-element path), their budgets and
    /// the accessor's target.
    fn kernel(&mut self, (accessor, elementwise): (u64, u64)) {
        let per = |n: u64, elems: u64| n as f64 / elems as f64;
        let speedup = per(elementwise, KERNEL_PER_ELEMENT_ELEMS) / per(accessor, KERNEL_ELEMS);
        let budget = |key: &str| self.budget.get(key).map_or("none".into(), u64::to_string);
        let _ = write!(
            self.text,
            "\nThe C++ accessor's kernel c[i] = a[i] + 3 * b[i] + 1 over three uint32_t tensors in \
             16 MiB windows (everything executed but the window emulation):\n\n\
             | path | elements | instructions | per element | budget |\n| --- | ---: | ---: | ---: | ---: |\n\
             | per element (get, get, set) | {KERNEL_PER_ELEMENT_ELEMS} | {elementwise} | {:.2} | {} |\n\
             | accessor (neuron::for_each) | {KERNEL_ELEMS} | {accessor} | {:.2} | {} |\n\n\
             The accessor takes {speedup:.1}x fewer instructions per element (target: at least {KERNEL_SPEEDUP_TARGET}x).\n",
            per(elementwise, KERNEL_PER_ELEMENT_ELEMS),
            budget("kernel3-per-element"),
            per(accessor, KERNEL_ELEMS),
            budget("kernel3-accessor"),
        );
        for (key, n) in [
            ("kernel3-per-element", elementwise),
            ("kernel3-accessor", accessor),
        ] {
            check_budget(&mut self.over, key, n, self.budget.get(key).copied());
        }
        if speedup < KERNEL_SPEEDUP_TARGET {
            self.over.push(format!(
                "the accessor is only {speedup:.1}x cheaper per element than the per-element path"
            ));
        }
    }
}

/// The counts by (path, shape): ours, and the reference C's.
fn split(sc: &[Scenario], counts: &[u64]) -> (ByPath, ByPath) {
    let (mut ours, mut refc) = (ByPath::new(), ByPath::new());
    for (s, c) in sc.iter().zip(counts) {
        let m = if s.imp == Impl::Rust {
            &mut ours
        } else {
            &mut refc
        };
        m.insert((s.path.clone(), s.shape.to_string()), *c);
    }
    (ours, refc)
}
