//! The host model's traces replayed: by `ntx simulate`, to the same counters, and by the
//! unmodified device object under qemu, to the same results, registers and table.

use neuron_translate::abi::{
    _init_translate_ctx, neuron_translate, neuron_translate_ctx, neuron_translate_span,
};
use neuron_translate::init::REFILL_WINDOW_SIZE;
use neuron_translate::model::trace::Event;
use neuron_translate::model::{Config, Machine};
use neuron_translate::regs::{MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6};
use nt_support::start_exit::set_hbm_scratch;
use nt_support::GLOBAL_LOCK;

mod model_support;
use model_support::{four_regions, machine, translate};

/// `ntx simulate` on `trace` (extra arguments after it): the exit code and the JSON.
fn simulate(trace: &std::path::Path, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let out = std::process::Command::new(nt_support::tools::product("NT_NTX"))
        .arg("simulate")
        .arg(trace)
        .args(extra)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let json = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap(), json, text)
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn ntx_simulate_replays_a_host_model_trace_to_the_same_counters_and_flags_thrash() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let dir = nt_support::tools::scratch("host_model_simulate");
    let m = machine();
    let regions = four_regions(&m);
    let (cycle, sweep) = (dir.join("cycle.trace"), dir.join("sweep.trace"));
    // Four regions in turn, three times: each comes back after an eviction.
    m.trace_to(&cycle).unwrap();
    for _ in 0..3 {
        for r in regions {
            translate(r);
            translate(r + 64);
        }
    }
    m.trace_stop().unwrap();
    let cycled = m.counters();
    m.reset_counters();
    // A sweep: each region once, many calls each; then SBUF (a pinned window).
    _init_translate_ctx();
    m.trace_to(&sweep).unwrap();
    for r in regions {
        for k in 0..16 {
            translate(r + 256 * k);
        }
    }
    translate(m.sbuf() + 8);
    m.trace_stop().unwrap();
    let swept = m.counters();
    drop(m);
    for (trace, counters, thrash) in [(&cycle, cycled, true), (&sweep, swept, false)] {
        let (code, v, _) = simulate(trace, &["--format", "json"]);
        assert_eq!(code, 0);
        let arr = |k: &str| -> Vec<u64> {
            v[k].as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_u64().unwrap())
                .collect()
        };
        assert_eq!(v["translates"], counters.translates);
        assert_eq!(arr("hits"), counters.hits, "{}", trace.display());
        assert_eq!(arr("refills"), counters.refills, "{}", trace.display());
        assert_eq!(v["register_writes"], counters.register_writes);
        assert_eq!(v["thrash"], thrash, "{v}");
    }
    let (_, v, _) = simulate(&cycle, &["--format", "json"]);
    assert_eq!(
        (
            v["regions"].as_u64(),
            v["hot_regions"].as_u64(),
            v["repeat_refills"].as_u64()
        ),
        (Some(4), Some(4), Some(8))
    );
    let (_, _, text) = simulate(&cycle, &[]);
    assert!(
        text.contains("warning: thrash: 4 hot regions take turns in the 3 reusable windows"),
        "{text}"
    );
    let (_, _, text) = simulate(&sweep, &[]);
    assert!(!text.contains("warning"), "a sweep is not thrash:\n{text}");
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn ntx_simulate_refuses_bad_input_and_stops_where_the_device_traps() {
    let dir = nt_support::tools::scratch("host_model_simulate_bad");
    let bad = dir.join("bad.trace");
    std::fs::write(&bad, "translate 0x10\nload 0x20\n").unwrap();
    let (code, v, _) = simulate(&bad, &["--format", "json"]);
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (2, Some("malformed-trace"))
    );
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("line 2:"),
        "{v}"
    );
    let good = dir.join("good.trace");
    std::fs::write(
        &good,
        "# a trace\ntranslate 0x4000001000\nspan 0x4000002000 64\n",
    )
    .unwrap();
    let short = dir.join("short.bin");
    std::fs::write(&short, [0u8; 10]).unwrap();
    let (code, v, _) = simulate(
        &good,
        &["--table", short.to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (2, Some("malformed-table"))
    );
    let (code, v, _) = simulate(
        &good,
        &[
            "--table",
            short.to_str().unwrap(),
            "--engine-base",
            "0x1",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        (code, v["error"]["kind"].as_str()),
        (2, Some("bad-argument"))
    );
    // A table whose first reusable window has no register: the first miss traps.
    let mut t = neuron_translate::initial_table(&neuron_translate::InitInputs::default());
    t.records[0].reg_location = 0;
    let table = dir.join("trap.bin");
    std::fs::write(&table, t.to_bytes()).unwrap();
    let (code, v, text) = simulate(
        &good,
        &["--table", table.to_str().unwrap(), "--format", "json"],
    );
    assert_eq!(code, 1, "{text}");
    assert_eq!(v["trapped_at"], 0);
    assert_eq!(v["translates"], 0);
}

/// A deterministic stream of calls over six 16 MiB HBM regions (more than the three
/// reusable windows hold), SBUF, the HBM scratch window and one SoC range no region
/// backs; spans of up to 64 KiB, some reaching past a window's end.
fn mixed_trace(config: &Config, sbuf: u64) -> Vec<Event> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..400)
        .map(|_| {
            let r = next();
            let offset = (r >> 8) & (REFILL_WINDOW_SIZE - 1);
            let base = match r % 9 {
                k @ 0..=5 => config.hbm_base + k * REFILL_WINDOW_SIZE,
                6 => sbuf,
                7 => config.hbm_scratch,
                _ => 0x7F_0000_0000,
            };
            let addr = base + offset;
            if (r >> 40) % 3 == 0 {
                Event::Span(addr, (r >> 44) % 0x1_0000)
            } else {
                Event::Translate(addr)
            }
        })
        .collect()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_host_model_and_the_device_object_under_qemu_are_the_same_machine() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let config = Config::default();
    let m = Machine::start(config).unwrap();
    set_hbm_scratch(config.hbm_scratch);
    _init_translate_ctx();
    let events = mixed_trace(&config, m.sbuf());
    let host = on_the_model(&m, &events);
    // SAFETY: the table init built.
    let host_table = unsafe { *neuron_translate_ctx() }.to_bytes();
    let counters = m.counters();
    drop(m);
    assert!(
        counters.refills.iter().sum::<u64>() > 20,
        "the trace exercises refills: {counters:?}"
    );
    let (calls, device_table) = on_the_device(&config, &events);
    assert_eq!(calls.len(), events.len());
    for (i, ((local, span, regs), dev)) in host.iter().zip(&calls).enumerate() {
        let want: Vec<u64> = [*local, *span]
            .into_iter()
            .chain(regs.iter().map(|&w| u64::from(w)))
            .collect();
        assert_eq!(&want, dev, "call {i} ({}): host model vs device", events[i]);
    }
    assert_eq!(device_table, host_table.to_vec(), "the final table");
}

