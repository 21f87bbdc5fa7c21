//! The host model (feature `sim`): the unmodified `_init_translate_ctx` and
//! `neuron_translate` against a simulated NX register block and SoC memory, with windows
//! that really move. One machine per process at a time: every test holds GLOBAL_LOCK.

use neuron_translate::abi::{
    _init_translate_ctx, neuron_translate, neuron_translate_ctx, neuron_translate_span,
};
use neuron_translate::init::REFILL_WINDOW_SIZE;
use neuron_translate::model::trace::{parse, Event};
use neuron_translate::model::{Config, Machine, SimError, Store, STORE_LOG};
use neuron_translate::regs::{MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6};
use nt_support::start_exit::set_hbm_scratch;
use nt_support::GLOBAL_LOCK;

/// A running machine with the table initialised; hold GLOBAL_LOCK.
fn machine() -> Machine {
    let config = Config::default();
    let m = Machine::start(config).expect("the host model starts");
    set_hbm_scratch(config.hbm_scratch);
    _init_translate_ctx();
    m
}

fn translate(addr: u64) -> *mut u32 {
    // SAFETY: the table init built; its registers are the model's block.
    unsafe { neuron_translate(neuron_translate_ctx().cast(), addr) }.cast()
}

/// Four HBM buffers, each in a 16 MiB region of its own, each filled with its own word.
fn four_regions(m: &Machine) -> [u64; 4] {
    let mut out = [0; 4];
    for (k, o) in out.iter_mut().enumerate() {
        *o = m.alloc(REFILL_WINDOW_SIZE, REFILL_WINDOW_SIZE).unwrap() + 0x1000;
        let word = 0xA0A0_0000u32 + k as u32;
        m.write(*o, &word.to_le_bytes()).unwrap();
    }
    out
}

#[test]
fn a_refill_remaps_the_window_onto_soc_memory_and_writes_land_there() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let m = machine();
    let [a, ..] = four_regions(&m);
    let p = translate(a);
    // The first reusable window, at the offset of a in its 16 MiB region.
    assert_eq!(p as u64, 0x0700_0000 + (a & (REFILL_WINDOW_SIZE - 1)));
    assert_eq!(m.windows()[0], Some(a & !(REFILL_WINDOW_SIZE - 1)));
    // SAFETY: p is in the window the model just mapped onto a's region.
    unsafe {
        assert_eq!(p.read_volatile(), 0xA0A0_0000, "reads SoC memory");
        p.add(1).write_volatile(0x1234_5678);
    }
    let mut back = [0u8; 4];
    m.read(a + 4, &mut back).unwrap();
    assert_eq!(
        u32::from_le_bytes(back),
        0x1234_5678,
        "a write through the window lands in SoC memory"
    );
    // MEM_WINDOW3 holds the region's base, high word then low word stored.
    let base = a & !(REFILL_WINDOW_SIZE - 1);
    assert_eq!(
        m.stores(),
        [
            Store {
                addr: u64::from(MEM_WINDOW3.hi()),
                value: (base >> 32) as u32
            },
            Store {
                addr: u64::from(MEM_WINDOW3.lo()),
                value: base as u32
            },
        ]
    );
    assert_eq!(m.register(MEM_WINDOW3.lo()), base as u32);
    assert_eq!(m.register(MEM_WINDOW3.hi()), (base >> 32) as u32);
}

#[test]
fn a_pointer_kept_across_three_more_refills_sees_another_region() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let m = machine();
    let [a, b, c, d] = four_regions(&m);
    let kept = translate(a);
    // SAFETY: every pointer here is in a window the model maps.
    unsafe {
        assert_eq!(kept.read_volatile(), 0xA0A0_0000);
        // Three more regions: windows 1 and 2, then window 0 again (round robin).
        for (addr, window) in [(b, 0x0900_0000u64), (c, 0x0A00_0000), (d, 0x0700_0000)] {
            assert_eq!(translate(addr) as u64 >> 24, window >> 24);
        }
        // The transient-reference hazard: the kept pointer now reads d's region.
        assert_eq!(
            kept.read_volatile(),
            0xA0A0_0003,
            "the stale pointer sees d"
        );
        // A write through it lands in d, not in a.
        kept.write_volatile(0xDEAD_BEEF);
    }
    let word = |soc| {
        let mut w = [0u8; 4];
        m.read(soc, &mut w).unwrap();
        u32::from_le_bytes(w)
    };
    assert_eq!(word(a), 0xA0A0_0000, "a is untouched");
    assert_eq!(word(d), 0xDEAD_BEEF);
    // Translating a again refills (window 1) and shows a's memory, written or not.
    let again = translate(a);
    // SAFETY: as above.
    assert_eq!(unsafe { again.read_volatile() }, 0xA0A0_0000);
    let c = m.counters();
    assert_eq!(c.refills[..3], [2, 2, 1]);
    assert_eq!(c.register_writes, 10);
    assert_eq!(c.remaps, 5);
    let regs: Vec<u64> = m.stores().iter().map(|s| s.addr).collect();
    let pair = |r: neuron_translate::regs::RegPair| [u64::from(r.hi()), u64::from(r.lo())];
    assert_eq!(
        regs,
        [
            pair(MEM_WINDOW3),
            pair(MEM_WINDOW5),
            pair(MEM_WINDOW6),
            pair(MEM_WINDOW3),
            pair(MEM_WINDOW5)
        ]
        .concat()
    );
}

