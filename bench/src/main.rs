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

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Parser;

use neuron_translate::init::REFILL_MASK;
use neuron_translate::layout::offsets::CTX_SIZE;
use neuron_translate::{MapRecord, TranslationCtx};
use nt_support::qemu::{
    compile_c, compile_c_with, count_between_marks, functions, link, link_args, root, start_object,
    trace_pcs, DEVICE_CXXFLAGS, EMU_WRAP,
};

/// The chart of the counts, committed (bench/README.md and the README show it).
const CHART: &str = "bench/instructions.svg";

/// One path of the chart: the original's issue slots, clang's build of the seed's C, ours.
struct ChartRow {
    path: String,
    shape: &'static str,
    original: Option<u64>,
    clang: Option<u64>,
    ours: u64,
}

/// A horizontal grouped bar chart of `rows`, one panel per table shape (`ctx` and `init`
/// in the first), as SVG text.
fn chart(rows: &[ChartRow]) -> String {
    use plotters::prelude::*;

    let series: [(&str, RGBColor); 3] = [
        ("original (issue slots)", RGBColor(150, 150, 150)),
        ("seed's C, clang-22", RGBColor(230, 140, 40)),
        ("neuron-translate", RGBColor(40, 100, 200)),
    ];
    let panels: Vec<(&str, Vec<&ChartRow>)> = ["low", "high"]
        .iter()
        .map(|shape| {
            let title = if *shape == "low" {
                "tags differ in the low word (and ctx, init)"
            } else {
                "tags differ only in the high word"
            };
            let mine: Vec<&ChartRow> = rows
                .iter()
                .filter(|r| r.shape == *shape || (*shape == "low" && r.shape == "-"))
                .collect();
            (title, mine)
        })
        .collect();
    let max = rows
        .iter()
        .flat_map(|r| [r.original, r.clang, Some(r.ours)])
        .flatten()
        .max()
        .unwrap_or(1);
    let x_max = max.div_ceil(10) * 10 + 10;
    let row_px = 44;
    let heights: Vec<u32> = panels
        .iter()
        .map(|(_, r)| 70 + row_px * r.len() as u32)
        .collect();
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (900, heights.iter().sum::<u32>() + 44))
            .into_drawing_area();
        let _ = root.fill(&WHITE);
        let (head, body) = root.split_vertically(44);
        let _ = head.draw_text(
            "Dynamic instructions per call under qemu-xtensa (lower is better)",
            &("sans-serif", 18).into_text_style(&head),
            (20, 8),
        );
        let _ = head.draw_text(
            "No bar where no count exists: the seed's listing omits the original's init, and the seed's C has no ctx or init of its own.",
            &("sans-serif", 11).into_text_style(&head),
            (20, 26),
        );
        let mut rest = body;
        for ((title, mine), h) in panels.iter().zip(&heights) {
            let (area, below) = rest.split_vertically(*h);
            rest = below;
            let n = mine.len();
            // Each row is four unit segments from the top: its three bars in series order
            // and a gap. The axis runs upwards, so row i's bar si is segment
            // 4 (n - 1 - i) + 3 - si; the row's name labels its middle bar.
            let segment = |i: usize, si: usize| 4 * (n - 1 - i) + 3 - si;
            let mut c = ChartBuilder::on(&area)
                .caption(*title, ("sans-serif", 15))
                .margin(10)
                .x_label_area_size(28)
                .y_label_area_size(130)
                .build_cartesian_2d(0u64..x_max, (0..4 * n).into_segmented())
                .expect("chart axes");
            let _ = c
                .configure_mesh()
                .disable_y_mesh()
                .y_labels(4 * n)
                .y_label_formatter(&|v| match v {
                    SegmentValue::CenterOf(k) if k % 4 == 2 => mine
                        .get(n - 1 - k / 4)
                        .map_or(String::new(), |r| r.path.clone()),
                    _ => String::new(),
                })
                .x_desc("instructions")
                .draw();
            for (si, (name, color)) in series.iter().enumerate() {
                let color = *color;
                let bars: Vec<_> = mine
                    .iter()
                    .enumerate()
                    .filter_map(|(i, r)| {
                        let v = [r.original, r.clang, Some(r.ours)][si]?;
                        let k = segment(i, si);
                        Some(Rectangle::new(
                            [(0, SegmentValue::Exact(k)), (v, SegmentValue::Exact(k + 1))],
                            color.filled(),
                        ))
                    })
                    .collect();
                if let Ok(d) = c.draw_series(bars) {
                    d.label(*name).legend(move |(x, y)| {
                        Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled())
                    });
                }
                // Each bar's count at its end.
                let values: Vec<_> = mine
                    .iter()
                    .enumerate()
                    .filter_map(|(i, r)| {
                        let v = [r.original, r.clang, Some(r.ours)][si]?;
                        Some(Text::new(
                            v.to_string(),
                            (v + 1, SegmentValue::Exact(segment(i, si) + 1)),
                            ("sans-serif", 10).into_font().color(&RGBColor(60, 60, 60)),
                        ))
                    })
                    .collect();
                let _ = c.draw_series(values);
            }
            let _ = c
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.9))
                .border_style(BLACK)
                .draw();
        }
        let _ = root.present();
    }
    svg
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Impl {
    Rust,
    Reference,
}

