//! The TCM pool: 16 KiB of a core's local memory, from which `tcm_malloc` allocates and each
//! fast stream accessor takes its 4 KiB buffer. First fit, 16-byte granules; the high-water
//! mark is what `--stats` reports.

/// Bytes in a core's pool.
pub const POOL_BYTES: usize = 16 * 1024;
/// Allocation granule (and alignment) in bytes.
const GRANULE: usize = 16;

/// One core's pool.
#[derive(Debug)]
pub struct Pool {
    memory: Box<[u128]>,
    /// Live blocks: (offset, bytes), sorted by offset.
    live: Vec<(usize, usize)>,
    in_use: usize,
    high_water: usize,
}

impl Default for Pool {
    fn default() -> Self {
        Pool {
            memory: vec![0u128; POOL_BYTES / 16].into_boxed_slice(),
            live: Vec::new(),
            in_use: 0,
            high_water: 0,
        }
    }
}

impl Pool {
    /// The pool's first byte's address.
    pub fn base(&self) -> usize {
        self.memory.as_ptr() as usize
    }

    /// A block of `bytes` (rounded up to 16), or `None` when no gap is large enough (0
    /// bytes: `None`, as `malloc(0)` may).
    pub fn alloc(&mut self, bytes: usize) -> Option<*mut u8> {
        if bytes == 0 || bytes > POOL_BYTES {
            return None;
        }
        let size = bytes.div_ceil(GRANULE) * GRANULE;
        let mut at = 0;
        let mut slot = self.live.len();
        for (k, (off, len)) in self.live.iter().enumerate() {
            if off - at >= size {
                slot = k;
                break;
            }
            at = off + len;
        }
        if slot == self.live.len() && POOL_BYTES - at < size {
            return None;
        }
        self.live.insert(slot, (at, size));
        self.in_use += size;
        self.high_water = self.high_water.max(self.in_use);
        Some((self.base() + at) as *mut u8)
    }

    /// Frees the block starting at `p`; false (nothing freed) if no live block starts there.
    pub fn free(&mut self, p: *const u8) -> bool {
        let off = (p as usize).wrapping_sub(self.base());
        match self.live.iter().position(|(o, _)| *o == off) {
            Some(k) => {
                self.in_use -= self.live.remove(k).1;
                true
            }
            None => false,
        }
    }

    /// The most bytes ever allocated at once.
    pub fn high_water(&self) -> usize {
        self.high_water
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(p.alloc(4000).unwrap(), b, "first fit reuses the gap");
        let outside = 0x1000usize as *const u8;
        assert!(!p.free(outside));
        assert!(p.free(a) && p.free(c));
        assert_eq!(p.high_water(), POOL_BYTES);
        assert_eq!(p.alloc(0), None);
        assert_eq!(p.alloc(POOL_BYTES + 1), None);
    }
}
