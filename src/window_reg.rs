//! Programming a SoC window register (contract §3, docs/original.md §6 0x23b..0x242).
//!
//! The refill writes the new tag to the victim's register block: a barrier, a 32-bit store
//! of `hi32(tag)` to `reg_location + 4`, a 32-bit store of `lo32(tag)` to `reg_location + 0`,
//! a barrier. [`WindowRegisters`] is the seam: the FFI uses [`Mmio`], the one place in the
//! crate that stores through a register address; safe callers and tests pass their own.

use core::sync::atomic::{fence, Ordering};

/// Something that can be told to program a window register.
pub trait WindowRegisters {
    /// Make the register block at `reg` map `tag` (hi word at `+4`, then lo word at `+0`).
    ///
    /// `reg` is the record's `reg_location` as the device uses it: a register address that
    /// the translation logic has already checked to be non-null and 4-aligned.
    fn program(&mut self, reg: RegisterAddress, tag: u64);
}

/// A checked register address: non-null and 4-aligned, of pointer width.
///
/// The device is ELF32, so only the low 32 bits of `reg_location` form the address there,
/// as the original's single `l32i a9, a6, 24` shows (docs/original.md §6); on a 64-bit host all 64 do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegisterAddress(usize);

/// Whether a register address is usable: non-null and 4-aligned (contract §4: a null
/// register traps; DECIDED: so does a misaligned one, which the original's `s32i` would
/// fault on too). Two single-bit tests rather than `addr & 3`: one branch-on-bit each on
/// Xtensa.
#[inline(always)]
const fn usable(addr: usize) -> bool {
    !(addr == 0 || addr & 1 != 0 || addr & 2 != 0)
}

impl RegisterAddress {
    /// Checks `reg_location` as this target uses it: its pointer-width part.
    #[inline(always)]
    pub fn new(reg_location: u64) -> Option<Self> {
        let addr = reg_location as usize;
        usable(addr).then_some(RegisterAddress(addr))
    }

    /// The register address the device uses for `reg_location`, whatever this target is:
    /// its low 32 bits (the device is ELF32; the original reads only the word at `+24`),
    /// if usable.
    #[inline(always)]
    pub fn on_device(reg_location: u64) -> Option<u32> {
        let lo = reg_location as u32;
        usable(lo as usize).then_some(lo)
    }

    /// The address as an integer.
    #[inline(always)]
    pub fn get(self) -> usize {
        self.0
    }
}

/// A register sink that records every programming, in order, as (register address, tag):
/// for tests and host tools.
#[cfg(any(test, feature = "std"))]
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RegisterLog(pub std::vec::Vec<(usize, u64)>);

#[cfg(any(test, feature = "std"))]
impl WindowRegisters for RegisterLog {
    fn program(&mut self, reg: RegisterAddress, tag: u64) {
        self.0.push((reg.get(), tag));
    }
}

/// The real window registers, written with ordered volatile stores.
#[derive(Debug)]
pub struct Mmio {
    _private: (),
}

impl Mmio {
    /// A handle to the memory-mapped window registers.
    ///
    /// # Safety
    ///
    /// Every register address later passed to [`WindowRegisters::program`] must be 8
    /// writable bytes (a window register block, or memory standing in for one) that no
    /// Rust reference covers while the stores happen.
    #[inline(always)]
    pub const unsafe fn new() -> Self {
        Mmio { _private: () }
    }
}

impl WindowRegisters for Mmio {
    #[inline(always)]
    fn program(&mut self, reg: RegisterAddress, tag: u64) {
        let base = reg.get() as *mut u32;
        // On Xtensa, LLVM puts a `memw` in front of every volatile store, which is the
        // leading barrier; elsewhere it has to be asked for.
        #[cfg(not(target_arch = "xtensa"))]
        fence(Ordering::SeqCst);
        // SAFETY: `Mmio::new`'s contract: `base..base + 8` is writable and unaliased;
        // `RegisterAddress` guarantees non-null and 4-aligned, so both stores are aligned.
        unsafe {
            core::ptr::write_volatile(base.wrapping_add(1), (tag >> 32) as u32);
            core::ptr::write_volatile(base, tag as u32);
        }
        fence(Ordering::SeqCst);
    }
}