/// Elements of the tensor the two accessor loops sum (abi-tests/consumers/tensor_loop.h:
/// five 4 KiB windows of uint32_t).
const TENSOR_ELEMS: u64 = 5 * 4096 / 4;

/// The span loop must cost at most this fraction of the per-element loop (issue target).
const SPAN_SPEEDUP_TARGET: u64 = 8;

/// The C++ accessor's three-tensor kernel (bench/qemu/kernel_bench.cpp): elements the
/// accessor walks, and the first elements the per-element path does (each costs it the
/// same, and qemu's log of it is long).
const KERNEL_ELEMS: u64 = 1 << 20;
const KERNEL_PER_ELEMENT_ELEMS: u64 = 1 << 14;
/// The accessor must take at least this many times fewer instructions per element than
/// the per-element path (issue #26).
const KERNEL_SPEEDUP_TARGET: f64 = 6.0;

/// The three-tensor kernel's counts under qemu, the window emulation left out: (the
/// accessor over KERNEL_ELEMS elements, the per-element path over KERNEL_PER_ELEMENT_ELEMS).
fn kernel_counts(out_dir: &Path, support: &Path) -> (u64, u64) {
    let q = root().join("abi-tests/qemu");
    let (include, consumers) = (root().join("include"), root().join("abi-tests/consumers"));
    let main = out_dir.join("kernel_bench.o");
    let programs = root().join("bench/qemu");
    let defines = [
        format!("-DKB_ELEMS={KERNEL_ELEMS}u"),
        format!("-DKB_PER_ELEMENT_ELEMS={KERNEL_PER_ELEMENT_ELEMS}u"),
    ];
    let mut flags: Vec<&str> = DEVICE_CXXFLAGS.to_vec();
    flags.extend(defines.iter().map(String::as_str));
    compile_c_with(
        &programs.join("kernel_bench.cpp"),
        &main,
        &[&include, &q, &consumers],
        &flags,
    );
    let elf = out_dir.join("kernel_bench.elf");
    let objs = [start_object(out_dir), main, support.to_path_buf()];
    let device = nt_support::tools::product("NT_DEVICE_OBJ");
    link_args(&objs, &device, &[], &EMU_WRAP, &elf);
    let funcs = functions(&elf);
    // The hardware's work (emu_windows.hpp: the window moves and the wrapper that calls
    // them), not the kernel's.
    let skip: Vec<(u32, u32)> = funcs
        .iter()
        .filter(|(n, _)| n.contains("3emu") || n.starts_with("__wrap_"))
        .map(|(_, r)| *r)
        .collect();
    assert!(
        skip.len() >= 3,
        "the emulation's functions in {}",
        elf.display()
    );
    let mark = funcs
        .get("bench_mark")
        .expect("bench_mark in kernel_bench.cpp")
        .0;
    let counts = count_between_marks(&elf, mark, &skip);
    // Marks: accessor | check and reset | per element | check.
    assert_eq!(
        counts.len(),
        4,
        "four marks in kernel_bench.cpp: {counts:?}"
    );
    (counts[0], counts[2])
}

