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
const ZONE_SYMBOL: &str = "nt_device_tcm_zone";
/// The red zone before the pool (and after it): a granule.
const RED_ZONE: u64 = TCM_ALIGN as u64;

/// The pool's zone in the program: its first address and its bytes.
pub fn zone(program: &Path) -> Option<(u64, u64)> {
    zone_named(&std::fs::read(program).ok()?, ZONE_SYMBOL)
}

/// The data symbol `name` in the ELF file `data`, if it is larger than its two red zones:
/// its address and bytes.
fn zone_named(data: &[u8], name: &str) -> Option<(u64, u64)> {
    use object::{Object, ObjectSymbol};
    let file = object::File::parse(data).ok()?;
    let s = file
        .symbols()
        .find(|s| s.name() == Ok(name) && s.kind() == object::SymbolKind::Data)?;
    (s.size() > 2 * RED_ZONE).then(|| (s.address(), s.size()))
}

/// The runner's end of the watch: the plugin's pipe and the blocks it was last given.
#[derive(Debug)]
pub struct Watch {
    pipe: std::fs::File,
    zone: u64,
    sent: Vec<(usize, usize)>,
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
        }
    }

    /// Gives the plugin the pool's live blocks if they changed since it was last given
    /// them: u32 count, then per block u32 offset in the zone and u32 bytes, native
    /// order, in one write (no more than the pool's 256 granules: under `PIPE_BUF`, so the
    /// plugin never reads half of one). False if the plugin is gone.
    pub fn update(&mut self, pool: &Pool) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_go_to_the_plugin_once_per_change_at_their_zone_offsets_and_a_stray_line_reads() {
        let (r, w) = std::io::pipe().unwrap();
        let mut watch = Watch::new(std::fs::File::from(std::os::fd::OwnedFd::from(w)), 0x1000);
        let mut pool = Pool::default();
        let p = pool.alloc(100).unwrap();
        assert!(
            watch.update(&pool) && watch.update(&pool),
            "the same blocks twice"
        );
        pool.free(p);
        assert!(watch.update(&pool));
        drop(watch.pipe);
        let mut got = Vec::new();
        std::io::Read::read_to_end(
            &mut std::fs::File::from(std::os::fd::OwnedFd::from(r)),
            &mut got,
        )
        .unwrap();
        let words: Vec<u32> = got
            .chunks(4)
            .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(words, [1, RED_ZONE as u32, 100, 0], "one block, then none");
        let w = Watch::new(std::fs::File::open("/dev/null").unwrap(), 0x1000);
        let s = w.stray("s 40001a 1030 4").unwrap();
        assert_eq!(
            (s.pc, s.addr, s.offset, s.bytes),
            (0x40_001a, 0x1030, -16, 4)
        );
        assert!(w.stray("4000 3 1").is_none() && w.stray("s 40 x 4").is_none());
    }

    /// Two zones of this test program's own: one with a byte past its red zones (under
    /// the device runtime's name), one that is only red zones.
    #[used]
    #[export_name = "nt_device_tcm_zone"]
    static NT_TEST_ZONE_ROOM: [u8; 2 * RED_ZONE as usize + 1] = [0; 2 * RED_ZONE as usize + 1];
    #[used]
    #[no_mangle]
    static NT_TEST_ZONE_RED: [u8; 2 * RED_ZONE as usize] = [0; 2 * RED_ZONE as usize];

    #[test]
    fn a_zone_is_a_data_symbol_with_room_past_its_red_zones() {
        let me = std::fs::read("/proc/self/exe").unwrap();
        let room = std::hint::black_box(&NT_TEST_ZONE_ROOM);
        let (at, bytes) = zone(Path::new("/proc/self/exe")).expect("found");
        assert_eq!(bytes, 2 * RED_ZONE + 1);
        assert_ne!(at, 0, "{:p}", room.as_ptr());
        assert_eq!(zone_named(&me, "NT_TEST_ZONE_RED"), None, "red zones only");
        let text = zone_named(&me, "the_test_names_no_such_symbol");
        assert_eq!(text, None);
        assert_eq!(zone_named(b"not an ELF file", ZONE_SYMBOL), None);
        assert!(zone(Path::new("/nonexistent")).is_none());
    }
}
