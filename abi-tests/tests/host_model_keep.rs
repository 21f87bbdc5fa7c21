//! The host model's kept views (docs/host-model.md, "Kept views"): a region the kernel
//! streamed through comes back with its view when a refill brings it back; one touched at
//! a single element does not; what is kept stays within the limit, the oldest going first;
//! and through all of it the window shows the region its register names, so a pointer
//! kept across refills sees another region, and every write reaches SoC memory.

use neuron_translate::abi::{_init_translate_ctx, neuron_translate_ctx, neuron_translate_span};
use neuron_translate::init::REFILL_WINDOW_SIZE;
use neuron_translate::model::keep::{KEEP_DEFAULT, WORTH_KEEPING};
use neuron_translate::model::{Config, Machine, Memory};
use nt_support::start_exit::set_hbm_scratch;
use nt_support::GLOBAL_LOCK;

mod model_support;
use model_support::translate;

/// A machine keeping `keep` bytes of views, with the table initialised.
fn keeping(keep: u64) -> Machine {
    let config = Config {
        keep,
        ..Config::default()
    };
    let m = Machine::start(config).expect("the host model starts");
    set_hbm_scratch(config.hbm_scratch);
    _init_translate_ctx();
    m
}

/// `n` HBM buffers, each the whole of a 16 MiB region of its own.
fn regions(m: &Machine, n: usize) -> Vec<u64> {
    (0..n)
        .map(|_| m.alloc(REFILL_WINDOW_SIZE, REFILL_WINDOW_SIZE).unwrap())
        .collect()
}

/// Streams through the first `bytes` of `region` as a kernel does: one span call, then a
/// store to every page of what it spans, each page's word `tag + page`.
fn stream(region: u64, bytes: u64, tag: u32) {
    let mut span = 0;
    // SAFETY: the table init built; its registers are the model's block.
    let p =
        unsafe { neuron_translate_span(neuron_translate_ctx().cast(), region, bytes, &mut span) };
    assert_eq!(span, bytes, "one window spans it");
    let p = p.cast::<u32>();
    for page in 0..bytes / 4096 {
        // SAFETY: inside the window the span call just showed.
        unsafe {
            p.add(page as usize * 1024)
                .write_volatile(tag + page as u32)
        };
    }
}

fn word(m: &Machine, soc: u64) -> u32 {
    let mut b = [0u8; 4];
    m.read(soc, &mut b).unwrap();
    u32::from_le_bytes(b)
}

#[test]
fn a_streamed_region_comes_back_with_its_view_and_every_write_reaches_soc_memory() {
    let _g = GLOBAL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let m = keeping(KEEP_DEFAULT);
    let r = regions(&m, 4);
    // Two passes over four regions through three windows: every call refills, and each
    // region comes back once.
    for pass in 0..2u32 {
        for (k, &region) in r.iter().enumerate() {
            stream(
                region,
                WORTH_KEEPING,
                0x1000_0000 * (pass + 1) + (k as u32) * 0x10_0000,
            );
        }
    }
    // Refills 4 to 8 each keep the outgoing view; the last four each bring one back.
    let mem: Memory = m.memory();
    assert_eq!(
        mem.parked, 5,
        "every outgoing view was streamed through: {mem:?}"
    );
    assert_eq!(
        mem.reused, 4,
        "the second pass brought each region back: {mem:?}"
    );
    assert_eq!((mem.kept_views, mem.evicted), (1, 0), "{mem:?}");
    assert_eq!(mem.kept_bytes, REFILL_WINDOW_SIZE);
    assert!(mem.soc_resident_bytes >= 4 * WORTH_KEEPING, "{mem:?}");
    for (k, &region) in r.iter().enumerate() {
        for page in [0u64, 17, WORTH_KEEPING / 4096 - 1] {
            let want = 0x2000_0000 + (k as u32) * 0x10_0000 + page as u32;
            assert_eq!(
                word(&m, region + page * 4096),
                want,
                "region {k}, page {page}"
            );
        }
    }
}

#[test]
fn a_pointer_kept_across_refills_sees_the_region_the_window_shows_now() {
    let _g = GLOBAL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let m = keeping(KEEP_DEFAULT);
    let r = regions(&m, 4);
    for (k, &region) in r.iter().enumerate() {
        m.write(region + 8, &(0xB0B0_0000u32 + k as u32).to_le_bytes())
            .unwrap();
    }
    stream(r[0], WORTH_KEEPING, 0);
    let kept = translate(r[0] + 8);
    // Three more regions: window 0 now shows region 3, and region 0's view is kept.
    for &region in &r[1..] {
        stream(region, WORTH_KEEPING, 0);
    }
    assert!(m.memory().kept_views >= 1);
    assert_eq!(
        // SAFETY: the window is mapped; it shows region 3 now.
        unsafe { kept.read_volatile() },
        0xB0B0_0003,
        "the stale pointer sees region 3"
    );
    m.write(r[3] + 8, &0xB0B0_1003u32.to_le_bytes()).unwrap();
    assert_eq!(
        // SAFETY: as above.
        unsafe { kept.read_volatile() },
        0xB0B0_1003,
        "and what is written there"
    );
    // Written while kept, read after it came back.
    m.write(r[0] + 8, &0xC0DE_0000u32.to_le_bytes()).unwrap();
    let back = translate(r[0] + 8);
    // SAFETY: the window the refill just showed.
    assert_eq!(unsafe { back.read_volatile() }, 0xC0DE_0000);
    assert!(m.memory().reused >= 1);
}

