//! The TCM pool's blocks ([`crate::base::tcm`]): first fit over 16 KiB, each block's end at
//! a guard page, its start 64-byte aligned as the device's heap gives it, the slack of its
//! 64-byte granule checked, watched blocks' pages opened at their first store.

use crate::base::tcm::{Pool, Touch, POOL_BYTES};

#[test]
fn allocates_first_fit_up_to_16_kib_and_frees_only_its_own() {
    let mut p = Pool::default();
    let a = p.alloc(4096).unwrap();
    let b = p.alloc(4096).unwrap();
    let c = p.alloc(8192).unwrap();
    assert!(p.alloc(1).is_none(), "the pool is full");
    assert!(p.free(b));
    assert!(!p.free(b), "a second free of the same block is refused");
    let again = p.alloc(4000).unwrap();
    assert_eq!(p.offset_of(again), Some(4096), "first fit reuses the gap");
    let outside = 0x1000usize as *const u8;
    assert!(!p.free(outside));
    assert!(p.free(a) && p.free(c) && p.free(again));
    assert_eq!(p.high_water(), POOL_BYTES);
    assert_eq!(p.alloc(0), None);
    assert_eq!(p.alloc(POOL_BYTES + 1), None);
}

#[test]
fn a_blocks_granule_ends_at_a_guard_page_and_addresses_are_described() {
    let mut p = Pool::default();
    for (bytes, granule) in [
        (1000, 1024),
        (1001, 1024),
        (1024, 1024),
        (1, 64),
        (4096, 4096),
    ] {
        let a = p.alloc(bytes).unwrap() as usize;
        // SAFETY: the block's bytes are writable.
        unsafe { std::ptr::write_bytes(a as *mut u8, 1, bytes) };
        assert_eq!(
            a % 64,
            0,
            "{bytes} bytes: 64-byte aligned, as the device's heap"
        );
        assert_eq!(
            (a + granule) % 4096,
            0,
            "{bytes} bytes: the granule ends where the guard starts"
        );
        assert!(
            accessible(a + granule - 1) && !accessible(a + granule),
            "{bytes} bytes"
        );
        assert_eq!(p.slack_written(a as *const u8), None, "{bytes} bytes");
        assert!(p.free(a as *const u8));
    }
    let a = p.alloc(1000).unwrap() as usize;
    for over in [25, 40] {
        let past = p.describe(a + 1000 + over - 1).unwrap();
        assert_eq!(
            past,
            format!(
                "{} bytes past the end of a block of 1000 bytes (pool offset 0)",
                over - 1
            )
        );
    }
    // Inside the granule's slack: no fault, and the store is found later.
    // SAFETY: the block's slack, in its open last page.
    unsafe { ((a + 1003) as *mut u8).write(7) };
    assert_eq!(
        p.slack_written(a as *const u8),
        Some((1003, 1004, "a block of 1000 bytes (pool offset 0)".into()))
    );
    assert!(p.free(a as *const u8));
    let freed = p.describe(a + 8).unwrap();
    assert_eq!(
        freed,
        "8 bytes into a block of 1000 bytes (pool offset 0), already freed"
    );
    assert_eq!(p.describe(8), None);
}

/// Whether the byte at `addr` can be read, asked of the kernel (a write to a pipe
/// from an inaccessible buffer fails with EFAULT) rather than by faulting.
pub(crate) fn accessible(addr: usize) -> bool {
    let mut fds = [0; 2];
    // SAFETY: a new pipe, written once from `addr` and closed.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        let n = libc::write(fds[1], addr as *const libc::c_void, 1);
        libc::close(fds[0]);
        libc::close(fds[1]);
        n == 1
    }
}

#[test]
fn a_watched_blocks_pages_open_at_their_first_store() {
    let mut p = Pool::default();
    let a = p.alloc_watched(6000, true).unwrap() as usize;
    let plain = p.alloc(16).unwrap() as usize;
    let block = "a block of 6000 bytes (pool offset 0)";
    assert_eq!(
        p.unwritten(a, 6000),
        Some((0, 4096 - (a % 4096), block.into()))
    );
    assert_eq!(
        p.touch(a + 5, false),
        Touch::Unwritten(format!("byte 5 of {block}, which nothing wrote"))
    );
    assert_eq!(p.touch(a + 5000, true), Touch::Opened);
    assert!(accessible(a + 5000), "the page touched is open");
    assert!(!accessible(a), "the block's other page is not");
    assert_eq!(p.touch(a + 5001, false), Touch::Other, "open now");
    assert_eq!(p.unwritten(a + 4500, 1500), None, "its page is open");
    let first = 4096 - (a % 4096);
    assert_eq!(
        p.unwritten(a + 10, 6000),
        Some((10, first - 10, block.into()))
    );
    assert_eq!(p.touch(a + 100, true), Touch::Opened);
    assert_eq!(p.unwritten(a, 6000), None);
    assert_eq!(p.touch(a - 8, true), Touch::Other, "before the start");
    assert_eq!(p.touch(plain, false), Touch::Other, "not watched");
    assert_eq!(p.unwritten(plain, 16), None);
    assert_eq!(p.touch(a + 6000 + 16, true), Touch::Other, "the guard");
    assert!(p.free(a as *const u8));
    assert_eq!(p.touch(a + 100, false), Touch::Other, "freed");
    assert_eq!(p.unwritten(a, 16), None, "a freed block is no more watched");
}

