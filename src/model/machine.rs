//! The running model: its one state behind its one lock ([`MODEL`]), and [`Machine`], the
//! handle that starts it and stops it when dropped. The C API (`ffi.rs`) works on the same
//! state through the same lock.

use core::sync::atomic::{AtomicBool, Ordering};
use std::collections::VecDeque;
use std::ffi::CString;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::string::ToString;
use std::sync::{Mutex, MutexGuard};
use std::vec::Vec;

use super::keep::{spanned_bytes, views_for, Keeper};
use super::memory::{map, unmap, Backing, Claimed, Parking, Soc, Window, PAGE};
use super::tally::{add, Tally};
use super::trace::{Event, TRACE_HEADER};
use super::{Config, Counters, Memory, SimError, Store};
use crate::init::{sbuf_window, APERTURES, PINNED_WINDOW_SIZE};
use crate::layout::{TranslationCtx, RECORDS};
use crate::regs::{ENGINE_BASE_ADDR, NX_REG_BASE, NX_REG_BLOCK_SIZE};

/// How many register stores the model keeps (two per refill): the log is bounded, the
/// oldest go first.
pub const STORE_LOG: usize = 4096;

/// The model: the flags and counts the library's hit path reads without the lock, and the
/// rest behind it.
pub(super) struct Model {
    /// A machine runs: the library reports to it.
    active: AtomicBool,
    /// A trace file is open: every call takes the lock to write its line.
    tracing: AtomicBool,
    pub(super) tally: Tally,
    inner: Mutex<Inner>,
}

/// What the lock guards.
pub(super) struct Inner {
    /// The running machine's state.
    pub(super) state: Option<State>,
    /// The C API started the running machine (and so only it stops it).
    pub(super) c_api: bool,
    /// Why the C API's last failing call failed.
    pub(super) last_error: Option<CString>,
}

/// The one model of this process.
pub(super) static MODEL: Model = Model {
    active: AtomicBool::new(false),
    tracing: AtomicBool::new(false),
    tally: Tally::new(),
    inner: Mutex::new(Inner {
        state: None,
        c_api: false,
        last_error: None,
    }),
};

impl Model {
    pub(super) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[inline(always)]
    pub(super) fn active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    #[inline(always)]
    pub(super) fn tracing(&self) -> bool {
        self.tracing.load(Ordering::Relaxed)
    }
}

/// A running machine's state.
pub(super) struct State {
    soc: Soc,
    windows: Vec<Window>,
    /// Which views to keep (keep.rs), and where they are kept.
    keeper: Keeper,
    parking: Parking,
    /// The last [`STORE_LOG`] register stores.
    stores: VecDeque<Store>,
    /// Stores since the last translate call: a refill happened in it.
    pub(super) pending_refill: Option<u64>,
    trace: Option<BufWriter<File>>,
    next_hbm: u64,
    config: Config,
}

impl State {
    /// Shows SBUF and the HBM scratch range in the pinned windows from the start, as the
    /// initial table's tags say.
    fn show_pinned(&mut self) -> Result<(), SimError> {
        let pinned = [
            (3, self.soc.sbuf()),
            (4, self.config.hbm_scratch & !(PINNED_WINDOW_SIZE - 1)),
        ];
        for (slot, soc) in pinned {
            let w = self.windows[slot];
            self.soc.show(&w, Some(soc))?;
            self.windows[slot].soc = Some(soc);
        }
        Ok(())
    }

    /// A refill stored `tag` to the register block whose `_LO` is at `reg`.
    pub(super) fn on_store(&mut self, reg: usize, tag: u64) {
        let lo = reg as u64;
        for store in [
            Store {
                addr: lo + 4,
                value: (tag >> 32) as u32,
            },
            Store {
                addr: lo,
                value: tag as u32,
            },
        ] {
            if self.stores.len() == STORE_LOG {
                self.stores.pop_front();
            }
            self.stores.push_back(store);
        }
        add(&MODEL.tally.register_writes, 2);
        self.pending_refill = Some(lo);
        // The low word completes the register: the window moves.
        if let Some(i) = self.windows.iter().position(|w| w.register == Some(lo)) {
            self.move_window(i, tag);
        }
    }

