//! The dataram heap model (`base::xmem`) against a transcription of the decode's xmem
//! algorithm as the decode writes it out: descriptors in an array of 32 with a bit each, a
//! free list and a taken list linked through them, head and tail sentinels. Random
//! sequences of allocations and frees (a fixed seed) give the same offsets and failures.

use crate::base::xmem::{Heap, DEFAULT_ALIGN, DESCRIPTORS, HEAP_BYTES};

const HEAD: usize = DESCRIPTORS;
const TAIL: usize = DESCRIPTORS + 1;
const ALLOC_HEAD: usize = DESCRIPTORS + 2;
const NONE: usize = usize::MAX;

/// `xmem_heap_block_t` by index; 32 descriptors and the three sentinels after them.
#[derive(Clone, Copy)]
struct Desc {
    next: usize,
    size: u64,
    buffer: u64,
    aligned: u64,
}

struct Oracle {
    d: Vec<Desc>,
    available: Vec<bool>,
}

impl Oracle {
    fn new() -> Oracle {
        let blank = Desc {
            next: NONE,
            size: 0,
            buffer: 0,
            aligned: 0,
        };
        let mut d = vec![blank; DESCRIPTORS + 3];
        d[TAIL] = Desc {
            next: NONE,
            size: u64::from(u32::MAX),
            buffer: u64::from(u32::MAX),
            aligned: u64::from(u32::MAX),
        };
        // xmem_heap_init: one free block over the whole pool, in descriptor 0.
        d[0] = Desc {
            next: TAIL,
            size: u64::from(HEAP_BYTES),
            buffer: 0,
            aligned: 0,
        };
        d[HEAD].next = 0;
        let mut available = vec![true; DESCRIPTORS];
        available[0] = false;
        Oracle { d, available }
    }

    fn new_size(&self, b: usize, size: u64, align: u64) -> u64 {
        let p = self.d[b].buffer;
        size + (p.div_ceil(align) * align - p)
    }

    fn alloc(&mut self, size: u32, align: u32) -> Option<u32> {
        let align = u64::from(if align == 0 { DEFAULT_ALIGN } else { align });
        let size = u64::from(size);
        let (mut prev, mut curr) = (HEAD, self.d[HEAD].next);
        let mut new_size = self.new_size(curr, size, align);
        while self.d[curr].size < new_size {
            prev = curr;
            curr = self.d[curr].next;
            new_size = self.new_size(curr, size, align);
        }
        if curr == TAIL {
            return None;
        }
        self.d[curr].aligned = self.d[curr].buffer + new_size - size;
        let r = self.d[curr].aligned;
        let idx = self.available.iter().position(|a| *a);
        match idx {
            Some(idx) if self.d[curr].size - new_size > 4 => {
                self.available[idx] = false;
                self.d[idx].size = self.d[curr].size - new_size;
                self.d[idx].buffer = self.d[curr].buffer + new_size;
                self.d[idx].aligned = self.d[idx].buffer;
                self.d[curr].size = new_size;
                self.d[idx].next = self.d[curr].next;
                self.d[prev].next = idx;
            }
            _ => self.d[prev].next = self.d[curr].next,
        }
        self.d[curr].next = self.d[ALLOC_HEAD].next;
        self.d[ALLOC_HEAD].next = curr;
        Some(r as u32)
    }

    fn free(&mut self, p: u32) -> bool {
        let (mut prev, mut block) = (ALLOC_HEAD, self.d[ALLOC_HEAD].next);
        while block != NONE && self.d[block].aligned != u64::from(p) {
            prev = block;
            block = self.d[block].next;
        }
        if block == NONE {
            return false;
        }
        self.d[prev].next = self.d[block].next;
        self.add_to_free_list(block);
        true
    }

    fn add_to_free_list(&mut self, mut nb: usize) {
        let mut block = HEAD;
        while self.d[self.d[block].next].buffer < self.d[nb].buffer {
            block = self.d[block].next;
        }
        let (mut merged_prev, mut merged_next) = (false, false);
        if block != HEAD && self.d[block].buffer + self.d[block].size == self.d[nb].buffer {
            self.d[block].size += self.d[nb].size;
            self.available[nb] = true;
            nb = block;
            merged_prev = true;
        }
        let next = self.d[block].next;
        if next != TAIL && self.d[nb].buffer + self.d[nb].size == self.d[next].buffer {
            self.available[next] = true;
            self.d[nb].size += self.d[next].size;
            self.d[nb].next = self.d[next].next;
            if !merged_prev {
                self.d[block].next = nb;
            }
            merged_next = true;
        }
        if !merged_prev && !merged_next {
            self.d[nb].next = self.d[block].next;
            self.d[block].next = nb;
        }
    }
}

/// xorshift64*, for sequences that are the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn the_heap_places_and_refuses_blocks_as_the_decodes_xmem_does() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut failures, mut descriptor_bound) = (0, 0);
    for _ in 0..300 {
        let (mut model, mut oracle) = (Heap::default(), Oracle::new());
        let mut live: Vec<u32> = Vec::new();
        for _ in 0..200 {
            if live.is_empty() || rng.below(3) > 0 {
                // Sizes from tiny (many descriptors) to whole 4 KiB buffers and past the pool.
                let size = match rng.below(4) {
                    0 => 1 + rng.below(16),
                    1 => 1 + rng.below(600),
                    2 => 4096,
                    _ => 1 + rng.below(u64::from(HEAP_BYTES) + 64),
                } as u32;
                let align = [0, 4, 16, 64, 128][rng.below(5) as usize];
                let got = model.alloc(size, align);
                assert_eq!(got, oracle.alloc(size, align), "alloc({size}, {align})");
                match got {
                    Some(at) => live.push(at),
                    None => failures += 1,
                }
            } else {
                let at = live.swap_remove(rng.below(live.len() as u64) as usize);
                assert!(model.free(at) && oracle.free(at));
            }
            descriptor_bound += usize::from(oracle.available.iter().all(|a| !a));
        }
        assert!(!model.free(1) && !oracle.free(1), "no block starts at 1");
    }
    // The sequences reach both edges: a full pool and every descriptor in use.
    assert!(
        failures > 100 && descriptor_bound > 100,
        "{failures} {descriptor_bound}"
    );
}

#[test]
fn four_stream_buffers_fill_the_pool_and_a_fifth_fails() {
    let mut h = Heap::default();
    let at: Vec<Option<u32>> = (0..5).map(|_| h.alloc(4096, 0)).collect();
    assert_eq!(at, [Some(0), Some(4096), Some(8192), Some(12288), None]);
    assert!(h.free(4096));
    assert_eq!(h.alloc(100, 0), Some(4096), "first fit");
    assert_eq!(
        h.alloc(100, 0),
        Some(4096 + 128),
        "the next 64-aligned start"
    );
    assert_eq!(h.taken_bytes(), 3 * 4096 + 100 + 128);
    assert_eq!(h.alloc(0, 0), None);
    assert_eq!(h.alloc(8, 3), None, "an alignment not a power of two");
}
