//! The device's dataram heap, as a model of where its blocks go and when an allocation
//! fails: the toolchain's xmem heap manager as the shipped library's `allocator.o` sets it up
//! for `neuron_dataram_allocate` (`tcm_malloc`, the stream accessors' 4 KiB buffers), read
//! from the public decode's "Device Memory Allocators" page (HIGH confidence there).
//!
//! A pool of 16 KiB; first fit over a free list sorted by address; each request aligned
//! (64 bytes unless asked otherwise), the alignment slack kept at the front of the block it
//! takes; the rest of that block split off as a free block when it is more than 4 bytes and
//! one of the heap's 32 block descriptors is free, else the whole block handed over; a
//! freed block merged at once with the free blocks either side of it. Addresses here are
//! offsets from the pool's first byte, which is taken as 64-aligned (MED: the pool starts
//! 0x42c bytes into `data_scratch_map`, whose address the decode does not give; a 64-aligned
//! start is what lets four 4 KiB stream buffers fit, as the guide says they do).
//!
//! The host's pool ([`crate::base::tcm::Pool`]) asks this model whether and where a block
//! goes, so `tcm_malloc` returns NULL here exactly when the device's heap would. The HBM
//! heap a kernel's own tensors come from is the same manager over another pool
//! ([`HBM_HEAP_BYTES`], `crate::percore::heap`).

/// The pool's bytes (`init_neuron_dataram_allocator`'s `0x4000`).
pub const HEAP_BYTES: u32 = crate::base::codes::TCM_POOL_BYTES as u32;
/// The HBM heap's pool as modelled: the decode gives no size (`init_neuron_hbm_allocator`
/// reads `hbm_scratch_size`, set by the firmware), so the model takes the most a 32-bit size
/// can ask for, and only its descriptors bound it; the SDK's HBM bounds the bytes
/// (`hbm-full`).
pub const HBM_HEAP_BYTES: u32 = 0xFFFF_FFC0;
/// Block descriptors a heap has (`num_blocks = 32`, not xmem's default 64).
pub const DESCRIPTORS: usize = 32;
/// The alignment `neuron_dataram_allocate` gives when asked for none.
pub const DEFAULT_ALIGN: u32 = crate::base::codes::TCM_ALIGN as u32;
/// A split's remainder is kept only when it is larger than this (`XMEM_HEAP_MIN_ALLOC_SIZE`).
const MIN_ALLOC: u32 = 4;

/// One block: where it starts (before alignment) and its bytes; for a taken block, where
/// the caller's bytes start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Block {
    buffer: u32,
    size: u32,
    aligned: u32,
}

/// One core's dataram heap.
#[derive(Debug, Clone)]
pub struct Heap {
    /// Free blocks, sorted by `buffer`.
    free: Vec<Block>,
    /// Taken blocks, most recent first (xmem pushes onto its list's front).
    taken: Vec<Block>,
}

impl Default for Heap {
    /// The dataram heap.
    fn default() -> Heap {
        Heap::new(HEAP_BYTES)
    }
}

impl Heap {
    /// A heap over a pool of `bytes` (a multiple of 64), all of it one free block.
    pub fn new(bytes: u32) -> Heap {
        Heap {
            free: vec![Block {
                buffer: 0,
                size: bytes,
                aligned: 0,
            }],
            taken: Vec::new(),
        }
    }

    /// Blocks taken (the allocations live).
    pub fn taken_count(&self) -> usize {
        self.taken.len()
    }

    /// Descriptors in use: one per block, free or taken.
    fn descriptors(&self) -> usize {
        self.free.len() + self.taken.len()
    }

    /// `size` bytes aligned to `align` (a power of two; 0: the default 64): the offset the
    /// caller's bytes start at, or `None` where the device's heap fails (no free block large
    /// enough, a size of 0, an alignment that is not a power of two).
    pub fn alloc(&mut self, size: u32, align: u32) -> Option<u32> {
        let align = if align == 0 { DEFAULT_ALIGN } else { align };
        if size == 0 || !align.is_power_of_two() {
            return None;
        }
        // First fit: the slack depends on each candidate's start.
        let (k, need) = self.free.iter().enumerate().find_map(|(k, b)| {
            let need = u64::from(b.buffer.next_multiple_of(align) - b.buffer) + u64::from(size);
            (u64::from(b.size) >= need).then_some((k, need as u32))
        })?;
        let mut block = self.free[k];
        block.aligned = block.buffer + need - size;
        if block.size - need > MIN_ALLOC && self.descriptors() < DESCRIPTORS {
            self.free[k] = Block {
                buffer: block.buffer + need,
                size: block.size - need,
                aligned: block.buffer + need,
            };
            block.size = need;
        } else {
            self.free.remove(k);
        }
        self.taken.insert(0, block);
        Some(block.aligned)
    }

    /// Frees the block whose caller's bytes start at `at`; false if none does (the device's
    /// `XMEM_ERR_PTR_OUT_OF_BOUNDS`). It merges with the free blocks either side.
    pub fn free(&mut self, at: u32) -> bool {
        let Some(k) = self.taken.iter().position(|b| b.aligned == at) else {
            return false;
        };
        let mut block = self.taken.remove(k);
        block.aligned = block.buffer;
        let k = self.free.partition_point(|b| b.buffer < block.buffer);
        let merges_left = k > 0 && self.free[k - 1].buffer + self.free[k - 1].size == block.buffer;
        let merges_right = k < self.free.len() && block.buffer + block.size == self.free[k].buffer;
        match (merges_left, merges_right) {
            (true, true) => {
                let right = self.free.remove(k);
                self.free[k - 1].size += block.size + right.size;
            }
            (true, false) => self.free[k - 1].size += block.size,
            (false, true) => {
                self.free[k].buffer = block.buffer;
                self.free[k].aligned = block.buffer;
                self.free[k].size += block.size;
            }
            (false, false) => self.free.insert(k, block),
        }
        true
    }

    /// The bytes from `at` to the end of the taken block whose caller's bytes start there.
    pub fn usable(&self, at: u32) -> Option<u32> {
        let b = self.taken.iter().find(|b| b.aligned == at)?;
        Some(b.buffer + b.size - at)
    }

    /// Bytes in taken blocks, their alignment slack included.
    pub fn taken_bytes(&self) -> u32 {
        self.taken.iter().map(|b| b.size).sum()
    }
}