    /// Moves reusable window `i` onto `tag`: the outgoing view kept or replaced, the
    /// incoming one brought back or mapped anew, as the keeper decides (keep.rs).
    fn move_window(&mut self, i: usize, tag: u64) {
        let w = self.windows[i];
        let m = self.keeper.refill(i, tag, MODEL.tally.hits_of(i), w.whole);
        let tally = &MODEL.tally;
        if let Some(e) = m.evict {
            if self.parking.evict(e).is_ok() {
                add(&tally.evicted, 1);
            }
        }
        if let Some(p) = m.park {
            match self.parking.park(w.nx, p) {
                Ok(()) => add(&tally.parked, 1),
                Err(_) => self.keeper.forget(p),
            }
        }
        let reused = m.reuse && self.parking.unpark(tag, w.nx).unwrap_or(false);
        // A window programmed onto the base it already shows (a kept core's next call
        // refills its first window so: `_init_translate_ctx` forgot it) keeps its view and
        // its page tables: the same file at the same offset, nothing to map.
        let same = !reused && m.park.is_none() && w.soc == Some(tag);
        if reused || same || self.soc.show(&w, Some(tag)).is_ok() {
            self.windows[i].soc = Some(tag);
            self.windows[i].whole = reused || self.soc.backs_whole(tag, w.size);
            add(&tally.remaps, 1);
            add(&tally.reused, u64::from(reused));
        }
    }

    /// A span call of `len` bytes finished: a refill of the slot whose register it just
    /// stored, or a hit; the bytes it spans count as touched through that window.
    pub(super) fn on_span(&mut self, table: &TranslationCtx, addr: u64, len: u64) {
        let found = table.find(addr);
        if let Some(k) = found {
            self.keeper
                .spanned(k, spanned_bytes(&table.records[k], addr, len));
        }
        match self.pending_refill.take() {
            Some(reg) => {
                let slot = table
                    .records
                    .iter()
                    .position(|r| r.reg_location as usize as u64 == reg && r.matches(addr));
                MODEL.tally.count(false, slot);
            }
            None => MODEL.tally.count(true, found),
        }
    }

    /// Writes `event` to the trace file, if one is open.
    pub(super) fn trace(&mut self, event: Event) {
        if let Some(t) = &mut self.trace {
            let _ = writeln!(t, "{event}");
        }
    }

    /// See [`Machine::alloc`].
    pub(super) fn alloc(&mut self, size: u64, align: u64) -> Result<u64, SimError> {
        if !align.is_power_of_two() {
            return Err(SimError::BadConfig(std::format!(
                "alignment {align} is not a power of two"
            )));
        }
        let start = self
            .next_hbm
            .checked_add(align - 1)
            .map(|v| v & !(align - 1));
        let end = start.and_then(|a| a.checked_add(size));
        match (start, end) {
            (Some(a), Some(e)) if e <= self.config.hbm_base + self.config.hbm_size => {
                self.next_hbm = e;
                Ok(a)
            }
            _ => Err(SimError::OutOfMemory(size)),
        }
    }

    /// See [`Machine::write`].
    pub(super) fn write(&self, soc: u64, data: &[u8]) -> Result<(), SimError> {
        self.soc.write(soc, data)
    }

    /// See [`Machine::read`].
    pub(super) fn read(&self, soc: u64, buf: &mut [u8]) -> Result<(), SimError> {
        self.soc.read(soc, buf)
    }

    /// See [`Machine::copy`].
    pub(super) fn copy(&self, from: u64, to: u64, len: u64) -> Result<(), SimError> {
        self.soc.copy(from, to, len)
    }

    /// See [`Machine::memory`].
    pub(super) fn memory(&self) -> Memory {
        let load = |c: &core::sync::atomic::AtomicU64| c.load(Ordering::Relaxed);
        let t = &MODEL.tally;
        let kept = self.parking.kept() as u64;
        Memory {
            kept_views: kept,
            keep_limit_views: self.keeper.limit() as u64,
            kept_bytes: kept * crate::init::REFILL_WINDOW_SIZE,
            soc_resident_bytes: self.soc.resident(),
            parked: load(&t.parked),
            reused: load(&t.reused),
            evicted: load(&t.evicted),
        }
    }

    /// See [`Machine::reset_counters`].
    fn reset_counters(&mut self) {
        self.stores.clear();
        MODEL.tally.reset();
    }

