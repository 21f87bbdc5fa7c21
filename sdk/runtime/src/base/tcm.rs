//! The TCM pool: 16 KiB of a core's local memory, from which `tcm_malloc` allocates and each
//! fast stream accessor takes its 4 KiB buffer. Whether a block fits, and its offset in the
//! pool, are the device's dataram heap's ([`crate::base::xmem`]: first fit, 64-byte
//! alignment, 32 block descriptors); the high-water mark (the heap's taken bytes, alignment
//! slack included) is what `--stats` reports.
//!
//! The pool's blocks live in an arena: one reserved, inaccessible stretch of address space
//! ([`ARENA_BYTES`]) in which only live blocks' pages are open. Each block has pages of its
//! own, its end at the end of the last one, with [`GUARD_PAGES`] inaccessible pages before
//! and after it; a freed block's pages become inaccessible again and are not used again in
//! the job. An access anywhere in the arena but a live block's pages (past a block's end,
//! to the byte, before its first page, between blocks, into a freed block) therefore
//! faults at once, and [`Pool::describe`] names the block nearest the address.
//! Not caught: an access before a block's start that stays in its first page, and one that
//! lands inside another live block's pages (docs/customop-host.md).
//!
//! A watched block (`tcm_malloc` under `--sanitize`) starts with its pages inaccessible
//! too: the first store into a page opens it ([`Pool::touch`]); a load from a page nothing
//! stored into is a read of bytes nothing wrote, and [`Pool::unwritten`] says the same of a
//! copy out of the block. A page is the unit: once anything is stored into a page, all its
//! bytes count as written (a miss is possible, a false report is not).

/// Bytes in a core's pool.
pub const POOL_BYTES: usize = 16 * 1024;
const PAGE: usize = 4096;
/// Inaccessible pages between two blocks of the arena (a block's own stray accesses up to
/// this far past its end or before its start fault, even with a neighbour).
pub const GUARD_PAGES: usize = 4;
/// The address space a pool reserves for its blocks (inaccessible, costing no memory): room
/// for about 460,000 blocks in a job; past that, blocks get mappings of their own.
#[cfg(target_pointer_width = "64")]
pub const ARENA_BYTES: usize = 16 << 30;
/// The same in the op programs' 32-bit processes (the device's data model): 256 MiB, room
/// for about 7,000 blocks.
#[cfg(target_pointer_width = "32")]
pub const ARENA_BYTES: usize = 256 << 20;

/// One block and its pages.
#[derive(Debug)]
struct Block {
    /// Its offset in the pool (first fit over 16 KiB).
    offset: usize,
    /// Bytes asked for.
    asked: usize,
    /// Bytes taken (rounded up to the granule).
    size: usize,
    /// Its pages (in the arena, or a mapping of its own with a guard page after them).
    map: usize,
    map_len: usize,
    /// Whether `map` is a mapping of its own (unmapped with the pool).
    own_mapping: bool,
    /// Its first byte.
    ptr: usize,
    freed: bool,
    /// Watched: pages start closed and open at their first store.
    watched: bool,
    /// Of a watched block, the pages opened so far (bit k: the mapping's page k).
    open: u32,
}

/// What a faulting access was to a watched block ([`Pool::touch`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Touch {
    /// A store into a page nothing stored into before: the page is now open (the access
    /// can be made again).
    Opened,
    /// A load from a page nothing stored into: where, in words.
    Unwritten(String),
    /// Neither (not a watched block's closed page).
    Other,
}

impl Block {
    fn words(&self) -> String {
        format!(
            "a block of {} bytes (pool offset {})",
            self.asked, self.offset
        )
    }

    /// The mapping's page holding `addr`, if it is one of the block's own (not a guard).
    fn page_of(&self, addr: usize) -> Option<u32> {
        let pages = self.map_len / PAGE;
        let k = addr.checked_sub(self.map)? / PAGE;
        (k < pages).then_some(k as u32)
    }

    /// How far `addr` is from the block's bytes (0: inside them).
    fn distance(&self, addr: usize) -> usize {
        if addr < self.ptr {
            self.ptr - addr
        } else {
            addr.saturating_sub(self.ptr + self.size.max(1) - 1)
        }
    }

    fn closed(&self, page: u32) -> bool {
        self.watched && !self.freed && self.open & (1 << page) == 0
    }
}

/// One core's pool.
#[derive(Debug)]
pub struct Pool {
    /// Where the device's heap puts each live block.
    heap: crate::base::xmem::Heap,
    blocks: Vec<Block>,
    high_water: usize,
    /// The arena's first byte (0: not reserved yet) and the next block's place in it.
    arena: usize,
    next: usize,
    /// The arena's bytes ([`ARENA_BYTES`]; less in the tests that use it up).
    arena_bytes: usize,
}

impl Default for Pool {
    fn default() -> Pool {
        Pool::with_arena(ARENA_BYTES)
    }
}

