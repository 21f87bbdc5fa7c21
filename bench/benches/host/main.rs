//! Host benchmarks (criterion), side by side in one run:
//!
//! * the library's exported functions against the seed's reference C on the same paths
//!   nt-bench counts on the device (no host model running);
//! * the host model: a hit, with and without a trace file open; a refill; a
//!   refill and the first touch of the window it moved; a kernel of five streams over the
//!   three reusable windows, which refills on every call.
//!
//! * the C++ accessor's three-tensor kernel (neuron_translate.hpp) over 1 Mi elements on the
//!   model, against the same loop over plain memory, and per element.
//!
//! The ratios and the goals are printed at the end (bench/README.md says how they
//! are measured). Wall-clock figures: for trends, not for tests (the budget `make test`
//! enforces is the qemu instruction count).

use std::ffi::c_void;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::Criterion;

mod summary;
use neuron_translate::abi::{
    _init_translate_ctx, neuron_translate, neuron_translate_ctx, neuron_translate_mapping_lookup,
};
use neuron_translate::init::{REFILL_MASK, REFILL_WINDOW_SIZE};
use neuron_translate::model::{Config, Machine};
use neuron_translate::{MapRecord, TranslationCtx};
use nt_support::reference::{ref_mapping_lookup, ref_translate};
use nt_support::start_exit::set_hbm_scratch;

fn table(regs: &mut [u32; 10]) -> TranslationCtx {
    let mut t = TranslationCtx::empty();
    for (k, r) in t.records.iter_mut().enumerate() {
        *r = MapRecord {
            ptr: 0x40_0000_0000 + ((k as u64) << 24),
            window: 0x0100_0000 * (k as u32 + 1),
            _pad: 0,
            mask: REFILL_MASK,
            reg_location: regs.as_mut_ptr().wrapping_add(2 * k) as u64,
        };
    }
    t
}

type Translate = unsafe extern "C" fn(*mut c_void, u64) -> *mut c_void;
type Lookup = unsafe extern "C" fn(*mut c_void, u64, *mut u64, *mut u64) -> i32;

/// The library against the seed's C, with no model running.
fn library(c: &mut Criterion, paths: &[(String, u64, bool)]) {
    let impls: [(&str, Translate, Lookup); 2] = [
        ("rust", neuron_translate, neuron_translate_mapping_lookup),
        ("reference", ref_translate, ref_mapping_lookup),
    ];
    let mut regs = [0u32; 10];
    for (path, addr, lookup) in paths {
        let mut g = c.benchmark_group(path.as_str());
        for (name, tr, lk) in impls {
            let mut t = table(&mut regs);
            let base = t;
            g.bench_function(name, |b| {
                b.iter(|| {
                    let ctx = (&mut t as *mut TranslationCtx).cast::<c_void>();
                    // SAFETY: a valid table whose reusable registers point into `regs`.
                    unsafe {
                        if *lookup {
                            let (mut w, mut l) = (0, 0);
                            black_box(lk(ctx, black_box(*addr), &mut w, &mut l));
                        } else {
                            black_box(tr(ctx, black_box(*addr)));
                        }
                    }
                    // A refill changes the table: restore it, so every iteration refills.
                    if path.ends_with("refill") {
                        t = base;
                    }
                })
            });
        }
        g.finish();
    }
}

/// Nanoseconds per call of `f`, over 2^20 calls in a row.
fn per_call(mut f: impl FnMut()) -> f64 {
    const CALLS: u32 = 1 << 20;
    let start = Instant::now();
    for _ in 0..CALLS {
        f();
    }
    start.elapsed().as_secs_f64() * 1e9 / f64::from(CALLS)
}

