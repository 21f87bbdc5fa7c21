//! The host model of the translation hardware (feature `sim`; Linux on x86_64 and aarch64;
//! never in the device object): custom operators run unmodified on a workstation, with
//! real memory behind the windows.
//!
//! A [`Machine`] maps, at their NX-local addresses in this process:
//!
//! * the NX register block (one page at [`NX_REG_BASE`]), with `ENGINE_BASE_ADDR` set, so
//!   that the unmodified `_init_translate_ctx` reads it;
//! * the five NX windows of the initial table ([`APERTURES`]): the reusable 16 MiB windows
//!   at `0x0700_0000`, `0x0900_0000`, `0x0A00_0000` and the pinned 64 MiB windows at
//!   `0x8000_0000` (SBUF) and `0x8400_0000` (HBM scratch), each a view of simulated SoC
//!   memory.
//!
//! SoC memory is sparse: one `memfd` per region (SBUF, 64 MiB at the address the engine
//! base implies; HBM, the size the configuration declares), so untouched pages cost
//! nothing. When a refill stores a `MEM_WINDOWn` register (high word, then low word), the
//! model remaps that window's NX range onto the new SoC base before `neuron_translate`
//! returns: a write through a translated pointer lands in SoC memory, and a pointer kept
//! across three more refills sees another region, exactly as on the device. SoC addresses
//! no region backs are mapped inaccessible: touching them faults.
//!
//! The library tells the model about each register store and each translate call through
//! two hooks ([`hooks`]), compiled in with this feature only; the model counts hits and
//! refills per slot and register writes, logs the stores, and can write a trace
//! ([`crate::host::trace`]).
//!
//! The addresses are fixed, so one machine runs per process at a time.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::string::{String, ToString};
use std::sync::Mutex;
use std::vec::Vec;
use std::{format, vec};

use crate::host::trace::{Event, TRACE_HEADER};
use crate::init::{sbuf_window, APERTURES, PINNED_WINDOW_SIZE};
use crate::layout::{TranslationCtx, RECORDS};
use crate::regs::{ENGINE_BASE_ADDR, NX_REG_BASE, NX_REG_BLOCK_SIZE};

pub mod ffi;
pub mod hooks;

/// What a [`Machine`] simulates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// `ENGINE_BASE_ADDR`: SBUF is 64 MiB from `engine_base - 41 MiB`, masked to 64 MiB.
    pub engine_base: u64,
    /// First SoC address of the HBM region (page-aligned).
    pub hbm_base: u64,
    /// Its size in bytes (page-aligned); sparse, so gigabytes cost nothing until touched.
    pub hbm_size: u64,
    /// The value `extended_isa::sdk::hbm_scratch` holds; the pinned HBM scratch window
    /// maps the 64 MiB around it. The model does not define the symbol: the program does.
    pub hbm_scratch: u64,
}

impl Default for Config {
    /// [`crate::host::model_defaults`].
    fn default() -> Self {
        use crate::host::model_defaults as d;
        Config {
            engine_base: d::ENGINE_BASE,
            hbm_base: d::HBM_BASE,
            hbm_size: d::HBM_SIZE,
            hbm_scratch: d::HBM_SCRATCH,
        }
    }
}

/// Why the model cannot do what was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// A machine is already running in this process.
    AlreadyRunning,
    /// No machine is running.
    NotRunning,
    /// An NX address range the model needs is taken by something else in this process.
    AddressTaken {
        /// First address of the range.
        addr: u64,
        /// Its size.
        size: u64,
    },
    /// A configuration the model cannot simulate.
    BadConfig(String),
    /// The HBM region has no room for an allocation of this size.
    OutOfMemory(u64),
    /// A SoC range no region backs.
    Unbacked {
        /// First address.
        addr: u64,
        /// Length.
        len: u64,
    },
    /// The operating system refused (memfd, mmap, a trace file).
    Os(String),
    /// A pointer argument of the C API that must not be NULL is (its name).
    NullPointer(&'static str),
}

