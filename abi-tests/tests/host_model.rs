//! The host model (feature `sim`): the unmodified `_init_translate_ctx` and
//! `neuron_translate` against a simulated NX register block and SoC memory, with windows
//! that really move. One machine per process at a time: every test holds GLOBAL_LOCK.

use neuron_translate::abi::{neuron_translate_ctx, neuron_translate_span};
use neuron_translate::init::REFILL_WINDOW_SIZE;
use neuron_translate::model::trace::{parse, Event};
use neuron_translate::model::{Config, Machine, SimError, Store, STORE_LOG};
use neuron_translate::regs::{MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6};
use nt_support::GLOBAL_LOCK;

mod model_support;
use model_support::{four_regions, machine, translate};

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

/// The resident bytes of the mapping that starts at `addr` (`/proc/self/smaps`).
fn rss_of_mapping_at(addr: u64) -> u64 {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut lines = smaps.lines().skip_while(|l| {
        let start = l.split('-').next().unwrap_or("");
        u64::from_str_radix(start, 16).ok() != Some(addr)
    });
    assert!(lines.next().is_some(), "a mapping at {addr:#x}");
    let rss = lines.find(|l| l.starts_with("Rss:")).unwrap();
    rss.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

#[test]
fn a_window_programmed_onto_the_region_it_shows_keeps_its_view_and_pages() {
    let _g = GLOBAL_LOCK.lock().unwrap();
    let m = machine();
    let [a, ..] = four_regions(&m);
    let p = translate(a);
    // SAFETY: p is in the window the model mapped onto a's region.
    unsafe { p.add(1).write_volatile(7) };
    assert!(
        rss_of_mapping_at(0x0700_0000) >= 4096,
        "the page written is mapped"
    );
    // The table forgotten (as a kept core's next call starts), a refill onto the same base.
    neuron_translate::abi::_init_translate_ctx();
    let again = translate(a);
    assert_eq!(again, p);
    assert_eq!(m.windows()[0], Some(a & !(REFILL_WINDOW_SIZE - 1)));
    assert!(
        rss_of_mapping_at(0x0700_0000) >= 4096,
        "the view was not mapped anew: its page is still mapped"
    );
    // SAFETY: as above.
    assert_eq!(unsafe { again.add(1).read_volatile() }, 7);
    assert_eq!(
        m.counters().remaps,
        2,
        "it still counts as the window's move"
    );
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