#[test]
fn hits_are_counted_per_slot_and_pinned_windows_show_sbuf_and_hbm_scratch() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let m = machine();
    let config = m.config();
    let sbuf = m.sbuf();
    m.write(sbuf + 0x100, &7u32.to_le_bytes()).unwrap();
    let p = translate(sbuf + 0x100);
    assert_eq!(p as u64, 0x8000_0100);
    // SAFETY: the pinned SBUF window.
    assert_eq!(unsafe { p.read_volatile() }, 7);
    let scratch = config.hbm_scratch + 0x40;
    m.write(scratch, &9u32.to_le_bytes()).unwrap();
    // SAFETY: the pinned HBM scratch window.
    assert_eq!(unsafe { translate(scratch).read_volatile() }, 9);
    let [a, ..] = four_regions(&m);
    translate(a);
    translate(a + 8);
    let c = m.counters();
    assert_eq!(c.translates, 4);
    assert_eq!(c.hits, [1, 0, 0, 1, 1]);
    assert_eq!(c.refills, [1, 0, 0, 0, 0]);
    assert_eq!(
        c.register_writes, 2,
        "pinned windows never touch a register"
    );
}

#[test]
fn the_store_log_keeps_the_newest_stores_and_no_more() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let m = machine();
    let regions = four_regions(&m);
    // Two stores a refill: enough refills to pass the log's bound by some.
    let refills = STORE_LOG / 2 + 100;
    for k in 0..refills {
        translate(regions[k % 4]);
    }
    let c = m.counters();
    assert_eq!(
        c.refills.iter().sum::<u64>(),
        refills as u64,
        "every call refilled"
    );
    assert_eq!(c.register_writes, 2 * refills as u64, "every store counted");
    let log = m.stores();
    assert_eq!(log.len(), STORE_LOG, "the log is bounded");
    // The newest last: the last refill's two words, high then low.
    let base = regions[(refills - 1) % 4] & !(REFILL_WINDOW_SIZE - 1);
    let last = &log[STORE_LOG - 2..];
    assert_eq!(
        [last[0].value, last[1].value],
        [(base >> 32) as u32, base as u32]
    );
    // Reset empties it.
    m.reset_counters();
    assert!(m.stores().is_empty());
    assert_eq!(m.counters().translates, 0);
}

#[test]
fn the_trace_records_every_call_in_the_format_ntx_replays() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let m = machine();
    let [a, b, ..] = four_regions(&m);
    let path = nt_support::tools::scratch("host_model_trace").join("trace.txt");
    m.trace_to(&path).unwrap();
    translate(a);
    let mut span = 0;
    // SAFETY: the initialised table.
    unsafe { neuron_translate_span(neuron_translate_ctx().cast(), b, 4096, &mut span) };
    assert_eq!(span, 4096);
    translate(a + 16);
    m.trace_stop().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        parse(&text).unwrap(),
        [
            Event::Translate(a),
            Event::Span(b, 4096),
            Event::Translate(a + 16)
        ]
    );
    let c = m.counters();
    assert_eq!((c.refills[0], c.refills[1], c.hits[0]), (1, 1, 1));
}

#[test]
fn soc_addresses_no_region_backs_fault_and_bad_requests_are_errors() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let m = machine();
    // Far outside HBM and SBUF: the refill happens, the window shows nothing.
    let nowhere = 0x7F_0000_0000u64;
    let p = translate(nowhere);
    assert_eq!(m.windows()[0], Some(nowhere));
    let died = nt_support::in_child(|| {
        // SAFETY: deliberately touches an inaccessible window: the child dies.
        unsafe { p.read_volatile() as i32 }
    });
    assert_eq!(
        died,
        Err(libc::SIGSEGV),
        "touching unbacked SoC memory faults"
    );
    assert!(matches!(
        m.write(nowhere, &[1]),
        Err(SimError::Unbacked { .. })
    ));
    assert!(matches!(m.alloc(1 << 40, 1), Err(SimError::OutOfMemory(_))));
    assert!(matches!(m.alloc(8, 3), Err(SimError::BadConfig(_))));
    // One machine at a time.
    assert_eq!(
        Machine::start(Config::default()).unwrap_err(),
        SimError::AlreadyRunning
    );
    drop(m);
    // Stopped: the register page is gone, and a new machine can start.
    let again = Machine::start(Config::default()).expect("restart");
    drop(again);
    // A range something else holds is refused, and nothing is left claimed.
    let page = nt_support::nx::RegisterPage::map();
    assert!(matches!(
        Machine::start(Config::default()),
        Err(SimError::AddressTaken { .. })
    ));
    drop(page);
    drop(Machine::start(Config::default()).expect("everything was given back"));
    // A configuration it cannot simulate.
    let overlapping = Config {
        engine_base: Config::default().hbm_base + (41 << 20),
        ..Config::default()
    };
    assert!(matches!(
        Machine::start(overlapping),
        Err(SimError::BadConfig(_))
    ));
}

