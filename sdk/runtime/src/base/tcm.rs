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
pub const POOL_BYTES: usize = crate::base::codes::TCM_POOL_BYTES;
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
    /// Allocations and frees so far (the live blocks change with each, and only then).
    changes: u64,
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

/// A block's alignment and the unit its bytes are taken in: the device heap's.
const GRANULE: usize = crate::base::xmem::DEFAULT_ALIGN as usize;

/// What a block's slack (its granule's bytes past those asked for) holds until something
/// stores into it.
const SLACK: u8 = crate::base::codes::TCM_SLACK;

/// Fills the `len` bytes of slack at `at` (in the page at `last_page`, open unless the
/// block is `watched`) with [`SLACK`].
fn fill_slack(last_page: usize, at: usize, len: usize, watched: bool) {
    if len == 0 || (watched && !open_pages(last_page, PAGE)) {
        return;
    }
    // SAFETY: the block's own last page, open: the slack lies in it (a granule never
    // crosses a page).
    unsafe { core::ptr::write_bytes(at as *mut u8, SLACK, len) };
    if watched {
        // SAFETY: the same page, closed again: a watched block's pages open at a store.
        unsafe { libc::mprotect(last_page as *mut libc::c_void, PAGE, libc::PROT_NONE) };
    }
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
            changes: 0,
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
        // Its granule's end at its last page's end: its start is 64-byte aligned, as the
        // device's heap gives it; the granule's slack past the bytes asked for is filled
        // with [`SLACK`] and checked when the block is freed ([`Pool::slack_written`]).
        let size = bytes.next_multiple_of(GRANULE);
        let pages = size.div_ceil(PAGE) * PAGE;
        let placed = self
            .place(pages)
            .filter(|(map, _)| open_pages(*map, if watch { 0 } else { pages }));
        let Some((map, own_mapping)) = placed else {
            self.heap.free(at as u32);
            return None;
        };
        self.high_water = self.high_water.max(self.heap.taken_bytes() as usize);
        self.changes += 1;
        let ptr = map + pages - size;
        fill_slack(map + pages - PAGE, ptr + bytes, size - bytes, watch);
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
        self.changes += 1;
        true
    }

    /// Of the live block starting at `p`, the stretch of its slack (past the bytes asked
    /// for, inside its 64-byte granule) something stored into: `[first, end)` as offsets in
    /// the block, and the block in words. The device's block owns those bytes, so nothing
    /// faults there; a store of [`SLACK`] itself is missed.
    pub fn slack_written(&self, p: *const u8) -> Option<(usize, usize, String)> {
        let b = self
            .blocks
            .iter()
            .find(|b| b.ptr == p as usize && !b.freed)?;
        let page = b.page_of(b.ptr + b.size - 1)?;
        if b.asked == b.size || b.closed(page) {
            return None;
        }
        // SAFETY: the block's slack, in its last page, which is open.
        let slack =
            unsafe { std::slice::from_raw_parts((b.ptr + b.asked) as *const u8, b.size - b.asked) };
        let first = slack.iter().position(|v| *v != SLACK)?;
        let last = slack.iter().rposition(|v| *v != SLACK)?;
        Some((b.asked + first, b.asked + last + 1, b.words()))
    }

    /// The live block at pool offset `offset`, in words.
    pub fn words_at(&self, offset: usize) -> Option<String> {
        let b = self
            .blocks
            .iter()
            .find(|b| b.offset == offset && !b.freed)?;
        Some(b.words())
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

    /// How many times the live blocks changed: a count that moves with each allocation
    /// and free, so that an unchanged count means [`Pool::live`] is as it was.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The live blocks as the emulated Q7 holds them: (pool offset, bytes asked for), in
    /// the pool's order (the counting plugin's store watch reads them).
    pub fn live(&self) -> Vec<(usize, usize)> {
        let mut live: Vec<_> = self
            .blocks
            .iter()
            .filter(|b| !b.freed)
            .map(|b| (b.offset, b.asked))
            .collect();
        live.sort_unstable();
        live
    }

    /// Of `n` bytes at pool offset `offset` (negative: before the pool) on the emulated Q7,
    /// the first outside every live block's bytes, and where it is in words (from the
    /// block nearest it, a live one before a freed one as near); `None`: all inside one.
    pub fn outside_blocks(&self, offset: i64, n: usize) -> Option<(i64, String)> {
        let end = |b: &Block| b.offset as i64 + b.asked as i64;
        let holder = self
            .blocks
            .iter()
            .find(|b| !b.freed && (b.offset as i64..end(b)).contains(&offset));
        let first = match holder {
            Some(b) if offset.saturating_add(n as i64) <= end(b) => return None,
            Some(b) => end(b),
            None => offset,
        };
        // A block has a byte at least (`alloc` refuses 0).
        let distance = |b: &&Block| {
            let (start, last) = (b.offset as i64, end(b) - 1);
            (start - first).max(first - last).max(0)
        };
        let Some(b) = self.blocks.iter().min_by_key(|b| (distance(b), b.freed)) else {
            return Some((first, "no block of the pool allocated".into()));
        };
        let block = b.words();
        let place = if first >= end(b) {
            format!("{} bytes past the end of {block}", first - end(b))
        } else if first >= b.offset as i64 {
            format!("{} bytes into {block}", first - b.offset as i64)
        } else {
            format!(
                "{} bytes before the start of {block}",
                b.offset as i64 - first
            )
        };
        Some((
            first,
            if b.freed {
                place + ", already freed"
            } else {
                place
            },
        ))
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
            let (lo, hi) = (p.max(b.ptr), end.min(b.ptr + b.asked));
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
