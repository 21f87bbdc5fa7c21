//! The window table exactly as the device reads it (contract §2, docs/original.md §2: DWARF, OBSERVED).
//!
//! ```text
//! _map_record_t  (32 bytes, align 8)     _translation_ctx_t (168 bytes, align 8)
//!  +0  uint64_t ptr          tag           +0    _map_record_t records[5]
//!  +8  uint32_t window       NX-local base +160  uint8_t next_alloc
//!  +12 (4 bytes padding)                   +161  (7 bytes padding)
//!  +16 uint64_t mask
//!  +24 uint64_t reg_location SoC window register (MMIO)
//! ```
//!
//! The padding is spelled out as fields so that the offsets are the same on every target
//! (on i686, for instance, `u64` is only 4-aligned and implicit padding would move `mask`),
//! and so that every byte of a table has a defined value. The pins below are checked on
//! every target the crate is compiled for, the device included.

use static_assertions::{assert_eq_size, const_assert_eq};

// The doc comments of the items cbindgen exports (the two constants, the two types and
// their fields) are copied into the C header: they are written for C and C++ readers too.

/// Number of windows in a table.
pub const RECORDS: usize = 5;
/// Number of reusable windows: a refill replaces windows 0, 1 and 2 in turn; windows 3 and
/// 4 are never replaced.
pub const REUSABLE_SLOTS: u8 = 3;

/// One translation window, `_map_record_t` (32 bytes).
///
/// A 64-bit SoC address `a` belongs to the window when `(a & mask) == ptr`; it then
/// translates to the 32-bit local address `window + ((uint32_t)a & ~(uint32_t)mask)`.
#[repr(C, align(8))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct MapRecord {
    /// The masked tag: the value `addr & mask` takes for every address in the window.
    pub ptr: u64,
    /// NX-local base address of the window (32-bit).
    pub window: u32,
    /// Padding (implicit in the original; always written as 0 by this library).
    pub _pad: u32,
    /// Selects the tag bits; `~mask` selects the offset bits.
    pub mask: u64,
    /// NX-local address of the window register a refill of this window programs (on the
    /// device only the low 32 bits are used); 0 for a window that is never refilled.
    pub reg_location: u64,
}

/// The window table, `_translation_ctx_t` (168 bytes).
#[repr(C, align(8))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TranslationCtx {
    /// The five windows, searched in order.
    pub records: [MapRecord; RECORDS],
    /// The reusable window (0, 1 or 2) the next refill replaces.
    pub next_alloc: u8,
    /// Tail padding (always written as 0 by this library).
    pub _pad: [u8; 7],
}

/// The all-zero table, as `.bss` holds it before `_init_translate_ctx`. Note that a zero
/// record (mask 0, tag 0) matches *every* address: use [`TranslationCtx::empty`] for a
/// table that matches nothing.
impl Default for TranslationCtx {
    fn default() -> Self {
        TranslationCtx {
            records: [MapRecord::default(); RECORDS],
            next_alloc: 0,
            _pad: [0; 7],
        }
    }
}

/// Byte offsets of the fields, as the device code addresses them.
pub mod offsets {
    /// `_map_record_t::ptr`.
    pub const PTR: usize = 0;
    /// `_map_record_t::window`.
    pub const WINDOW: usize = 8;
    /// `_map_record_t::mask`.
    pub const MASK: usize = 16;
    /// `_map_record_t::reg_location`.
    pub const REG_LOCATION: usize = 24;
    /// `sizeof(_map_record_t)`.
    pub const RECORD_SIZE: usize = 32;
    /// `_translation_ctx_t::records`.
    pub const RECORD_ARRAY: usize = 0;
    /// `_translation_ctx_t::next_alloc`.
    pub const NEXT_ALLOC: usize = 160;
    /// `sizeof(_translation_ctx_t)`.
    pub const CTX_SIZE: usize = 168;
    /// Alignment of both types.
    pub const ALIGN: usize = 8;
}

assert_eq_size!(MapRecord, [u8; offsets::RECORD_SIZE]);
assert_eq_size!(TranslationCtx, [u8; offsets::CTX_SIZE]);
const_assert_eq!(core::mem::align_of::<MapRecord>(), offsets::ALIGN);
const_assert_eq!(core::mem::align_of::<TranslationCtx>(), offsets::ALIGN);
const_assert_eq!(core::mem::offset_of!(MapRecord, ptr), offsets::PTR);
const_assert_eq!(core::mem::offset_of!(MapRecord, window), offsets::WINDOW);
const_assert_eq!(core::mem::offset_of!(MapRecord, mask), offsets::MASK);
const_assert_eq!(
    core::mem::offset_of!(MapRecord, reg_location),
    offsets::REG_LOCATION
);
const_assert_eq!(
    core::mem::offset_of!(TranslationCtx, records),
    offsets::RECORD_ARRAY
);
const_assert_eq!(
    core::mem::offset_of!(TranslationCtx, next_alloc),
    offsets::NEXT_ALLOC
);

