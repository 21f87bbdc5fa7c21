//! Host benchmarks (criterion): the library's exported functions against the seed's
//! reference C on the same paths nt-bench counts on the device, with the ratio of the two
//! from the same run printed at the end. Wall-clock figures on a shared machine: for
//! trends, not for budgets (the budget is the qemu instruction count).

use std::ffi::c_void;
use std::hint::black_box;
use std::time::Duration;

use criterion::Criterion;
use neuron_translate::abi::{neuron_translate, neuron_translate_mapping_lookup};
use neuron_translate::init::REFILL_MASK;
use neuron_translate::{MapRecord, TranslationCtx};
use nt_support::reference::{ref_mapping_lookup, ref_translate};

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

fn main() {
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .configure_from_args();
    let impls: [(&str, Translate, Lookup); 2] = [
        ("rust", neuron_translate, neuron_translate_mapping_lookup),
        ("reference", ref_translate, ref_mapping_lookup),
    ];
    let paths: Vec<(String, u64, bool)> = vec![
        ("translate-hit-0".into(), 0x40_0000_0345, false),
        ("translate-hit-4".into(), 0x44_0000_0345, false),
        ("translate-refill".into(), 0x40_7700_0123, false),
        ("lookup-hit-0".into(), 0x40_0000_0345, true),
        ("lookup-miss".into(), 0x40_7700_0123, true),
    ];
    let mut regs = [0u32; 10];
    for (path, addr, lookup) in &paths {
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
    c.final_summary();

    // Ratios from this run's estimates.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion");
    let mean = |path: &str, name: &str| -> Option<f64> {
        let text =
            std::fs::read_to_string(dir.join(path).join(name).join("new/estimates.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v["mean"]["point_estimate"].as_f64()
    };
    println!("\n| path | rust (ns) | reference C (ns) | rust / reference |\n| --- | ---: | ---: | ---: |");
    for (path, _, _) in &paths {
        if let (Some(r), Some(c)) = (mean(path, "rust"), mean(path, "reference")) {
            println!("| {path} | {r:.2} | {c:.2} | {:.2} |", r / c);
        }
    }
}