/// The hits head to head over `ROUNDS` (21) rounds, each round timing every contender
/// once in turn: the library's slot 0 and slot 4 hits and the seed C's (no model running),
/// then the model's slot 0 hit (a model started for it). A machine that slows down or speeds up
/// between rounds then moves every contender alike, which criterion's separate runs do not.
/// Returns each round's (library 0, C 0, library 4, C 4, model 0) in ns.
fn hits_head_to_head() -> Vec<[f64; 5]> {
    const ROUNDS: usize = 21;
    let mut regs = [0u32; 10];
    let mut t = table(&mut regs);
    let ctx = (&mut t as *mut TranslationCtx).cast::<c_void>();
    let call = |f: Translate, ctx: *mut c_void, addr: u64| {
        move || {
            // SAFETY: `ctx` a valid table (the bench's, whose reusable registers point into
            // `regs`, or the model's); hits only.
            black_box(unsafe { f(black_box(ctx), black_box(addr)) });
        }
    };
    let (slot0, slot4) = (0x40_0000_0345, 0x44_0000_0345);
    (0..ROUNDS)
        .map(|_| {
            let library = [
                per_call(call(neuron_translate, ctx, slot0)),
                per_call(call(ref_translate, ctx, slot0)),
                per_call(call(neuron_translate, ctx, slot4)),
                per_call(call(ref_translate, ctx, slot4)),
            ];
            let config = Config::default();
            let m = Machine::start(config).expect("the host model starts");
            set_hbm_scratch(config.hbm_scratch);
            _init_translate_ctx();
            let hit = m.alloc(REFILL_WINDOW_SIZE, REFILL_WINDOW_SIZE).unwrap() + 0x345;
            translate(hit);
            let model = per_call(call(neuron_translate, neuron_translate_ctx().cast(), hit));
            drop(m);
            [library[0], library[1], library[2], library[3], model]
        })
        .collect()
}

/// A translate call through the table `_init_translate_ctx` built, on the model.
fn translate(addr: u64) -> *mut u32 {
    // SAFETY: the table init built; its registers are the model's block.
    unsafe { neuron_translate(neuron_translate_ctx().cast(), addr) }.cast()
}

/// The host model: hits, refills, the five-stream kernel.
fn model(c: &mut Criterion) {
    let config = Config::default();
    let m = Machine::start(config).expect("the host model starts");
    set_hbm_scratch(config.hbm_scratch);
    _init_translate_ctx();
    // Five tensors of 16 MiB, each a region of its own.
    let tensors: Vec<u64> = (0..5)
        .map(|_| m.alloc(REFILL_WINDOW_SIZE, REFILL_WINDOW_SIZE).unwrap())
        .collect();
    let mut g = c.benchmark_group("model");
    let hit = tensors[0] + 0x345;
    translate(hit); // slot 0 now shows tensor 0's region
    g.bench_function("hit-0", |b| b.iter(|| black_box(translate(black_box(hit)))));
    let trace = std::env::temp_dir().join(format!("nt-bench-trace-{}", std::process::id()));
    m.trace_to(&trace).unwrap();
    g.bench_function("hit-0-traced", |b| {
        b.iter(|| black_box(translate(black_box(hit))))
    });
    m.trace_stop().unwrap();
    let _ = std::fs::remove_file(&trace);
    // Four regions round robin over three windows: every call refills.
    let mut k = 0;
    g.bench_function("refill", |b| {
        b.iter(|| {
            k += 1;
            black_box(translate(black_box(tensors[k % 4] + 0x40)))
        })
    });
    // The same, and a store through the pointer: the window's first touch after its move,
    // a few pages of each region touched (as a kernel walking tensors does).
    let mut k = 0;
    g.bench_function("refill-touch", |b| {
        b.iter(|| {
            k += 1;
            let page = (k / 4 % 4) as u64 * 4096;
            let p = translate(black_box(tensors[k % 4] + page));
            // SAFETY: p is in the window the model just moved onto the tensor's region.
            unsafe { p.write_volatile(k as u32) };
        })
    });
    // Five streams in turn, each element read and written back incremented: one translate
    // call per iteration, every one a refill (five live regions, three windows).
    let mut k = 0usize;
    g.bench_function("five-streams", |b| {
        b.iter(|| {
            k += 1;
            let (stream, element) = (k % 5, (k / 5) as u64 % (1 << 20));
            let p = translate(tensors[stream] + 4 * element);
            // SAFETY: as above.
            unsafe { p.write_volatile(p.read_volatile().wrapping_add(1)) };
        })
    });
    g.finish();
    drop(m);
}

/// Elements of each tensor of the accessor's kernel in one window (three 4 MiB tensors in
/// one 16 MiB region), across regions (three 32 MiB tensors, two 16 MiB regions each: six
/// refills a pass, passes repeated), and of the per-element path's run.
const KERNEL_ELEMS: u64 = 1 << 20;
const KERNEL_REGIONS_ELEMS: u64 = 8 << 20;
const KERNEL_PER_ELEMENT_ELEMS: u64 = 1 << 16;

// The kernel, compiled from csrc/accessor_bench.cpp by this package's build script.
extern "C" {
    fn nt_bench_kernel_plain(a: *const u32, b: *const u32, c: *mut u32, n: usize);
    fn nt_bench_kernel_accessor(ctx: *mut c_void, a: u64, b: u64, c: u64, n: u64) -> i32;
    fn nt_bench_kernel_per_element(ctx: *mut c_void, a: u64, b: u64, c: u64, n: u64) -> i32;
}