/// Notes in `over` a count above its budget, or a path with no budget.
fn check_budget(over: &mut Vec<String>, key: &str, n: u64, budget: Option<u64>) {
    match budget {
        Some(b) if n > b => over.push(format!("{key}: {n} instructions, budget {b}")),
        None => over.push(format!("{key}: no budget in bench/budget.toml")),
        _ => {}
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Func {
    Translate,
    Lookup,
    Ctx,
    Init,
    /// The accessor loop translating each element (everything it executes is counted).
    TensorPerElement,
    /// The accessor loop translating once per window.
    TensorSpans,
}

struct Scenario {
    path: String,
    shape: &'static str,
    imp: Impl,
    func: Func,
    table: usize,
    addr: u64,
}

/// The two table shapes of the issue: tags that differ in the low word (windows 16 MiB
/// apart), and tags that differ only in the high word (windows 4 GiB apart).
fn table(shape: &str) -> TranslationCtx {
    let mut t = TranslationCtx::empty();
    for (k, r) in t.records.iter_mut().enumerate() {
        let ptr = match shape {
            "low" => 0x40_0000_0000 + ((k as u64) << 24),
            _ => ((0x40 + k as u64) << 32) | 0x1200_0000,
        };
        *r = MapRecord {
            ptr,
            window: 0x0100_0000 * (k as u32 + 1),
            _pad: 0,
            mask: REFILL_MASK,
            reg_location: k as u64,
        };
    }
    t
}

fn scenarios() -> Vec<Scenario> {
    let mut out = Vec::new();
    for (ti, shape) in ["low", "high"].into_iter().enumerate() {
        let t = table(shape);
        // An address that matches no window: its low word differs from every tag in the
        // low-word shape, its high word from every tag in the high-word shape.
        let miss = if shape == "low" {
            0x40_7700_0123
        } else {
            0x50_1200_0123
        };
        for imp in [Impl::Rust, Impl::Reference] {
            let mut add = |path: String, func, addr| {
                out.push(Scenario {
                    path,
                    shape,
                    imp,
                    func,
                    table: ti,
                    addr,
                })
            };
            for k in 0..5 {
                add(
                    format!("translate-hit-{k}"),
                    Func::Translate,
                    t.records[k].ptr + 0x345,
                );
            }
            add("translate-refill".into(), Func::Translate, miss);
            add(
                "lookup-hit-0".into(),
                Func::Lookup,
                t.records[0].ptr + 0x345,
            );
            add(
                "lookup-hit-4".into(),
                Func::Lookup,
                t.records[4].ptr + 0x345,
            );
            add("lookup-miss".into(), Func::Lookup, miss);
        }
    }
    out.push(Scenario {
        path: "ctx".into(),
        shape: "-",
        imp: Impl::Rust,
        func: Func::Ctx,
        table: 0,
        addr: 0,
    });
    out.push(Scenario {
        path: "init".into(),
        shape: "-",
        imp: Impl::Rust,
        func: Func::Init,
        table: 0,
        addr: 0,
    });
    out.push(Scenario {
        path: "tensor-per-element".into(),
        shape: "-",
        imp: Impl::Rust,
        func: Func::TensorPerElement,
        table: 0,
        addr: 0,
    });
    out.push(Scenario {
        path: "tensor-spans".into(),
        shape: "-",
        imp: Impl::Rust,
        func: Func::TensorSpans,
        table: 0,
        addr: 0,
    });
    out
}

fn header(sc: &[Scenario]) -> String {
    let mut s = String::from("/* Generated by nt-bench. */\n");
    let _ = writeln!(s, "#define NB_SCENARIOS {}", sc.len());
    s.push_str("struct nb { unsigned imp, func, table; unsigned long long addr; };\n");
    let _ = writeln!(
        s,
        "static const unsigned char nb_tables[2][{CTX_SIZE}] = {{"
    );
    for shape in ["low", "high"] {
        s.push('{');
        for b in table(shape).to_bytes() {
            let _ = write!(s, "{b},");
        }
        s.push_str("},\n");
    }
    s.push_str("};\nstatic const struct nb nb_scenarios[NB_SCENARIOS] = {\n");
    for x in sc {
        let _ = writeln!(
            s,
            "{{{},{},{},{:#x}ull}},",
            x.imp as u32, x.func as u32, x.table, x.addr
        );
    }
    s.push_str("};\n");
    s
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
    let check = args.check;
    let out_dir = args.out.unwrap_or_else(|| root().join("target/bench"));
    std::fs::create_dir_all(&out_dir).unwrap();

    let sc = scenarios();
    std::fs::write(out_dir.join("bench_scenarios.h"), header(&sc)).unwrap();
    let q = root().join("abi-tests/qemu");
    let include = root().join("include");
    let consumers = root().join("abi-tests/consumers");
    let mut objs = vec![start_object(&out_dir)];
    for (src, o) in [
        (root().join("bench/qemu/bench.c"), "bench.o"),
        (q.join("support.c"), "support.o"),
        (root().join("abi-tests/csrc/reference.c"), "reference.o"),
    ] {
        let obj = out_dir.join(o);
        compile_c(&src, &obj, &[&include, &q, &out_dir, &consumers]);
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
        if let Some(i) = cur {
            if i < sc.len() {
                let whole_loop = matches!(sc[i].func, Func::TensorPerElement | Func::TensorSpans);
                let r = if sc[i].imp == Impl::Rust {
                    &rust
                } else {
                    &reference
                };
                // The accessor loops count everything: the loop's own code, the calls,
                // the library.
                if whole_loop || r.iter().any(|&(a, b)| a <= pc && pc < b) {
                    counts[i] += 1;
                }
            }
        }
    }
    assert_eq!(
        marks,
        sc.len() + 1,
        "every scenario ran once (and a closing mark)"
    );

    let original = read_toml(&root().join("bench/original.toml"));
    let budget = read_toml(&root().join("bench/budget.toml"));
    let mut ours: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut refc: BTreeMap<(String, String), u64> = BTreeMap::new();
    for (s, c) in sc.iter().zip(&counts) {
        let m = if s.imp == Impl::Rust {
            &mut ours
        } else {
            &mut refc
        };
        m.insert((s.path.clone(), s.shape.to_string()), *c);
    }
    let mut report = String::from(
        "| path | table shape | original (seed, issue slots) | reference C (clang-22) | neuron-translate | budget |\n\
         | --- | --- | ---: | ---: | ---: | ---: |\n",
    );
    let mut over = Vec::new();
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
        let b = budget.get(&bkey).copied();
        let show = |v: Option<u64>| v.map_or("n/a".to_string(), |v| v.to_string());
        if !matches!(s.func, Func::TensorPerElement | Func::TensorSpans) {
            rows.push(ChartRow {
                path: s.path.clone(),
                shape: s.shape,
                original: original.get(&s.path).copied(),
                clang: refc.get(&key).copied(),
                ours: n,
            });
        }
        let _ = writeln!(
            report,
            "| {} | {} | {} | {} | {} | {} |",
            s.path,
            s.shape,
            show(original.get(&s.path).copied()),
            show(refc.get(&key).copied()),
            n,
            show(b)
        );
        check_budget(&mut over, &bkey, n, b);
    }
    let per_element = ours[&("tensor-per-element".to_string(), "-".to_string())];
    let spans = ours[&("tensor-spans".to_string(), "-".to_string())];
    let _ = write!(
        report,
        "\nAccessor loop over a tensor of {TENSOR_ELEMS} uint32_t in 5 windows (everything executed, per element):\n\n\
         | loop | instructions | per element |\n| --- | ---: | ---: |\n\
         | translate per element | {per_element} | {:.2} |\n| translate per span | {spans} | {:.2} |\n\n\
         The span loop takes {:.1}x fewer instructions per element (target: at least {SPAN_SPEEDUP_TARGET}x).\n",
        per_element as f64 / TENSOR_ELEMS as f64,
        spans as f64 / TENSOR_ELEMS as f64,
        per_element as f64 / spans as f64
    );
    if spans * SPAN_SPEEDUP_TARGET > per_element {
        over.push(format!(
            "the span loop is only {:.1}x cheaper than the per-element loop",
            per_element as f64 / spans as f64
        ));
    }
    let (accessor, elementwise) = kernel_counts(&out_dir, &out_dir.join("support.o"));
    let per = |n: u64, elems: u64| n as f64 / elems as f64;
    let speedup = per(elementwise, KERNEL_PER_ELEMENT_ELEMS) / per(accessor, KERNEL_ELEMS);
    let _ = write!(
        report,
        "\nThe C++ accessor's kernel c[i] = a[i] + 3 * b[i] + 1 over three uint32_t tensors in \
         16 MiB windows (everything executed but the window emulation):\n\n\
         | path | elements | instructions | per element | budget |\n| --- | ---: | ---: | ---: | ---: |\n\
         | per element (get, get, set) | {KERNEL_PER_ELEMENT_ELEMS} | {elementwise} | {:.2} | {} |\n\
         | accessor (neuron::for_each) | {KERNEL_ELEMS} | {accessor} | {:.2} | {} |\n\n\
         The accessor takes {speedup:.1}x fewer instructions per element (target: at least {KERNEL_SPEEDUP_TARGET}x).\n",
        per(elementwise, KERNEL_PER_ELEMENT_ELEMS),
        budget.get("kernel3-per-element").map_or("none".into(), u64::to_string),
        per(accessor, KERNEL_ELEMS),
        budget.get("kernel3-accessor").map_or("none".into(), u64::to_string),
    );
    for (key, n) in [
        ("kernel3-per-element", elementwise),
        ("kernel3-accessor", accessor),
    ] {
        check_budget(&mut over, key, n, budget.get(key).copied());
    }
    if speedup < KERNEL_SPEEDUP_TARGET {
        over.push(format!(
            "the accessor is only {speedup:.1}x cheaper per element than the per-element path"
        ));
    }
    print!("{report}");
    std::fs::write(out_dir.join("counts.md"), &report).unwrap();
    // The chart: written by `make bench`; `make test` (--check) fails when the committed
    // one no longer shows these counts.
    let svg = chart(&rows);
    let committed = root().join(CHART);
    if check {
        if std::fs::read_to_string(&committed).ok().as_deref() != Some(svg.as_str()) {
            over.push(format!(
                "{CHART} does not show these counts: run `make bench` and commit it"
            ));
        }
    } else {
        std::fs::write(&committed, &svg).unwrap();
        println!("wrote {CHART}");
    }
    if check && !over.is_empty() {
        eprintln!("nt-bench: over budget:\n  {}", over.join("\n  "));
        std::process::exit(1);
    }
}