#[test]
fn the_whole_pool_is_one_block_and_freeing_lowers_the_use() {
    let mut p = Pool::default();
    let all = p.alloc(POOL_BYTES).unwrap();
    assert!(p.free(all));
    let a = p.alloc(4096).unwrap();
    assert!(p.free(a));
    let b = p.alloc(4096).unwrap();
    assert_eq!(p.high_water(), POOL_BYTES);
    assert!(p.free(b));
    let mut q = Pool::default();
    for _ in 0..3 {
        let a = q.alloc(4096).unwrap();
        assert!(q.free(a));
    }
    assert_eq!(q.high_water(), 4096, "each free gave its bytes back");
}

#[test]
fn a_live_block_is_found_by_its_offset() {
    let mut p = Pool::default();
    let a = p.alloc(100).unwrap();
    let b = p.alloc(64).unwrap();
    assert_eq!(p.block_at(0), Some(a));
    assert_eq!(p.block_at(128), Some(b), "64-aligned, as the device's heap");
    assert_eq!(p.block_at(16), None, "no block starts there");
    assert_eq!(p.block_at(-1), None);
    assert!(p.free(a));
    assert_eq!(p.block_at(0), None, "freed");
}

#[test]
fn addresses_before_a_block_and_far_from_all_are_told_apart() {
    let mut p = Pool::default();
    let a = p.alloc(64).unwrap() as usize;
    assert_eq!(
        p.describe(a - 4).unwrap(),
        "4 bytes before the start of a block of 64 bytes (pool offset 0)"
    );
    assert_eq!(p.describe(a + (1 << 40)), None, "outside the arena");
    assert_eq!(
        p.describe(a + 64 + 5000).unwrap(),
        "5000 bytes past the end of a block of 64 bytes (pool offset 0)",
        "past the guard pages, in the arena"
    );
    assert!(!accessible(a + 64 + 5000) && !accessible(a + 64 + 100_000));
    let b = p.alloc(4096).unwrap() as usize;
    assert!(!accessible(b - 1), "the byte before a block of whole pages");
    assert_eq!(
        p.describe(b - 1).unwrap(),
        "1 bytes before the start of a block of 4096 bytes (pool offset 64)",
        "the nearest block"
    );
    assert!(p.free(b as *const u8));
    assert_eq!(
        p.describe(b + 10).unwrap(),
        "10 bytes into a block of 4096 bytes (pool offset 64), already freed"
    );
}

#[test]
fn a_watched_blocks_first_byte_and_page_edges_are_exact() {
    let mut p = Pool::default();
    let a = p.alloc_watched(3 * 4096, true).unwrap() as usize;
    assert_eq!(a % 4096, 0, "a block of whole pages starts a page");
    assert!(matches!(p.touch(a, false), Touch::Unwritten(_)));
    assert_eq!(p.touch(a, true), Touch::Opened);
    assert!(
        accessible(a) && !accessible(a + 4096),
        "the first page only"
    );
    assert_eq!(p.unwritten(a, 4096), None, "ends where the open page ends");
    assert_eq!(
        p.unwritten(a + 100, 5000),
        Some((4096, 1004, "a block of 12288 bytes (pool offset 0)".into())),
        "the second page, to the copy's end"
    );
    assert_eq!(
        p.unwritten(a + 3 * 4096 - 8, 64).map(|u| (u.0, u.1)),
        Some((3 * 4096 - 8, 8)),
        "clipped to the block's end"
    );
    let b = p.alloc_watched(1000, true).unwrap() as usize;
    assert_eq!(
        p.unwritten(b + 990, 20).map(|u| (u.0, u.1)),
        Some((990, 10)),
        "not past the bytes asked for"
    );
    assert_eq!(p.touch(a + 8192, true), Touch::Opened);
    assert_eq!(
        p.unwritten(a, 3 * 4096).map(|u| (u.0, u.1)),
        Some((4096, 4096))
    );
}

#[test]
fn the_emulated_q7s_stray_bytes_are_placed_from_the_nearest_block() {
    let mut p = Pool::default();
    let (a, b) = (p.alloc(100).unwrap(), p.alloc(100).unwrap());
    assert_eq!((p.offset_of(a), p.offset_of(b)), (Some(0), Some(128)));
    assert_eq!(p.live(), [(0, 100), (128, 100)]);
    assert_eq!(p.outside_blocks(128, 100), None, "all of b");
    let place = |p: &Pool, at: i64| p.outside_blocks(at, 1).unwrap().1;
    let (a_words, b_words) = (
        "a block of 100 bytes (pool offset 0)",
        "a block of 100 bytes (pool offset 128)",
    );
    // Between the two: whichever is nearer, by one byte either way.
    assert_eq!(place(&p, 105), format!("5 bytes past the end of {a_words}"));
    assert_eq!(
        place(&p, 114),
        format!("14 bytes before the start of {b_words}")
    );
    assert_eq!(
        place(&p, 113),
        format!("13 bytes past the end of {a_words}")
    );
    assert_eq!(
        place(&p, 120),
        format!("8 bytes before the start of {b_words}")
    );
    // A span from inside a block: its first byte past the block's end.
    assert_eq!(
        p.outside_blocks(90, 20),
        Some((100, format!("0 bytes past the end of {a_words}")))
    );
    p.free(b);
    assert_eq!(p.live(), [(0, 100)]);
    assert_eq!(
        place(&p, 130),
        format!("2 bytes into {b_words}, already freed")
    );
    assert_eq!(
        Pool::default().outside_blocks(0, 4),
        Some((0, "no block of the pool allocated".into()))
    );
}
