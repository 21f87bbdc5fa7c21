//! The TCM pool's arena ([`crate::base::tcm`]): where blocks are placed, which block a
//! stray address is told against when there are several, and the mappings of their own
//! blocks get once the arena is used up.

use crate::base::tcm::{Pool, Touch, GUARD_PAGES, POOL_BYTES};
use crate::unit::tcm_pool::accessible;

const PAGE: usize = 4096;

/// The first byte of the page `addr` is in.
fn page_of(addr: usize) -> usize {
    addr & !(PAGE - 1)
}

#[test]
fn blocks_follow_each_other_behind_guard_pages_from_the_arenas_start() {
    let mut p = Pool::default();
    let a = p.alloc(64).unwrap() as usize;
    let b = p.alloc(64).unwrap() as usize;
    assert_eq!(
        b - a,
        PAGE * (1 + GUARD_PAGES),
        "a page, then the guard pages"
    );
    let before = page_of(a) - 1;
    assert!(!accessible(before));
    assert_eq!(
        p.describe(before).unwrap(),
        format!(
            "{} bytes before the start of a block of 64 bytes (pool offset 0)",
            a - before
        ),
        "the first block has guard pages before it, in the arena"
    );
}

#[test]
fn a_stray_address_is_told_against_the_nearest_block() {
    let mut p = Pool::default();
    let a = p.alloc(64).unwrap() as usize;
    let b = p.alloc(64).unwrap() as usize;
    let (first, second) = (
        "a block of 64 bytes (pool offset 0)",
        "a block of 64 bytes (pool offset 64)",
    );
    assert_eq!(
        p.describe(a + 64 + 100).unwrap(),
        format!("100 bytes past the end of {first}")
    );
    assert_eq!(
        p.describe(b - 100).unwrap(),
        format!("100 bytes before the start of {second}")
    );
    // Between the two: one byte nearer the first block's last byte than the second's
    // first byte, then one byte nearer the second.
    let nearer_first = (a + b + 62) / 2;
    assert_eq!(
        p.describe(nearer_first).unwrap(),
        format!("{} bytes past the end of {first}", nearer_first - (a + 64))
    );
    let nearer_second = (a + b + 64) / 2;
    assert_eq!(
        p.describe(nearer_second).unwrap(),
        format!("{} bytes before the start of {second}", b - nearer_second)
    );
    // A freed block still names the addresses nearest it.
    assert!(p.free(a as *const u8));
    assert_eq!(
        p.describe(a - 4).unwrap(),
        format!("4 bytes before the start of {first}, already freed")
    );
    assert_eq!(
        p.describe(a + 64 + 100).unwrap(),
        format!("100 bytes past the end of {first}, already freed")
    );
}

#[test]
fn past_the_arena_a_block_has_a_mapping_of_its_own_with_a_guard_page() {
    // Room for one block of one page and its guard pages.
    let mut p = Pool::with_arena(PAGE * (1 + 2 * GUARD_PAGES));
    let a = p.alloc(64).unwrap() as usize;
    let own = p.alloc(64).unwrap() as usize;
    assert!(
        own < page_of(a) || own > a + PAGE * (1 + GUARD_PAGES),
        "not in the arena"
    );
    // SAFETY: the block's 64 bytes.
    unsafe { std::ptr::write_bytes(own as *mut u8, 7, 64) };
    assert!(!accessible(own + 64), "its guard page");
    let words = "a block of 64 bytes (pool offset 64)";
    assert_eq!(
        p.describe(own + 64 + 8).unwrap(),
        format!("8 bytes past the end of {words}")
    );
    assert_eq!(
        p.describe(own + 8).unwrap(),
        format!("8 bytes into {words}")
    );
    assert_eq!(
        p.describe(a - 4).unwrap(),
        "4 bytes before the start of a block of 64 bytes (pool offset 0)",
        "an address of the arena is told against the arena's blocks"
    );
    // Far past its guard page, and not in the arena (which may lie right after it).
    let arena = page_of(a) - GUARD_PAGES * PAGE..page_of(a) + (1 + GUARD_PAGES) * PAGE;
    let far = own + (8 << 20);
    assert!(!arena.contains(&far));
    assert_eq!(p.describe(far), None, "far past its guard page");
    assert_eq!(p.describe(own.wrapping_add(1 << 40)), None);
    assert!(p.free(own as *const u8));
    assert!(!accessible(own));
}

#[test]
fn a_block_past_the_pool_is_refused_whatever_its_size_is_modulo_32_bits() {
    let mut p = Pool::default();
    assert_eq!(p.alloc(0), None);
    assert_eq!(p.alloc(POOL_BYTES + 1), None);
    // 2^32 + 64 bytes would be 64 to the device's heap's 32-bit sizes.
    assert_eq!(p.alloc_watched((1usize << 32) + 64, true), None);
    assert_eq!(p.alloc((1usize << 32) + 64), None);
    assert!(p.alloc(POOL_BYTES).is_some(), "the whole pool fits");
}

#[test]
fn a_read_that_ends_before_a_closed_page_finds_nothing_unwritten() {
    let mut p = Pool::default();
    let a = p.alloc_watched(2 * 4096, true).unwrap() as usize;
    assert_eq!(p.touch(a, true), Touch::Opened);
    let found = |p: &Pool, at, len| p.unwritten(at, len).map(|u| (u.0, u.1));
    for (at, len) in [
        (a, 4096),
        (a + 1, 4095),
        (a + 4095, 1),
        (a + 8192, 100),
        (a - 100, 50),
    ] {
        assert_eq!(found(&p, at, len), None, "{:#x} {len}", at - a);
    }
    assert_eq!(found(&p, a + 4095, 2), Some((4096, 1)));
    assert_eq!(found(&p, a + 8191, 1), Some((8191, 1)));
    assert_eq!(
        found(&p, usize::MAX - 4, 8),
        None,
        "an end past the address space"
    );
    assert_eq!(p.touch(a + 4096, true), Touch::Opened);
    assert_eq!(
        found(&p, a + 8000, 5000),
        None,
        "the guard page is not the block's"
    );
}