/// Whether `mask` is contiguous, `!(2^k - 1)` for some `k` in 0..=64: a record with it
/// matches one aligned block of addresses.
#[inline(always)]
pub const fn mask_is_contiguous(mask: u64) -> bool {
    let free = !mask;
    free & free.wrapping_add(1) == 0
}

impl MapRecord {
    /// Whether no address matches this record: its tag has a bit outside its mask, which
    /// a masked address never has.
    #[inline(always)]
    pub const fn is_empty(&self) -> bool {
        self.ptr & !self.mask != 0
    }

    /// Whether some address matches both records: neither is empty, and their tags agree
    /// on the bits both masks fix.
    #[inline(always)]
    pub const fn overlaps(&self, other: &MapRecord) -> bool {
        !self.is_empty()
            && !other.is_empty()
            && (self.ptr ^ other.ptr) & self.mask & other.mask == 0
    }

    /// Whether the record's mask is contiguous ([`mask_is_contiguous`]).
    #[inline(always)]
    pub const fn has_contiguous_mask(&self) -> bool {
        mask_is_contiguous(self.mask)
    }

    /// A record that no address matches: its tag has a bit outside its mask, which a
    /// masked address never has. (A mask of all ones has no such bit: the tag is then 0,
    /// which matches address 0 only.)
    #[inline]
    pub const fn empty(window: u32, mask: u64, reg_location: u64) -> Self {
        MapRecord {
            ptr: !mask & mask.wrapping_add(1),
            window,
            _pad: 0,
            mask,
            reg_location,
        }
    }
}

/// The byte offset, in a table's image, of the field at `offset` of record `k`.
#[inline(always)]
const fn field(k: usize, offset: usize) -> usize {
    offsets::RECORD_ARRAY + k * offsets::RECORD_SIZE + offset
}

impl TranslationCtx {
    /// A table whose five records match nothing (mask `!0xFFF`, window 0, no register).
    #[inline]
    pub const fn empty() -> Self {
        TranslationCtx {
            records: [MapRecord::empty(0, !0xFFF, 0); RECORDS],
            next_alloc: 0,
            _pad: [0; 7],
        }
    }

    /// The exact little-endian image the device reads (168 bytes).
    #[inline]
    #[allow(clippy::wrong_self_convention)] // 168 bytes: by reference, though Copy
    pub fn to_bytes(&self) -> [u8; offsets::CTX_SIZE] {
        let mut out = [0u8; offsets::CTX_SIZE];
        for (k, r) in self.records.iter().enumerate() {
            out[field(k, offsets::PTR)..][..8].copy_from_slice(&r.ptr.to_le_bytes());
            out[field(k, offsets::WINDOW)..][..4].copy_from_slice(&r.window.to_le_bytes());
            out[field(k, offsets::WINDOW + 4)..][..4].copy_from_slice(&r._pad.to_le_bytes());
            out[field(k, offsets::MASK)..][..8].copy_from_slice(&r.mask.to_le_bytes());
            out[field(k, offsets::REG_LOCATION)..][..8]
                .copy_from_slice(&r.reg_location.to_le_bytes());
        }
        out[offsets::NEXT_ALLOC] = self.next_alloc;
        out[offsets::NEXT_ALLOC + 1..].copy_from_slice(&self._pad);
        out
    }

    /// Reads a table from its little-endian image. Every byte pattern is a valid table.
    #[inline]
    pub fn from_bytes(bytes: &[u8; offsets::CTX_SIZE]) -> Self {
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap_or([0; 8]));
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap_or([0; 4]));
        let mut ctx = TranslationCtx::default();
        for (k, r) in ctx.records.iter_mut().enumerate() {
            *r = MapRecord {
                ptr: u64_at(field(k, offsets::PTR)),
                window: u32_at(field(k, offsets::WINDOW)),
                _pad: u32_at(field(k, offsets::WINDOW + 4)),
                mask: u64_at(field(k, offsets::MASK)),
                reg_location: u64_at(field(k, offsets::REG_LOCATION)),
            };
        }
        ctx.next_alloc = bytes[offsets::NEXT_ALLOC];
        ctx._pad.copy_from_slice(&bytes[offsets::NEXT_ALLOC + 1..]);
        ctx
    }
}