/// The window registers whose words a call's result is compared by.
const TRACE_WINDOWS: [neuron_translate::regs::RegPair; 3] = [MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6];

/// The MEM_WINDOW registers' words (lo, hi of each) as the model holds them.
fn window_words(m: &Machine) -> Vec<u32> {
    TRACE_WINDOWS
        .iter()
        .flat_map(|w| [m.register(w.lo()), m.register(w.hi())])
        .collect()
}

/// `events` on the running model: per call its result, its span and the window registers
/// after it, each call's logged stores checked to explain the registers' change.
fn on_the_model(m: &Machine, events: &[Event]) -> Vec<(u64, u64, Vec<u32>)> {
    let windows = TRACE_WINDOWS;
    let mut host = Vec::new();
    let mut previous = window_words(m);
    for ev in events {
        let before = m.stores().len();
        let ctx = neuron_translate_ctx().cast();
        // SAFETY: the initialised table; registers in the model's block.
        let (local, span) = unsafe {
            match *ev {
                Event::Translate(a) => (neuron_translate(ctx, a) as u64, 0),
                Event::Span(a, n) => {
                    let mut span = 0;
                    (neuron_translate_span(ctx, a, n, &mut span) as u64, span)
                }
            }
        };
        let now = window_words(m);
        // Every store of the call, applied to the registers before it, gives the
        // registers after it: nothing else wrote them.
        let mut replayed = previous.clone();
        for s in &m.stores()[before..] {
            let i = windows
                .iter()
                .position(|w| u64::from(w.lo()) == s.addr || u64::from(w.hi()) == s.addr)
                .expect("a store to a MEM_WINDOW register");
            let hi = u64::from(windows[i].hi()) == s.addr;
            replayed[2 * i + usize::from(hi)] = s.value;
        }
        assert_eq!(
            replayed, now,
            "{ev}: the logged stores explain the registers"
        );
        previous = now.clone();
        host.push((local, span, now));
    }
    host
}