impl core::fmt::Display for SimError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SimError::AlreadyRunning => {
                write!(f, "a host model is already running in this process")
            }
            SimError::NotRunning => write!(f, "no host model is running"),
            SimError::AddressTaken { addr, size } => write!(
                f,
                "the NX range {addr:#x}..{:#x} is already mapped in this process",
                addr + size
            ),
            SimError::BadConfig(m) => write!(f, "bad configuration: {m}"),
            SimError::OutOfMemory(n) => write!(f, "no room for {n} more bytes of HBM"),
            SimError::Unbacked { addr, len } => {
                write!(
                    f,
                    "SoC {addr:#x}..{:#x} is in no simulated region",
                    addr + len
                )
            }
            SimError::Os(m) => write!(f, "{m}"),
            SimError::NullPointer(what) => write!(f, "{what} is NULL"),
        }
    }
}

impl std::error::Error for SimError {}

/// What the model has counted since it started, or since the counters were last reset.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Counters {
    /// Calls of `neuron_translate` and `neuron_translate_span`.
    pub translates: u64,
    /// Hits, by slot.
    pub hits: [u64; RECORDS],
    /// Refills, by victim slot.
    pub refills: [u64; RECORDS],
    /// 32-bit stores to window registers (two per refill).
    pub register_writes: u64,
    /// NX windows remapped onto a new SoC base.
    pub remaps: u64,
}

/// One 32-bit register store, as the model saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Store {
    /// NX-local address stored to.
    pub addr: u64,
    /// The value.
    pub value: u32,
}

/// One region of simulated SoC memory.
struct Region {
    base: u64,
    size: u64,
    /// The region's memfd.
    file: File,
}

/// One NX window: where it is, and which SoC range it shows now.
#[derive(Debug, Clone, Copy)]
struct Window {
    nx: u64,
    size: u64,
    /// The `_LO` address of the register that programs it, if any.
    register: Option<u64>,
    soc: Option<u64>,
}

struct State {
    regions: Vec<Region>,
    windows: Vec<Window>,
    /// 32-bit register stores, and windows moved (the calls are counted in
    /// [`hooks::TALLY`]).
    register_writes: u64,
    remaps: u64,
    /// The last [`STORE_LOG`] register stores.
    stores: VecDeque<Store>,
    /// Stores since the last translate call: a refill happened in it.
    pending_refill: Option<u64>,
    trace: Option<BufWriter<File>>,
    next_hbm: u64,
    config: Config,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn lock() -> std::sync::MutexGuard<'static, Option<State>> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

const PAGE: u64 = 4096;

/// How many register stores the model keeps (two per refill): the log is bounded, the
/// oldest go first.
pub const STORE_LOG: usize = 4096;

fn os_error(what: &str) -> SimError {
    SimError::Os(format!("{what}: {}", std::io::Error::last_os_error()))
}

/// What a mapping shows.
#[derive(Clone, Copy)]
enum Backing<'a> {
    /// Nothing: every access faults.
    Inaccessible,
    /// Private read-write memory of its own (the register block).
    Memory,
    /// A region's memfd from this offset, shared, read-write (a window's view).
    File(&'a File, u64),
}

/// Maps `len` bytes at `addr` from `backing`. `fixed` replaces what is there (the model's
/// own mapping); otherwise the range must be free.
fn map(addr: u64, len: u64, backing: Backing<'_>, fixed: bool) -> Result<(), SimError> {
    let anonymous = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS;
    let (prot, flags, raw, off) = match backing {
        Backing::File(fd, off) => (
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd.as_raw_fd(),
            off,
        ),
        Backing::Memory => (libc::PROT_READ | libc::PROT_WRITE, anonymous, -1, 0),
        Backing::Inaccessible => (libc::PROT_NONE, anonymous | libc::MAP_NORESERVE, -1, 0),
    };
    let place = if fixed {
        libc::MAP_FIXED
    } else {
        libc::MAP_FIXED_NOREPLACE
    };
    // SAFETY: maps pages at an address this model owns (fixed: a range it reserved) or
    // that must be free (MAP_FIXED_NOREPLACE fails instead of replacing anything).
    let p = unsafe {
        libc::mmap(
            addr as usize as *mut libc::c_void,
            len as usize,
            prot,
            flags | place,
            raw,
            off as libc::off_t,
        )
    };
    if p == libc::MAP_FAILED {
        let err = std::io::Error::last_os_error();
        if !fixed && err.raw_os_error() == Some(libc::EEXIST) {
            return Err(SimError::AddressTaken { addr, size: len });
        }
        return Err(SimError::Os(format!("mmap {addr:#x} ({len} bytes): {err}")));
    }
    if p as usize as u64 != addr {
        // An old kernel that ignores MAP_FIXED_NOREPLACE maps elsewhere: undo it.
        // SAFETY: `p` is the mapping just made.
        unsafe { libc::munmap(p, len as usize) };
        return Err(SimError::AddressTaken { addr, size: len });
    }
    Ok(())
}

/// Ranges mapped while a machine starts, unmapped again unless it comes up.
struct Claimed(Vec<(u64, u64)>);

impl Drop for Claimed {
    fn drop(&mut self) {
        for &(addr, len) in &self.0 {
            unmap(addr, len);
        }
    }
}

fn unmap(addr: u64, len: u64) {
    // SAFETY: the model unmaps only ranges it mapped.
    unsafe { libc::munmap(addr as usize as *mut libc::c_void, len as usize) };
}

fn memfd(name: &str, size: u64) -> Result<File, SimError> {
    let cname = std::ffi::CString::new(name).map_err(|_| SimError::BadConfig(name.to_string()))?;
    // SAFETY: a valid C string; the returned descriptor is owned below.
    let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(os_error("memfd_create"));
    }
    // SAFETY: `fd` is a new descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let file = File::from(fd);
    file.set_len(size)
        .map_err(|e| SimError::Os(format!("sizing SoC memory: {e}")))?;
    Ok(file)
}

