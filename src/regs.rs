//! The NX register block (docs/contract.md §5): the memory-mapped registers the library
//! reads and writes, every address in this one place.
//!
//! The block sits at NX-local [`NX_REG_BASE`]. `_init_translate_ctx` reads the engine's
//! SoC base from `ENGINE_BASE_ADDR`; a refill of reusable slot 0, 1 or 2 programs
//! `MEM_WINDOW3`, `5` or `6`. A window register is a plain 64-bit SoC base held as two
//! 32-bit registers, `_LO` at `+0` and `_HI` at `+4` (no valid or mask bits). The other
//! `MEM_WINDOW`s belong to the host runtime: the library never writes them.
//!
//! Source: the public decode of `libneuroncustomop.a` and of the Sunda (NC-v2) register
//! map the original targets (tag PUBLIC in docs/contract.md).

/// NX-local address of the register block.
pub const NX_REG_BASE: u32 = 0x0010_0000;

/// Bytes of the block the library knows about (one 4 KiB page holds every register below).
pub const NX_REG_BLOCK_SIZE: u32 = 0x1000;

/// A 64-bit register pair of the block: `_LO` at `offset`, `_HI` at `offset + 4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegPair {
    /// The register's name without the `_LO` / `_HI` suffix.
    pub name: &'static str,
    /// Offset of `_LO` from [`NX_REG_BASE`].
    pub offset: u32,
}

impl RegPair {
    const fn new(name: &'static str, offset: u32) -> Self {
        RegPair { name, offset }
    }

    /// NX-local address of `_LO`.
    #[inline(always)]
    pub const fn lo(&self) -> u32 {
        NX_REG_BASE + self.offset
    }

    /// NX-local address of `_HI` (`_LO + 4`).
    #[inline(always)]
    pub const fn hi(&self) -> u32 {
        self.lo() + 4
    }
}

/// `ENGINE_BASE_ADDR`: the engine's SoC base address, read by `_init_translate_ctx`.
pub const ENGINE_BASE_ADDR: RegPair = RegPair::new("ENGINE_BASE_ADDR", 0x028);

/// `MEM_WINDOW3`: programmed by a refill of slot 0.
pub const MEM_WINDOW3: RegPair = RegPair::new("MEM_WINDOW3", 0x218);

/// `MEM_WINDOW5`: programmed by a refill of slot 1.
pub const MEM_WINDOW5: RegPair = RegPair::new("MEM_WINDOW5", 0x228);

/// `MEM_WINDOW6`: programmed by a refill of slot 2.
pub const MEM_WINDOW6: RegPair = RegPair::new("MEM_WINDOW6", 0x230);

/// Every register pair the library touches.
pub const REGISTERS: [RegPair; 4] = [ENGINE_BASE_ADDR, MEM_WINDOW3, MEM_WINDOW5, MEM_WINDOW6];

/// The register pair whose `_LO` is at NX-local `addr`, if the library knows it.
#[inline]
pub fn pair_at(addr: u64) -> Option<RegPair> {
    REGISTERS
        .iter()
        .copied()
        .find(|r| u64::from(r.lo()) == addr)
}

/// Reads `ENGINE_BASE_ADDR` from the register block: two volatile 32-bit loads, `_LO`
/// first, then `_HI` (the order is DECIDED: reads of this register have no side effect).
///
/// # Safety
///
/// The 8 bytes at NX-local [`ENGINE_BASE_ADDR`] must be readable: the device's register
/// block, or memory mapped there to stand in for it (tests map a page at [`NX_REG_BASE`]).
#[inline(always)]
pub unsafe fn read_engine_base() -> u64 {
    let lo = ENGINE_BASE_ADDR.lo() as usize as *const u32;
    let hi = ENGINE_BASE_ADDR.hi() as usize as *const u32;
    // SAFETY: the caller's contract; both addresses are 4-aligned constants.
    let (lo, hi) = unsafe { (lo.read_volatile(), hi.read_volatile()) };
    (u64::from(hi) << 32) | u64::from(lo)
}

static_assertions::const_assert_eq!(MEM_WINDOW3.lo() % 8, 0);
static_assertions::const_assert!(MEM_WINDOW6.hi() + 4 <= NX_REG_BASE + NX_REG_BLOCK_SIZE);
