//! The host model of the translation hardware: custom operators run unmodified on a
//! workstation, with real memory behind the windows. Its defaults ([`defaults`]) and its
//! trace format ([`trace`]) come with feature `std`; the machine itself with feature `sim`
//! (Linux on x86_64, x86 and aarch64); none of it is ever in the device object.
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
//! The model plugs in at the ABI layer (`abi.rs`) and nowhere below it: the exported
//! functions give their register stores to the model's sink ([`hooks::Observed`]) and tell
//! it about each translate call ([`hooks`]); the model counts hits and refills per slot and
//! register writes, logs the stores, and can write a trace ([`trace`]).
//!
//! The addresses are fixed, so one machine runs per process at a time. Everything the
//! model holds is one value behind one lock (`machine::MODEL`); what it counts is in
//! `tally`, which the seam ([`hooks`]) and the machine both use and which uses neither.

pub mod defaults;
pub mod keep;
pub mod trace;

#[cfg(nt_sim)]
pub mod ffi;
#[cfg(nt_sim)]
pub mod hooks;
#[cfg(nt_sim)]
mod machine;
#[cfg(nt_sim)]
mod memory;
#[cfg(nt_sim)]
mod tally;

use std::string::String;

use crate::layout::RECORDS;

#[cfg(nt_sim)]
pub use machine::{Machine, STORE_LOG};

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
    /// The most SoC memory the kept views may show, in bytes (a reusable window's 16 MiB
    /// a view; [`keep`]): views the kernel streamed through are kept when their window
    /// moves away, so that their region comes back with its page table. 0 keeps none.
    pub keep: u64,
}

impl Default for Config {
    /// [`defaults`].
    fn default() -> Self {
        use defaults as d;
        Config {
            engine_base: d::ENGINE_BASE,
            hbm_base: d::HBM_BASE,
            hbm_size: d::HBM_SIZE,
            hbm_scratch: d::HBM_SCRATCH,
            keep: keep::KEEP_DEFAULT,
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

/// What the model keeps and holds (`neuron_translate_host_memory`): its memory use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Memory {
    /// Views kept now (moved aside with their page tables when their window moved away).
    pub kept_views: u64,
    /// The most it keeps (the configuration's `keep`, in views of 16 MiB).
    pub keep_limit_views: u64,
    /// SoC memory the kept views show, in bytes.
    pub kept_bytes: u64,
    /// SoC memory that exists (written or read through a view at least once), in bytes.
    pub soc_resident_bytes: u64,
    /// Views kept, since the start or the last reset of the counters.
    pub parked: u64,
    /// Refills that brought a kept view back, page table and all.
    pub reused: u64,
    /// Kept views dropped to stay within the limit (the one kept longest ago each time).
    pub evicted: u64,
}

/// One 32-bit register store, as the model saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Store {
    /// NX-local address stored to.
    pub addr: u64,
    /// The value.
    pub value: u32,
}