#[test]
fn the_c_api_reports_failures_with_a_reason() {
    use neuron_translate::model::ffi::*;
    let _g = GLOBAL_LOCK.lock().unwrap();
    let last = || {
        let p = neuron_translate_host_last_error();
        assert!(!p.is_null());
        // SAFETY: a NUL-terminated string the library keeps until the next failure.
        unsafe { std::ffi::CStr::from_ptr(p) }
            .to_string_lossy()
            .into_owned()
    };
    assert_eq!(neuron_translate_host_stop(), -1);
    assert_eq!(last(), "no host model is running");
    let c = Config::default();
    assert_eq!(
        neuron_translate_host_start(c.engine_base, c.hbm_base, c.hbm_size, c.hbm_scratch),
        0
    );
    assert_eq!(
        neuron_translate_host_start(c.engine_base, c.hbm_base, c.hbm_size, c.hbm_scratch),
        -1
    );
    assert_eq!(last(), "a host model is already running in this process");
    let mut soc = 0;
    // SAFETY: valid pointers and lengths throughout.
    unsafe {
        assert_eq!(neuron_translate_host_alloc(64, 64, &mut soc), 0);
        assert_eq!(soc, c.hbm_base);
        let word = 0x5555_AAAAu32;
        assert_eq!(
            neuron_translate_host_write(soc, (&word as *const u32).cast(), 4),
            0
        );
        let mut back = 0u32;
        assert_eq!(
            neuron_translate_host_read(soc, (&mut back as *mut u32).cast(), 4),
            0
        );
        assert_eq!(back, word);
        assert_eq!(
            neuron_translate_host_read(0x10, (&mut back as *mut u32).cast(), 4),
            -1
        );
        assert!(last().contains("is in no simulated region"), "{}", last());
        let mut counters = std::mem::zeroed();
        assert_eq!(neuron_translate_host_counters(&mut counters), 0);
        assert_eq!(counters, neuron_translate::model::Counters::default());
        assert_eq!(
            neuron_translate_host_trace(c"/nonexistent-dir/trace".as_ptr()),
            -1
        );
        assert!(last().contains("/nonexistent-dir/trace"));
    }
    assert_eq!(neuron_translate_host_stop(), 0);
    assert_eq!(neuron_translate_host_stop(), -1);
}

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
    let windows = [MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6];
    let block = |m: &Machine| -> Vec<u32> {
        windows
            .iter()
            .flat_map(|w| [m.register(w.lo()), m.register(w.hi())])
            .collect()
    };
    // The host model: every result, the window registers after each call, and the
    // stores each call made.
    let mut host = Vec::new();
    let mut previous = block(&m);
    for ev in &events {
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
        let now = block(&m);
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
    // SAFETY: the table init built.
    let host_table = unsafe { *neuron_translate_ctx() }.to_bytes();
    let counters = m.counters();
    drop(m);
    assert!(
        counters.refills.iter().sum::<u64>() > 20,
        "the trace exercises refills: {counters:?}"
    );

    // The device: the same events through the unmodified object under qemu.
    let mut h = format!(
        "#define NT_TRACE_ENGINE_BASE {:#x}ull\n#define NT_TRACE_HBM_SCRATCH {:#x}ull\n\
         #define NT_TRACE_EVENTS {}\n\
         static const struct {{ unsigned is_span; unsigned long long addr, len; }} nt_trace[] = {{\n",
        config.engine_base,
        config.hbm_scratch,
        events.len()
    );
    for ev in &events {
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
    assert_eq!(calls.len(), events.len());
    for (i, ((local, span, regs), dev)) in host.iter().zip(&calls).enumerate() {
        let want: Vec<u64> = [*local, *span]
            .into_iter()
            .chain(regs.iter().map(|&w| u64::from(w)))
            .collect();
        assert_eq!(&want, dev, "call {i} ({}): host model vs device", events[i]);
    }
    let table_line = text
        .lines()
        .find_map(|l| l.strip_prefix("table "))
        .expect("the final table");
    let device_table: Vec<u8> = table_line
        .split("0x")
        .filter(|w| !w.is_empty())
        .map(|w| hex(w) as u8)
        .collect();
    assert_eq!(device_table, host_table.to_vec(), "the final table");
}
