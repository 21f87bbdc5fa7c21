//! The TCM store watch's runner side ([`crate::run::device::watch`]): the blocks it gives
//! the plugin, the plugin's line it reads, and the zone it finds in a program (this test
//! program's own statics stand in for the device runtime's).

use std::path::Path;

use crate::base::tcm::Pool;
use crate::run::device::watch::{zone, zone_named, Watch, RED_ZONE, ZONE_SYMBOL};

/// The words a watch wrote into the pipe whose read end is `r` (its write end closed).
fn words_written(r: std::io::PipeReader) -> Vec<u32> {
    let mut got = Vec::new();
    std::io::Read::read_to_end(
        &mut std::fs::File::from(std::os::fd::OwnedFd::from(r)),
        &mut got,
    )
    .unwrap();
    got.chunks(4)
        .map(|c| u32::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

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
    drop(watch);
    let words = words_written(r);
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

#[test]
fn a_free_after_an_allocation_is_a_change_the_plugin_is_told_of() {
    let (r, w) = std::io::pipe().unwrap();
    let mut watch = Watch::new(std::fs::File::from(std::os::fd::OwnedFd::from(w)), 0x1000);
    let mut pool = Pool::default();
    let a = pool.alloc(64).unwrap();
    assert!(watch.update(&pool));
    pool.alloc(100).unwrap();
    pool.free(a);
    assert!(watch.update(&pool), "one block in, another out");
    drop(watch);
    let words = words_written(r);
    let zone = RED_ZONE as u32;
    assert_eq!(
        words,
        [1, zone, 64, 1, zone + 64, 100],
        "a at 0, then b alone at 64"
    );
}