/// The same events through the unmodified object under qemu: each call's words (result,
/// span, registers) and the final table.
fn on_the_device(config: &Config, events: &[Event]) -> (Vec<Vec<u64>>, Vec<u8>) {
    let mut h = format!(
        "#define NT_TRACE_ENGINE_BASE {:#x}ull\n#define NT_TRACE_HBM_SCRATCH {:#x}ull\n\
         #define NT_TRACE_EVENTS {}\n\
         static const struct {{ unsigned is_span; unsigned long long addr, len; }} nt_trace[] = {{\n",
        config.engine_base,
        config.hbm_scratch,
        events.len()
    );
    for ev in events {
        let (s, a, n) = match *ev {
            Event::Translate(a) => (0, a, 0),
            Event::Span(a, n) => (1, a, n),
        };
        h.push_str(&format!("  {{{s}, {a:#x}ull, {n:#x}ull}},\n"));
    }
    h.push_str("};\n");
    let elf = nt_support::qemu::program("host_model_trace", "trace.c", &[("trace.h", h)], false);
    let out = nt_support::qemu::run(&elf);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let hex = |w: &str| u64::from_str_radix(w.trim_start_matches("0x"), 16).unwrap();
    let calls: Vec<Vec<u64>> = text
        .lines()
        .filter_map(|l| l.strip_prefix("call "))
        .map(|l| l.split(' ').map(hex).collect())
        .collect();
    let table_line = text
        .lines()
        .find_map(|l| l.strip_prefix("table "))
        .expect("the final table");
    let device_table: Vec<u8> = table_line
        .split("0x")
        .filter(|w| !w.is_empty())
        .map(|w| hex(w) as u8)
        .collect();
    (calls, device_table)
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn ntx_simulate_keeps_the_views_the_model_keeps() {
    let _g = GLOBAL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = nt_support::tools::scratch("host_model_simulate_keep");
    let m = machine();
    let regions = four_regions(&m);
    let trace = dir.join("streams.trace");
    m.trace_to(&trace).unwrap();
    // Four regions streamed through in turn, twice, then touched at one element each.
    let ctx = neuron_translate_ctx().cast();
    for _ in 0..2 {
        for r in regions {
            let mut span = 0;
            // SAFETY: the table init built; its registers are the model's block.
            unsafe { neuron_translate_span(ctx, r, 1 << 20, &mut span) };
        }
    }
    for r in regions {
        translate(r + 8);
    }
    m.trace_stop().unwrap();
    let mem = m.memory();
    drop(m);
    assert!(mem.parked > 0 && mem.reused > 0, "{mem:?}");
    let (code, v, _) = simulate(&trace, &["--format", "json"]);
    assert_eq!(code, 0);
    assert_eq!(
        (
            v["views_kept"].as_u64(),
            v["views_reused"].as_u64(),
            v["kept_views"].as_u64(),
            v["keep_limit_views"].as_u64()
        ),
        (
            Some(mem.parked),
            Some(mem.reused),
            Some(mem.kept_views),
            Some(mem.keep_limit_views)
        ),
        "{v}"
    );
    let (_, v, _) = simulate(&trace, &["--format", "json", "--keep", "0"]);
    assert_eq!(v["views_kept"], 0, "{v}");
}