impl State {
    /// Shows SBUF and the HBM scratch range in the pinned windows from the start, as the
    /// initial table's tags say.
    fn show_pinned(&mut self, sbuf_base: u64) -> Result<(), SimError> {
        let pinned = [
            (3, sbuf_base),
            (4, self.config.hbm_scratch & !(PINNED_WINDOW_SIZE - 1)),
        ];
        for (slot, soc) in pinned {
            let w = self.windows[slot];
            self.show(&w, Some(soc))?;
            self.windows[slot].soc = Some(soc);
        }
        Ok(())
    }

    /// Points `w` at the SoC range from `soc`: the parts regions back as shared views of
    /// their memfd, the rest inaccessible. One `mmap` when one region backs it all (a
    /// refill's usual case: each such call costs microseconds, docs/host-model.md).
    fn show(&self, w: &Window, soc: Option<u64>) -> Result<(), SimError> {
        let Some(base) = soc.filter(|b| b.is_multiple_of(PAGE)) else {
            // No SoC range, or a table's tag that is not page-aligned (it cannot be a
            // view): the window is inaccessible.
            return map(w.nx, w.size, Backing::Inaccessible, true);
        };
        let end = base.saturating_add(w.size);
        // What no region backs is inaccessible; when one region backs it all, its view
        // alone replaces what the window showed.
        if !self
            .regions
            .iter()
            .any(|r| base >= r.base && end <= r.base + r.size)
        {
            map(w.nx, w.size, Backing::Inaccessible, true)?;
        }
        for r in &self.regions {
            let lo = base.max(r.base);
            let hi = end.min(r.base + r.size);
            if lo < hi {
                map(
                    w.nx + (lo - base),
                    hi - lo,
                    Backing::File(&r.file, lo - r.base),
                    true,
                )?;
            }
        }
        Ok(())
    }

    fn region(&self, addr: u64, len: u64) -> Result<&Region, SimError> {
        self.regions
            .iter()
            .find(|r| addr >= r.base && addr.checked_add(len).is_some_and(|e| e <= r.base + r.size))
            .ok_or(SimError::Unbacked { addr, len })
    }

