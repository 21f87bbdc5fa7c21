//! The TCM pool's store watch on the emulated Q7: the counting plugin
//! (sdk/qemu/tcm_watch.h) sees every store the program makes, and one that lands in the
//! pool's zone (the pool between two red zones of a granule, sdk/device/memory.c's
//! `nt_device_tcm_zone`) outside every live block stops the program there, with the
//! store's address and instruction. The live blocks are the runner's pool's: after each
//! request that changed them, the runner writes them to the plugin's pipe
//! ([`DeviceFd::Watch`]) before it answers, and the plugin reads them when the program's
//! read of the answer returns, so the plugin's blocks are the pool's at every store.

use std::io::Write;
use std::path::Path;

use crate::base::codes::TCM_ALIGN;
use crate::base::tcm::Pool;

/// The device runtime's symbol of the pool's zone.
pub(crate) const ZONE_SYMBOL: &str = "nt_device_tcm_zone";
/// The red zone before the pool (and after it): a granule.
pub(crate) const RED_ZONE: u64 = TCM_ALIGN as u64;

/// The pool's zone in the program: its first address and its bytes.
pub fn zone(program: &Path) -> Option<(u64, u64)> {
    zone_named(&std::fs::read(program).ok()?, ZONE_SYMBOL)
}

/// The data symbol `name` in the ELF file `data`, if it is larger than its two red zones:
/// its address and bytes.
pub(crate) fn zone_named(data: &[u8], name: &str) -> Option<(u64, u64)> {
    use object::{Object, ObjectSymbol};
    let file = object::File::parse(data).ok()?;
    let s = file
        .symbols()
        .find(|s| s.name() == Ok(name) && s.kind() == object::SymbolKind::Data)?;
    (s.size() > 2 * RED_ZONE).then(|| (s.address(), s.size()))
}

/// The runner's end of the watch: the plugin's pipe, the blocks it was last given and the
/// pool's change count they were read at (one pool for the program's run: its core's job's).
#[derive(Debug)]
pub struct Watch {
    pipe: std::fs::File,
    zone: u64,
    sent: Vec<(usize, usize)>,
    read_at: u64,
}

/// A store the watch saw outside every live block, which ended the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrayStore {
    /// The store instruction's address.
    pub pc: u64,
    /// Its first byte's address, and that as a pool offset (negative: before the pool).
    pub addr: u64,
    pub offset: i64,
    /// Its bytes.
    pub bytes: usize,
}

impl Watch {
    /// The watch of the pool at `zone` (its first address) through `pipe`.
    pub fn new(pipe: std::fs::File, zone: u64) -> Watch {
        Watch {
            pipe,
            zone,
            sent: Vec::new(),
            read_at: 0,
        }
    }

    /// Gives the plugin the pool's live blocks if they changed since it was last given
    /// them: u32 count, then per block u32 offset in the zone and u32 bytes, native
    /// order, in one write (no more than the pool's 256 granules: under `PIPE_BUF`, so the
    /// plugin never reads half of one). False if the plugin is gone.
    /// The blocks are read again only when the pool changed (not after every request).
    pub fn update(&mut self, pool: &Pool) -> bool {
        if pool.changes() == self.read_at {
            return true;
        }
        self.read_at = pool.changes();
        let live = pool.live();
        if live == self.sent {
            return true;
        }
        let mut m = (live.len() as u32).to_ne_bytes().to_vec();
        for &(offset, bytes) in &live {
            m.extend((offset as u32 + RED_ZONE as u32).to_ne_bytes());
            m.extend((bytes as u32).to_ne_bytes());
        }
        self.sent = live;
        self.pipe.write_all(&m).is_ok()
    }

    /// The plugin's line of a stray store (`s PC ADDRESS BYTES`, hexadecimal, decimal),
    /// read; `None` if `line` is not one.
    pub fn stray(&self, line: &str) -> Option<StrayStore> {
        let mut f = line.strip_prefix("s ")?.split(' ');
        let pc = u64::from_str_radix(f.next()?, 16).ok()?;
        let addr = u64::from_str_radix(f.next()?, 16).ok()?;
        let bytes = f.next()?.parse().ok()?;
        let offset = addr as i64 - (self.zone + RED_ZONE) as i64;
        Some(StrayStore {
            pc,
            addr,
            offset,
            bytes,
        })
    }
}