    /// See [`Machine::trace_to`].
    pub(super) fn trace_to(&mut self, path: &std::path::Path) -> Result<(), SimError> {
        let f = File::create(path)
            .map_err(|e| SimError::Os(std::format!("{}: {e}", path.display())))?;
        let mut w = BufWriter::new(f);
        writeln!(w, "{TRACE_HEADER}").map_err(|e| SimError::Os(e.to_string()))?;
        self.trace = Some(w);
        MODEL.tracing.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// See [`Machine::trace_stop`].
    pub(super) fn trace_stop(&mut self) -> Result<(), SimError> {
        MODEL.tracing.store(false, Ordering::SeqCst);
        match self.trace.take() {
            Some(mut w) => w.flush().map_err(|e| SimError::Os(e.to_string())),
            None => Ok(()),
        }
    }
}

impl Config {
    /// SBUF's SoC base (from the engine base), after checking that the configuration can
    /// be simulated: HBM page-aligned, not empty, not wrapping, and apart from SBUF.
    fn sbuf_base(&self) -> Result<u64, SimError> {
        if !self.hbm_base.is_multiple_of(PAGE)
            || !self.hbm_size.is_multiple_of(PAGE)
            || self.hbm_size == 0
        {
            return Err(SimError::BadConfig(std::format!(
                "HBM {:#x} + {:#x} must be page-aligned and not empty",
                self.hbm_base,
                self.hbm_size
            )));
        }
        let sbuf_base = sbuf_window(self.engine_base) & !(PINNED_WINDOW_SIZE - 1);
        let hbm_end = self.hbm_base.checked_add(self.hbm_size);
        if hbm_end.is_none_or(|e| sbuf_base < e && self.hbm_base < sbuf_base + PINNED_WINDOW_SIZE) {
            return Err(SimError::BadConfig(std::format!(
                "SBUF at {sbuf_base:#x} (from the engine base) overlaps HBM"
            )));
        }
        Ok(sbuf_base)
    }
}

/// Maps the register block as plain read-write memory (the library's stores land in it)
/// over its claimed range, with `ENGINE_BASE_ADDR` holding `engine_base`.
fn map_register_block(engine_base: u64) -> Result<(), SimError> {
    map(
        u64::from(NX_REG_BASE),
        u64::from(NX_REG_BLOCK_SIZE),
        Backing::Memory,
        true,
    )?;
    let words = NX_REG_BASE as usize as *mut u32;
    let index = |addr: u32| ((addr - NX_REG_BASE) / 4) as usize;
    // SAFETY: both words are inside the page just mapped.
    unsafe {
        words
            .add(index(ENGINE_BASE_ADDR.lo()))
            .write_volatile(engine_base as u32);
        words
            .add(index(ENGINE_BASE_ADDR.hi()))
            .write_volatile((engine_base >> 32) as u32);
    }
    Ok(())
}

/// Starts a machine in `inner`: maps the register block (with `ENGINE_BASE_ADDR`), creates
/// SBUF and the HBM region, and maps the five windows: the pinned ones onto SBUF and the
/// HBM scratch range, the reusable ones inaccessible until a refill programs them.
pub(super) fn start(inner: &mut Inner, config: Config) -> Result<(), SimError> {
    if inner.state.is_some() {
        return Err(SimError::AlreadyRunning);
    }
    let sbuf_base = config.sbuf_base()?;
    let soc = Soc::new(sbuf_base, config.hbm_base, config.hbm_size)?;
    let windows: Vec<Window> = APERTURES
        .iter()
        .map(|a| Window {
            nx: u64::from(a.window),
            size: a.size,
            register: a.register.map(|r| u64::from(r.lo())),
            soc: None,
            whole: false,
        })
        .collect();
    // Claim every range first; until the machine is up, a failure gives back what was
    // claimed.
    let mut claimed = Claimed(Vec::new());
    let claims = core::iter::once((u64::from(NX_REG_BASE), u64::from(NX_REG_BLOCK_SIZE)))
        .chain(windows.iter().map(|w| (w.nx, w.size)));
    for (addr, size) in claims {
        map(addr, size, Backing::Inaccessible, false)?;
        claimed.0.push((addr, size));
    }
    map_register_block(config.engine_base)?;
    // No more views than there are regions of a window's size to show.
    let regions =
        config.hbm_size.saturating_add(PINNED_WINDOW_SIZE) / crate::init::REFILL_WINDOW_SIZE + 1;
    let views = views_for(config.keep).min(usize::try_from(regions).unwrap_or(usize::MAX));
    let mut state = State {
        soc,
        windows,
        keeper: Keeper::new(views),
        parking: Parking::new(views)?,
        stores: VecDeque::with_capacity(STORE_LOG),
        pending_refill: None,
        trace: None,
        next_hbm: config.hbm_base,
        config,
    };
    state.show_pinned()?;
    // Up: from here on, stopping unmaps.
    claimed.0.clear();
    inner.state = Some(state);
    MODEL.tally.reset();
    MODEL.active.store(true, Ordering::SeqCst);
    Ok(())
}

/// Stops the machine in `inner`, if one runs: flushes the trace and unmaps the register
/// block, the windows and SoC memory.
pub(super) fn stop(inner: &mut Inner) {
    MODEL.active.store(false, Ordering::SeqCst);
    MODEL.tracing.store(false, Ordering::SeqCst);
    inner.c_api = false;
    if let Some(mut s) = inner.state.take() {
        if let Some(mut t) = s.trace.take() {
            let _ = t.flush();
        }
        unmap(u64::from(NX_REG_BASE), u64::from(NX_REG_BLOCK_SIZE));
        for w in &s.windows {
            unmap(w.nx, w.size);
        }
    }
}

/// The running host model, started from Rust. Dropping it unmaps the register block, the
/// windows and SoC memory.
#[derive(Debug)]
pub struct Machine {
    _one: (),
}

impl Machine {
    /// Starts the model: maps the register block (with `ENGINE_BASE_ADDR`), creates SBUF
    /// and the HBM region, and maps the five windows: the pinned ones onto SBUF and the HBM
    /// scratch range, the reusable ones inaccessible until a refill programs them.
    pub fn start(config: Config) -> Result<Machine, SimError> {
        start(&mut MODEL.lock(), config)?;
        Ok(Machine { _one: () })
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut g = MODEL.lock();
        // A Machine exists only while the state does.
        f(g.state.as_mut().expect("the machine's state"))
    }