#[test]
fn a_view_touched_at_one_element_is_not_kept() {
    let _g = GLOBAL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let m = keeping(KEEP_DEFAULT);
    let r = regions(&m, 4);
    for round in 0..3u32 {
        for &region in &r {
            // SAFETY: the window the refill just showed.
            unsafe { translate(region + 64).write_volatile(round) };
        }
    }
    let mem = m.memory();
    assert_eq!(
        (mem.parked, mem.kept_views, mem.reused),
        (0, 0, 0),
        "{mem:?}"
    );
    assert_eq!(word(&m, r[2] + 64), 2);
}

#[test]
fn what_is_kept_stays_within_the_limit_and_the_oldest_goes() {
    let _g = GLOBAL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let m = keeping(2 * REFILL_WINDOW_SIZE);
    let r = regions(&m, 6);
    for (k, &region) in r.iter().enumerate() {
        stream(region, WORTH_KEEPING, k as u32);
    }
    // Regions 0, 1, 2 were kept as 3, 4, 5 came in; 0 went for 2.
    let mem = m.memory();
    assert_eq!(mem.keep_limit_views, 2);
    assert_eq!(
        (mem.kept_views, mem.parked, mem.evicted),
        (2, 3, 1),
        "{mem:?}"
    );
    // Region 1 comes back kept (3 is kept in its place); region 0 comes back anew, and
    // 2, kept longest ago, goes for 4.
    stream(r[1], WORTH_KEEPING, 0x11);
    let between = m.memory();
    assert_eq!(
        between.reused,
        mem.reused + 1,
        "region 1 came back: {between:?}"
    );
    stream(r[0], WORTH_KEEPING, 0x40);
    let after = m.memory();
    assert_eq!(
        (after.reused, after.evicted, after.kept_views),
        (1, 2, 2),
        "{after:?}"
    );
    assert_eq!(word(&m, r[1]), 0x11);
    assert_eq!(word(&m, r[0] + 4096), 0x41);
    assert_eq!(
        word(&m, r[2] + 3 * 4096),
        5,
        "a dropped view's data stays in SoC memory"
    );
}

#[test]
fn a_limit_of_zero_keeps_nothing_and_the_c_api_reports_the_same() {
    use neuron_translate::model::ffi::{
        neuron_translate_host_memory, neuron_translate_host_start_keeping,
        neuron_translate_host_stop,
    };
    let _g = GLOBAL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let config = Config::default();
    let started = neuron_translate_host_start_keeping(
        config.engine_base,
        config.hbm_base,
        config.hbm_size,
        config.hbm_scratch,
        0,
    );
    assert_eq!(started, 0);
    set_hbm_scratch(config.hbm_scratch);
    _init_translate_ctx();
    for k in 0..5u64 {
        stream(config.hbm_base + k * REFILL_WINDOW_SIZE, WORTH_KEEPING, 0);
    }
    let mut mem = Memory::default();
    // SAFETY: a valid location.
    assert_eq!(unsafe { neuron_translate_host_memory(&mut mem) }, 0);
    assert_eq!(
        (mem.keep_limit_views, mem.kept_views, mem.parked),
        (0, 0, 0),
        "{mem:?}"
    );
    assert!(mem.soc_resident_bytes >= 5 * WORTH_KEEPING);
    assert_eq!(neuron_translate_host_stop(), 0);
    assert_eq!(
        // SAFETY: NULL is refused, and nothing runs any more.
        unsafe { neuron_translate_host_memory(core::ptr::null_mut()) },
        -1
    );
    // SAFETY: `mem` is a live, writable struct of the declared type.
    assert_eq!(unsafe { neuron_translate_host_memory(&mut mem) }, -1);
}

#[test]
fn a_limit_past_what_memory_holds_is_as_many_views_as_there_are_regions() {
    let _g = GLOBAL_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let m = keeping(u64::MAX);
    let c = m.config();
    let regions = (c.hbm_size + 64 * (1 << 20)) / REFILL_WINDOW_SIZE + 1;
    assert_eq!(m.memory().keep_limit_views, regions);
}