/// Pages `len` bytes from `at`, opened for reading and writing; false if that failed.
fn open_pages(at: usize, len: usize) -> bool {
    // SAFETY: pages of a mapping the pool owns.
    len == 0
        || unsafe {
            libc::mprotect(
                at as *mut libc::c_void,
                len,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        } == 0
}

/// A new inaccessible private mapping of `len` bytes: its address.
fn reserve(len: usize) -> Option<usize> {
    // SAFETY: a new anonymous mapping, inaccessible, reserving no memory.
    let m = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    (m != libc::MAP_FAILED).then_some(m as usize)
}

/// A mapping of its own for a block of `pages` bytes of pages past the arena: those pages
/// and a guard page after them, all inaccessible until the block opens its pages.
fn own_mapping(pages: usize) -> Option<usize> {
    reserve(pages + PAGE)
}

impl Pool {
    /// An empty pool whose arena, once reserved, has `arena_bytes`.
    pub fn with_arena(arena_bytes: usize) -> Pool {
        Pool {
            heap: crate::base::xmem::Heap::default(),
            blocks: Vec::new(),
            high_water: 0,
            arena: 0,
            next: 0,
            arena_bytes,
        }
    }

    /// A block of `bytes`, or `None` where the device's heap has no room for it (0 bytes:
    /// `None`, as the device's heap refuses them).
    pub fn alloc(&mut self, bytes: usize) -> Option<*mut u8> {
        self.alloc_watched(bytes, false)
    }

    /// [`Pool::alloc`], the block watched for reads of bytes nothing wrote if `watch`.
    pub fn alloc_watched(&mut self, bytes: usize, watch: bool) -> Option<*mut u8> {
        if bytes == 0 || bytes > POOL_BYTES {
            return None;
        }
        let at = self.heap.alloc(bytes as u32, 0)? as usize;
        // Its end at its last page's end, to the byte: its start is as aligned as its size
        // (a multiple of 4 bytes, 4-aligned; of 16, 16-aligned).
        let size = bytes;
        let pages = size.div_ceil(PAGE) * PAGE;
        let placed = self
            .place(pages)
            .filter(|(map, _)| open_pages(*map, if watch { 0 } else { pages }));
        let Some((map, own_mapping)) = placed else {
            self.heap.free(at as u32);
            return None;
        };
        self.high_water = self.high_water.max(self.heap.taken_bytes() as usize);
        let ptr = map + pages - size;
        self.blocks.push(Block {
            offset: at,
            asked: bytes,
            size,
            map,
            map_len: pages,
            own_mapping,
            ptr,
            freed: false,
            watched: watch,
            open: 0,
        });
        Some(ptr as *mut u8)
    }

    /// Where a block of `pages` bytes of pages goes: the next place in the arena (reserved
    /// at the first block), or, once the arena is used up, a mapping of its own with a
    /// guard page after it. (address, whether it is a mapping of its own)
    fn place(&mut self, pages: usize) -> Option<(usize, bool)> {
        if self.arena == 0 {
            self.arena = reserve(self.arena_bytes).unwrap_or(0);
            self.next = GUARD_PAGES * PAGE;
        }
        let end = self.next + pages + GUARD_PAGES * PAGE;
        if self.arena != 0 && end <= self.arena_bytes {
            let at = self.arena + self.next;
            self.next = end;
            return Some((at, false));
        }
        own_mapping(pages).map(|m| (m, true))
    }

    /// Whether `addr` is in the arena.
    fn in_arena(&self, addr: usize) -> bool {
        self.arena != 0 && (self.arena..self.arena + self.arena_bytes).contains(&addr)
    }

    /// Frees the live block starting at `p`; false (nothing freed) if none starts there.
    /// Its pages become inaccessible until the pool goes.
    pub fn free(&mut self, p: *const u8) -> bool {
        let Some(b) = self
            .blocks
            .iter_mut()
            .find(|b| b.ptr == p as usize && !b.freed)
        else {
            return false;
        };
        b.freed = true;
        // SAFETY: the block's own mapping.
        unsafe { libc::mprotect(b.map as *mut libc::c_void, b.map_len, libc::PROT_NONE) };
        let offset = b.offset;
        self.heap.free(offset as u32);
        true
    }

    /// The pool offset of the live block starting at `p`.
    pub fn offset_of(&self, p: *const u8) -> Option<usize> {
        self.blocks
            .iter()
            .find(|b| b.ptr == p as usize && !b.freed)
            .map(|b| b.offset)
    }

    /// The first byte of the live block at pool offset `offset` (none at a negative one).
    pub fn block_at(&self, offset: i64) -> Option<*mut u8> {
        let offset = usize::try_from(offset).ok()?;
        self.blocks
            .iter()
            .find(|b| b.offset == offset && !b.freed)
            .map(|b| b.ptr as *mut u8)
    }

    /// What address `addr` is to the pool, if it is in the arena or in a block's own
    /// mapping and its guard page: where, in words, from the block nearest it (a live one
    /// before a freed one as near); `None`: not the pool's.
    pub fn describe(&self, addr: usize) -> Option<String> {
        let own = |b: &&Block| b.own_mapping && (b.map..b.map + b.map_len + PAGE).contains(&addr);
        let b = match self.blocks.iter().rev().find(own) {
            Some(b) => b,
            None if self.in_arena(addr) => self
                .blocks
                .iter()
                .filter(|b| !b.own_mapping)
                .min_by_key(|b| (b.distance(addr), b.freed))?,
            None => return None,
        };
        let block = b.words();
        let place = if addr >= b.ptr + b.size {
            format!("{} bytes past the end of {block}", addr - (b.ptr + b.asked))
        } else if addr >= b.ptr {
            format!("{} bytes into {block}", addr - b.ptr)
        } else {
            format!("{} bytes before the start of {block}", b.ptr - addr)
        };
        Some(if b.freed {
            place + ", already freed"
        } else {
            place
        })
    }

    /// A faulting access at `addr` (`write`: a store): a store into a closed page of a
    /// watched block opens that page; a load from one (at or after the block's start) is
    /// [`Touch::Unwritten`]. Made from a signal handler: no allocation but the words.
    pub fn touch(&mut self, addr: usize, write: bool) -> Touch {
        let Some(b) = self
            .blocks
            .iter_mut()
            .rev()
            .find(|b| b.page_of(addr).is_some())
        else {
            return Touch::Other;
        };
        let page = b.page_of(addr).unwrap_or_default();
        if !b.closed(page) || addr < b.ptr {
            return Touch::Other;
        }
        if !write {
            let at = addr - b.ptr;
            return Touch::Unwritten(format!("byte {at} of {}, which nothing wrote", b.words()));
        }
        let start = b.map + page as usize * PAGE;
        // SAFETY: one of the block's own pages.
        let r = unsafe {
            libc::mprotect(
                start as *mut libc::c_void,
                PAGE,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if r != 0 {
            return Touch::Other;
        }
        b.open |= 1 << page;
        Touch::Opened
    }

    /// Of the `len` bytes at `p`, the first stretch in a watched block's closed pages
    /// (bytes nothing wrote): its offset in the block, its length and the block in words.
    pub fn unwritten(&self, p: usize, len: usize) -> Option<(usize, usize, String)> {
        let end = p.checked_add(len)?;
        self.blocks.iter().rev().find_map(|b| {
            let (lo, hi) = (p.max(b.ptr), end);
            if lo >= hi {
                return None;
            }
            // The block's own pages that [lo, hi) touches, each once (a bounded walk; the
            // block ends at its last page's end, so a stretch past it is not the block's).
            let first = (lo - b.map) / PAGE;
            let last = ((hi - 1 - b.map) / PAGE).min(b.map_len / PAGE - 1);
            (first..=last).find_map(|k| {
                let at = lo.max(b.map + k * PAGE);
                let next = hi.min(b.map + (k + 1) * PAGE);
                b.closed(k as u32)
                    .then(|| (at - b.ptr, next - at, b.words()))
            })
        })
    }

    /// The most bytes ever allocated at once.
    pub fn high_water(&self) -> usize {
        self.high_water
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        for b in self.blocks.iter().filter(|b| b.own_mapping) {
            // SAFETY: a block's own mapping, unmapped once.
            unsafe { libc::munmap(b.map as *mut libc::c_void, b.map_len + PAGE) };
        }
        if self.arena != 0 {
            // SAFETY: the arena, unmapped once.
            unsafe { libc::munmap(self.arena as *mut libc::c_void, self.arena_bytes) };
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

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
    fn a_block_ends_at_a_guard_page_and_addresses_are_described() {
        let mut p = Pool::default();
        for (bytes, align) in [(1000, 8), (1001, 1), (1002, 2), (1008, 16), (4096, 4096)] {
            let a = p.alloc(bytes).unwrap() as usize;
            // SAFETY: the block's bytes are writable.
            unsafe { std::ptr::write_bytes(a as *mut u8, 1, bytes) };
            assert_eq!(a % align, 0, "{bytes} bytes: as aligned as its size");
            assert_eq!(
                (a + bytes) % 4096,
                0,
                "{bytes} bytes end where the guard starts"
            );
            assert!(
                accessible(a + bytes - 1) && !accessible(a + bytes),
                "{bytes} bytes"
            );
            assert!(p.free(a as *const u8));
        }
        let a = p.alloc(1000).unwrap() as usize;
        for over in [1, 4, 15] {
            let past = p.describe(a + 1000 + over - 1).unwrap();
            assert_eq!(
                past,
                format!(
                    "{} bytes past the end of a block of 1000 bytes (pool offset 0)",
                    over - 1
                )
            );
        }
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
}