    fn on_store(&mut self, reg: usize, tag: u64) {
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
        self.register_writes += 2;
        self.pending_refill = Some(lo);
        // The low word completes the register: the window moves.
        if let Some(i) = self.windows.iter().position(|w| w.register == Some(lo)) {
            let w = self.windows[i];
            if self.show(&w, Some(tag)).is_ok() {
                self.windows[i].soc = Some(tag);
                self.remaps += 1;
            }
        }
    }

    /// A span call finished: a refill of the slot whose register it just stored, or a hit.
    fn on_span(&mut self, table: &TranslationCtx, addr: u64) {
        match self.pending_refill.take() {
            Some(reg) => {
                let slot = table
                    .records
                    .iter()
                    .position(|r| r.reg_location as usize as u64 == reg && r.matches(addr));
                hooks::count(false, slot);
            }
            None => hooks::count(true, table.find(addr)),
        }
    }

    /// Writes `event` to the trace file, if one is open.
    fn trace(&mut self, event: Event) {
        if let Some(t) = &mut self.trace {
            let _ = writeln!(t, "{event}");
        }
    }
}

/// The running host model. Dropping it unmaps the register block, the windows and SoC
/// memory.
#[derive(Debug)]
pub struct Machine {
    _one: (),
}

impl Config {
    /// SBUF's SoC base (from the engine base), after checking that the configuration can
    /// be simulated: HBM page-aligned, not empty, not wrapping, and apart from SBUF.
    fn sbuf_base(&self) -> Result<u64, SimError> {
        if !self.hbm_base.is_multiple_of(PAGE)
            || !self.hbm_size.is_multiple_of(PAGE)
            || self.hbm_size == 0
        {
            return Err(SimError::BadConfig(format!(
                "HBM {:#x} + {:#x} must be page-aligned and not empty",
                self.hbm_base, self.hbm_size
            )));
        }
        let sbuf_base = sbuf_window(self.engine_base) & !(PINNED_WINDOW_SIZE - 1);
        let hbm_end = self.hbm_base.checked_add(self.hbm_size);
        if hbm_end.is_none_or(|e| sbuf_base < e && self.hbm_base < sbuf_base + PINNED_WINDOW_SIZE) {
            return Err(SimError::BadConfig(format!(
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

impl Machine {
    /// Starts the model: maps the register block (with `ENGINE_BASE_ADDR`), creates SBUF
    /// and the HBM region, and maps the five windows: the pinned ones onto SBUF and the HBM
    /// scratch range, the reusable ones inaccessible until a refill programs them.
    pub fn start(config: Config) -> Result<Machine, SimError> {
        let mut guard = lock();
        if guard.is_some() {
            return Err(SimError::AlreadyRunning);
        }
        let sbuf_base = config.sbuf_base()?;
        let regions = vec![
            Region {
                base: sbuf_base,
                size: PINNED_WINDOW_SIZE,
                file: memfd("nx-sbuf", PINNED_WINDOW_SIZE)?,
            },
            Region {
                base: config.hbm_base,
                size: config.hbm_size,
                file: memfd("nx-hbm", config.hbm_size)?,
            },
        ];
        let windows: Vec<Window> = APERTURES
            .iter()
            .map(|a| Window {
                nx: u64::from(a.window),
                size: a.size,
                register: a.register.map(|r| u64::from(r.lo())),
                soc: None,
            })
            .collect();
        // Claim every range first; until the machine is up, a failure gives back what
        // was claimed.
        let mut claimed = Claimed(Vec::new());
        let claims = core::iter::once((u64::from(NX_REG_BASE), u64::from(NX_REG_BLOCK_SIZE)))
            .chain(windows.iter().map(|w| (w.nx, w.size)));
        for (addr, size) in claims {
            map(addr, size, Backing::Inaccessible, false)?;
            claimed.0.push((addr, size));
        }
        map_register_block(config.engine_base)?;
        let mut state = State {
            regions,
            windows,
            register_writes: 0,
            remaps: 0,
            stores: VecDeque::with_capacity(STORE_LOG),
            pending_refill: None,
            trace: None,
            next_hbm: config.hbm_base,
            config,
        };
        state.show_pinned(sbuf_base)?;
        // Up: from here on, dropping the Machine unmaps.
        claimed.0.clear();
        *guard = Some(state);
        hooks::TALLY.reset();
        hooks::set_active(true);
        Ok(Machine { _one: () })
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        let mut g = lock();
        // A Machine exists only while the state does.
        f(g.as_mut().expect("the machine's state"))
    }

    /// The configuration it runs.
    pub fn config(&self) -> Config {
        self.with(|s| s.config)
    }

    /// SoC address of SBUF (the first byte of the pinned SBUF window).
    pub fn sbuf(&self) -> u64 {
        self.with(|s| s.regions[0].base)
    }

    /// Allocates `size` bytes of HBM aligned to `align` (a power of two, at least 1); the
    /// memory reads as zeros.
    pub fn alloc(&self, size: u64, align: u64) -> Result<u64, SimError> {
        if !align.is_power_of_two() {
            return Err(SimError::BadConfig(format!(
                "alignment {align} is not a power of two"
            )));
        }
        self.with(|s| {
            let start = s.next_hbm.checked_add(align - 1).map(|v| v & !(align - 1));
            let end = start.and_then(|a| a.checked_add(size));
            match (start, end) {
                (Some(a), Some(e)) if e <= s.config.hbm_base + s.config.hbm_size => {
                    s.next_hbm = e;
                    Ok(a)
                }
                _ => Err(SimError::OutOfMemory(size)),
            }
        })
    }

    /// Writes `data` to SoC memory at `soc` (not through a window).
    pub fn write(&self, soc: u64, data: &[u8]) -> Result<(), SimError> {
        self.with(|s| {
            let r = s.region(soc, data.len() as u64)?;
            r.file
                .write_all_at(data, soc - r.base)
                .map_err(|e| SimError::Os(format!("writing SoC memory: {e}")))
        })
    }

    /// Reads SoC memory at `soc` into `buf` (not through a window).
    pub fn read(&self, soc: u64, buf: &mut [u8]) -> Result<(), SimError> {
        self.with(|s| {
            let r = s.region(soc, buf.len() as u64)?;
            r.file
                .read_exact_at(buf, soc - r.base)
                .map_err(|e| SimError::Os(format!("reading SoC memory: {e}")))
        })
    }

    /// The counters.
    pub fn counters(&self) -> Counters {
        let (translates, hits, refills) = hooks::TALLY.snapshot();
        let (register_writes, remaps) = self.with(|s| (s.register_writes, s.remaps));
        Counters {
            translates,
            hits,
            refills,
            register_writes,
            remaps,
        }
    }

    /// Zeroes the counters and forgets the logged stores.
    pub fn reset_counters(&self) {
        self.with(|s| {
            (s.register_writes, s.remaps) = (0, 0);
            s.stores.clear();
            hooks::TALLY.reset();
        })
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

    /// Writes every later translate call to `path` ([`crate::host::trace`]), replacing
    /// the file.
    pub fn trace_to(&self, path: &std::path::Path) -> Result<(), SimError> {
        let f = File::create(path).map_err(|e| SimError::Os(format!("{}: {e}", path.display())))?;
        let mut w = BufWriter::new(f);
        writeln!(w, "{TRACE_HEADER}").map_err(|e| SimError::Os(e.to_string()))?;
        self.with(|s| s.trace = Some(w));
        hooks::set_tracing(true);
        Ok(())
    }

    /// Stops tracing and flushes the file.
    pub fn trace_stop(&self) -> Result<(), SimError> {
        hooks::set_tracing(false);
        match self.with(|s| s.trace.take()) {
            Some(mut w) => w.flush().map_err(|e| SimError::Os(e.to_string())),
            None => Ok(()),
        }
    }
}

impl Drop for Machine {
    fn drop(&mut self) {
        hooks::set_active(false);
        hooks::set_tracing(false);
        let mut g = lock();
        if let Some(mut s) = g.take() {
            if let Some(mut t) = s.trace.take() {
                let _ = t.flush();
            }
            unmap(u64::from(NX_REG_BASE), u64::from(NX_REG_BLOCK_SIZE));
            for w in &s.windows {
                unmap(w.nx, w.size);
            }
        }
    }
}