    /// The configuration it runs.
    pub fn config(&self) -> Config {
        self.with(|s| s.config)
    }

    /// SoC address of SBUF (the first byte of the pinned SBUF window).
    pub fn sbuf(&self) -> u64 {
        self.with(|s| s.soc.sbuf())
    }

    /// The memory file behind the simulated HBM (offset 0 is the configuration's
    /// `hbm_base`), for another process to map the same memory: a descriptor the machine
    /// owns, valid while it runs.
    pub fn hbm_fd(&self) -> i32 {
        self.with(|s| s.soc.hbm_fd())
    }

    /// Allocates `size` bytes of HBM aligned to `align` (a power of two, at least 1); the
    /// memory reads as zeros.
    pub fn alloc(&self, size: u64, align: u64) -> Result<u64, SimError> {
        self.with(|s| s.alloc(size, align))
    }

    /// Writes `data` to SoC memory at `soc` (not through a window).
    pub fn write(&self, soc: u64, data: &[u8]) -> Result<(), SimError> {
        self.with(|s| s.write(soc, data))
    }

    /// Reads SoC memory at `soc` into `buf` (not through a window).
    pub fn read(&self, soc: u64, buf: &mut [u8]) -> Result<(), SimError> {
        self.with(|s| s.read(soc, buf))
    }

    /// Copies `len` bytes of SoC memory from `from` to `to` (one region, no overlap), not
    /// through a window and without a buffer in this process.
    pub fn copy(&self, from: u64, to: u64, len: u64) -> Result<(), SimError> {
        self.with(|s| s.copy(from, to, len))
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        MODEL.tally.snapshot()
    }

    /// What it keeps and holds: kept views, the limit, SoC memory in use.
    pub fn memory(&self) -> Memory {
        self.with(|s| s.memory())
    }

    /// Zeroes the counters and forgets the logged stores.
    pub fn reset_counters(&self) {
        self.with(State::reset_counters);
    }

    /// The register stores since the start (or the last reset), in order: the last
    /// [`STORE_LOG`] of them.
    pub fn stores(&self) -> Vec<Store> {
        self.with(|s| s.stores.iter().copied().collect())
    }

    /// The SoC base each of the five NX windows shows now (`None`: not yet programmed).
    pub fn windows(&self) -> [Option<u64>; RECORDS] {
        self.with(|s| {
            let mut out = [None; RECORDS];
            for (o, w) in out.iter_mut().zip(&s.windows) {
                *o = w.soc;
            }
            out
        })
    }

    /// The 32-bit register at NX-local `addr` of the block.
    pub fn register(&self, addr: u32) -> u32 {
        assert!(
            (NX_REG_BASE..NX_REG_BASE + NX_REG_BLOCK_SIZE).contains(&addr)
                && addr.is_multiple_of(4),
            "{addr:#x} is not a register of the block"
        );
        // SAFETY: inside the mapped register page, aligned.
        unsafe { (addr as usize as *const u32).read_volatile() }
    }

    /// Writes every later translate call to `path` (the format of [`super::trace`]),
    /// replacing the file.
    pub fn trace_to(&self, path: &std::path::Path) -> Result<(), SimError> {
        self.with(|s| s.trace_to(path))
    }

    /// Stops tracing and flushes the file.
    pub fn trace_stop(&self) -> Result<(), SimError> {
        self.with(State::trace_stop)
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        stop(&mut MODEL.lock());
    }
}