/// The C++ accessor's kernel: over plain memory (no model) and through `neuron::for_each`
/// on the model, in one window and across regions; per element on the model.
fn kernel(c: &mut Criterion) {
    let config = Config::default();
    let m = Machine::start(config).expect("the host model starts");
    set_hbm_scratch(config.hbm_scratch);
    _init_translate_ctx();
    kernel_on(c, &m, "kernel3", KERNEL_ELEMS, 4096, true);
    kernel_on(
        c,
        &m,
        "kernel3-regions",
        KERNEL_REGIONS_ELEMS,
        REFILL_WINDOW_SIZE,
        false,
    );
    drop(m);
    // The same across regions with a model that keeps no view: what the kept views buy.
    let m = Machine::start(Config { keep: 0, ..config }).expect("the host model starts");
    _init_translate_ctx();
    let group = "kernel3-regions-keep-0";
    kernel_on(
        c,
        &m,
        group,
        KERNEL_REGIONS_ELEMS,
        REFILL_WINDOW_SIZE,
        false,
    );
    drop(m);
}

/// The kernel over three tensors of `n` elements, each allocated at `align` on the model,
/// as benchmark group `group`: the plain loop, the accessor, and (`per_element`) the
/// per-element path. The model's result must be the plain loop's.
fn kernel_on(c: &mut Criterion, m: &Machine, group: &str, n: u64, align: u64, per_element: bool) {
    let len = n as usize;
    let a: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let b: Vec<u32> = (0..n as u32).map(|i| i ^ 0x5bd1_e995).collect();
    let mut g = c.benchmark_group(group);
    let bytes = 4 * n;
    let [sa, sb, sc] = [0; 3].map(|_| m.alloc(bytes, align).unwrap());
    // The plain loop's three buffers lie as the tensors do in SoC memory (the same
    // offsets from a 4 KiB-aligned base), so that both loops meet the same cache sets.
    let words = |soc: u64| ((soc - sa) / 4) as usize;
    let mut plain = vec![0u32; words(sc) + len + 1024];
    let base = plain.as_ptr().align_offset(4096);
    let (pa, pb, pc) = (base + words(sa), base + words(sb), base + words(sc));
    plain[pa..pa + len].copy_from_slice(&a);
    plain[pb..pb + len].copy_from_slice(&b);
    let p = plain.as_mut_ptr();
    g.bench_function("plain", |bch| {
        // SAFETY: three disjoint stretches of n elements of `plain`.
        bch.iter(|| unsafe {
            nt_bench_kernel_plain(p.add(pa), p.add(pb), p.add(pc), black_box(len))
        })
    });
    let out = plain[pc..pc + len].to_vec();
    m.write(sa, &bytemuck_u32(&a)).unwrap();
    m.write(sb, &bytemuck_u32(&b)).unwrap();
    let ctx = neuron_translate_ctx().cast::<c_void>();
    g.bench_function("accessor", |bch| {
        // SAFETY: the model's table and tensors of n elements.
        bch.iter(|| assert_eq!(unsafe { nt_bench_kernel_accessor(ctx, sa, sb, sc, n) }, 1))
    });
    let mut got = vec![0u8; bytes as usize];
    m.read(sc, &mut got).unwrap();
    assert_eq!(
        got,
        bytemuck_u32(&out),
        "the accessor's kernel on the model"
    );
    if per_element {
        let k = KERNEL_PER_ELEMENT_ELEMS;
        g.bench_function("per-element", |bch| {
            bch.iter(|| {
                assert_eq!(
                    // SAFETY: as above, on the first k elements.
                    unsafe { nt_bench_kernel_per_element(ctx, sa, sb, sc, k) },
                    1
                )
            })
        });
    }
    g.finish();
}

/// The bytes of `v` (native order, as the kernel stores them).
fn bytemuck_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let paths: Vec<(String, u64, bool)> = vec![
        ("translate-hit-0".into(), 0x40_0000_0345, false),
        ("translate-hit-4".into(), 0x44_0000_0345, false),
        ("translate-refill".into(), 0x40_7700_0123, false),
        ("lookup-hit-0".into(), 0x40_0000_0345, true),
        ("lookup-miss".into(), 0x40_7700_0123, true),
    ];
    library(&mut c, &paths);
    model(&mut c);
    kernel(&mut c);
    c.final_summary();
    summary::print(&paths, &hits_head_to_head());
}
