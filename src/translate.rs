//! The translation logic (contract §3 and §4), safe and free of FFI concerns.
//!
//! * `match(r, a) := (a & r.mask) == r.ptr` on all 64 bits (docs/original.md §4, the and/xor/or/beqz).
//! * `local(r, a) := r.window + (lo32(a) & !lo32(r.mask))`, a 32-bit wrapping add: only the
//!   low word of the offset counts (docs/original.md §4 finalizer, "GOTCHA").
//! * The first matching record wins (the unrolled scan runs 0..5 in order).
//! * A miss refills the round-robin victim among slots `0..3` (docs/original.md §6, the `% 3`).

use core::ptr::addr_of_mut;

use crate::layout::{MapRecord, TranslationCtx, RECORDS, REUSABLE_SLOTS};
use crate::window_reg::{RegisterAddress, WindowRegisters};

impl MapRecord {
    /// Whether `addr` belongs to this window: `(addr & mask) == ptr` (contract §3).
    #[inline(always)]
    pub fn matches(&self, addr: u64) -> bool {
        addr & self.mask == self.ptr
    }

    /// [`MapRecord::matches`] as the hot paths compute it: on a 32-bit target word by word,
    /// low word first, each with its own exit (a miss usually differs in the low word and
    /// then costs half); on a 64-bit target as one compare.
    #[inline(always)]
    fn matches_fast(&self, addr: u64) -> bool {
        #[cfg(target_pointer_width = "64")]
        {
            addr & self.mask == self.ptr
        }
        #[cfg(not(target_pointer_width = "64"))]
        {
            self.matches_words(addr)
        }
    }

    /// [`MapRecord::matches`] word by word, low word first, each with its own exit: the
    /// 32-bit targets' form (the device's; the qemu tests run it, a 64-bit host never does).
    #[cfg(not(target_pointer_width = "64"))]
    #[inline(always)]
    fn matches_words(&self, addr: u64) -> bool {
        if (addr as u32) & (self.mask as u32) != self.ptr as u32 {
            return false;
        }
        ((addr >> 32) as u32) & ((self.mask >> 32) as u32) == (self.ptr >> 32) as u32
    }

    /// The 32-bit NX-local address of `addr` in this window (wrapping, low word only).
    #[inline(always)]
    pub fn local(&self, addr: u64) -> u32 {
        self.window
            .wrapping_add((addr as u32) & !(self.mask as u32))
    }

    /// `local(addr)` if `addr` belongs to this window: the hit path in one step.
    ///
    /// On a match `lo32(addr) & lo32(mask) == lo32(ptr)`, so the offset
    /// `lo32(addr) & !lo32(mask)` is `lo32(addr) - lo32(ptr)`: the tag already loaded for
    /// the compare gives the offset, and the mask need not be loaded again.
    #[inline(always)]
    pub fn try_local(&self, addr: u64) -> Option<u32> {
        if !self.matches_fast(addr) {
            return None;
        }
        Some(
            self.window
                .wrapping_add((addr as u32).wrapping_sub(self.ptr as u32)),
        )
    }

    /// The SoC range `(start, end)` (inclusive) of this window if `addr` belongs to it:
    /// the lookup's hit in one step (docs/contract.md §3: `start = ptr`,
    /// `end = ptr + !mask`).
    ///
    /// On a match `ptr` has no bit outside `mask` (it equals `addr & mask`), so the sum
    /// `ptr + !mask` never carries and is `ptr | !mask`: word by word on the 32-bit device,
    /// with no carry to propagate.
    #[inline(always)]
    pub fn try_mapping(&self, addr: u64) -> Option<(u64, u64)> {
        if !self.matches_fast(addr) {
            return None;
        }
        Some((self.ptr, self.ptr | !self.mask))
    }
}

/// Where an address currently lives: the result of a lookup hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// Index of the matching record (0..5).
    pub slot: usize,
    /// First SoC address the window maps (`*out_start`): the record's tag.
    pub start: u64,
    /// Last SoC address the window maps (`*out_end`, inclusive): `tag + !mask`.
    pub end: u64,
}

/// What a refill does: which record it takes, the tag it writes to the record and to the
/// record's window register, and where the cursor goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refill {
    /// The victim record, `next_alloc % 3`.
    pub slot: usize,
    /// The new tag, `addr & records[slot].mask`.
    pub tag: u64,
    /// The victim's window register.
    pub register: RegisterAddress,
    /// The translated address, `local(records[slot], addr)`.
    pub local: u32,
    /// The cursor after the refill, `(slot + 1) % 3`.
    pub next_alloc: u8,
}

/// A refill that must not happen: the victim's register address is unusable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefillError {
    /// The victim's `reg_location` (as the device uses it) is null or not 4-aligned; the
    /// original would store through it and fault (contract §4).
    BadRegister {
        /// The victim record.
        slot: usize,
        /// Its `reg_location`.
        reg_location: u64,
    },
}

/// The smallest address `>= x` that `r` matches, if any (`r` need not have a contiguous
/// mask: the addresses a record matches are `ptr | f` for every `f` within `!mask`).
///
/// Straight-line, without a loop over the bits: let `i` be the highest fixed bit where
/// `x` differs from the tag. If the tag has a 1 there, the answer keeps `x` above `i` and
/// takes the tag from `i` down (free bits 0). If the tag has a 0 there, `x` must be raised
/// at the lowest free bit above `i` where it has a 0, keeping `x` above that bit and the
/// tag below it; without such a bit, nothing at or after `x` matches.
#[inline]
pub fn next_member(r: &MapRecord, x: u64) -> Option<u64> {
    next_member_inline(r, x)
}

/// [`next_member`], always inlined (into [`cut_before_member`] on the device: straight-line
/// code with no loop, which keeps it provable path by path: docs/prove.md).
#[inline(always)]
fn next_member_inline(r: &MapRecord, x: u64) -> Option<u64> {
    let (p, m) = (r.ptr, r.mask);
    if r.is_empty() {
        return None;
    }
    let differ = (x & m) ^ p;
    if differ == 0 {
        return Some(x);
    }
    // Bits 0..=i set, for the highest differing bit i.
    let mut upto = differ;
    upto |= upto >> 1;
    upto |= upto >> 2;
    upto |= upto >> 4;
    upto |= upto >> 8;
    upto |= upto >> 16;
    upto |= upto >> 32;
    let top = upto ^ (upto >> 1);
    if p & top != 0 {
        return Some((x & !upto) | (p & upto));
    }
    let raisable = !m & !x & !upto;
    if raisable == 0 {
        return None;
    }
    let bit = raisable & raisable.wrapping_neg();
    let below = bit - 1;
    Some((x & !(bit | below)) | bit | (p & below))
}

/// `span` cut short at the first address at or after `addr` that `r` matches: the least
/// of `span` and that address's distance from `addr` (`span` when `r` matches nothing
/// there).
///
/// Never inlined: the device object keeps it a function of its own, which the validator
/// proves once against its contract and then takes at its word at every call of the span
/// (docs/prove.md), instead of proving the next-member arithmetic again inside each case.
#[inline(never)]
fn cut_before_member(r: &MapRecord, addr: u64, span: u64) -> u64 {
    match next_member_inline(r, addr) {
        Some(a) => span.min(a.wrapping_sub(addr)),
        None => span,
    }
}

/// The record a refill takes when the cursor is `next_alloc`: `next_alloc % 3`
/// ([`TranslationCtx::victim`]).
#[inline(always)]
pub const fn victim_of(next_alloc: u8) -> usize {
    (next_alloc % REUSABLE_SLOTS) as usize
}

impl core::fmt::Display for RefillError {
    #[inline]
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            RefillError::BadRegister { slot, reg_location } => write!(
                f,
                "refill victim slot {slot} has an unusable register location {reg_location:#x} \
                 (null or not 4-aligned)"
            ),
        }
    }
}

impl TranslationCtx {
    /// The first record that `addr` matches.
    #[inline(always)]
    pub fn find(&self, addr: u64) -> Option<usize> {
        self.records.iter().position(|r| r.matches(addr))
    }

    /// The local address of `addr` in the first window it matches.
    #[inline(always)]
    pub fn hit(&self, addr: u64) -> Option<u32> {
        self.hit_slot(addr).map(|(_, local)| local)
    }

    /// The first window `addr` matches and its local address there. The slot is a
    /// constant on each exit: where nothing uses it (the device object), it costs nothing.
    #[inline(always)]
    pub fn hit_slot(&self, addr: u64) -> Option<(usize, u32)> {
        // One early return per record (not `find_map`): on the device each hit then leaves
        // from its own block instead of joining a shared tail that re-derives the record.
        for k in 0..RECORDS {
            if let Some(local) = self.records[k].try_local(addr) {
                return Some((k, local));
            }
        }
        None
    }

    /// Side-effect-free lookup (`neuron_translate_mapping_lookup`): never refills.
    #[inline]
    pub fn lookup(&self, addr: u64) -> Option<Mapping> {
        // One early return per record, as in `hit`.
        for k in 0..RECORDS {
            if let Some((start, end)) = self.records[k].try_mapping(addr) {
                return Some(Mapping {
                    slot: k,
                    start,
                    end,
                });
            }
        }
        None
    }

    /// The record a refill would take: `next_alloc % 3` (contract §4: the original indexes
    /// with `next_alloc` as is and writes outside the records when it is 3 or more).
    #[inline(always)]
    pub fn victim(&self) -> usize {
        victim_of(self.next_alloc)
    }

    /// What a refill for `addr` would do, without doing it.
    #[inline(always)]
    pub fn plan_refill(&self, addr: u64) -> Result<Refill, RefillError> {
        self.plan_refill_at(addr, self.victim())
    }

    /// [`TranslationCtx::plan_refill`] with the victim given (`slot < 3`).
    #[inline(always)]
    pub(crate) fn plan_refill_at(&self, addr: u64, slot: usize) -> Result<Refill, RefillError> {
        let r = &self.records[slot];
        let register = RegisterAddress::new(r.reg_location).ok_or(RefillError::BadRegister {
            slot,
            reg_location: r.reg_location,
        })?;
        let tag = addr & r.mask;
        // (v + 1) % 3 for v in 0..3, without a division.
        let next = slot + 1;
        let next_alloc = if next == usize::from(REUSABLE_SLOTS) {
            0
        } else {
            next as u8
        };
        // local(r, addr), with the offset as `lo - (lo & mask)`: the low word of the tag
        // is already at hand, and `!mask` would cost two more instructions.
        let lo = addr as u32;
        let local = r.window.wrapping_add(lo.wrapping_sub(tag as u32));
        Ok(Refill {
            slot,
            tag,
            register,
            local,
            next_alloc,
        })
    }

    /// Performs a planned refill: the record's tag, then the register (through `regs`),
    /// then the cursor, in the original's order (docs/contract.md §3). A plan whose slot is
    /// not a record (only a hand-made [`Refill`] can have one) changes nothing.
    #[inline(always)]
    pub fn apply_refill<R: WindowRegisters + ?Sized>(&mut self, plan: &Refill, regs: &mut R) {
        if plan.slot < RECORDS {
            // SAFETY: `self` is a unique reference, so the pointer is valid for writes and
            // nothing else reaches the table; the slot was checked.
            unsafe { apply_refill_in_place(self, plan, regs) }
        }
    }

    /// How many bytes from `addr` translate contiguously through record `slot` (which
    /// `addr` must match, first), at most `len`: the span stops at the end of the record's
    /// window, at the top of the 32-bit local space (where the local address would wrap),
    /// and before the first address an earlier record matches (it would win there).
    ///
    /// All in 64 bits, and one unrolled step per earlier record instead of a loop, each a
    /// call of [`cut_before_member`].
    #[inline]
    pub fn span_at(&self, slot: usize, addr: u64, local: u32, len: u64) -> u64 {
        let Some(r) = self.records.get(slot) else {
            return 0;
        };
        // The record's run: up to the end of the aligned block of the mask's lowest fixed
        // bit, past which a carry changes a tag bit. `block` is the block's size less one
        // (all ones for a mask of 0, whose block is the whole space: the run is then 2^64
        // less the address, which saturates to u64::MAX, above any `len`).
        let block = r.mask.wrapping_sub(1) & !r.mask;
        let run = (block - (addr & block)).saturating_add(1);
        let local_room = (1u64 << 32) - u64::from(local);
        let mut span = len.min(run).min(local_room);
        let mut before = |j: usize| {
            if j < slot {
                span = cut_before_member(&self.records[j], addr, span);
            }
        };
        // Records 0..slot, slot < RECORDS.
        before(0);
        before(1);
        before(2);
        before(3);
        const _: () = assert!(RECORDS == 5);
        span
    }

    /// [`TranslationCtx::translate`] plus the span: the local address of `addr` (refilling
    /// on a miss, exactly as `translate`) and how many bytes from it stay in the same
    /// window, at most `len` (see [`TranslationCtx::span_at`]). `len == 0` translates as
    /// usual and gives a span of 0.
    pub fn translate_span<R: WindowRegisters + ?Sized>(
        &mut self,
        addr: u64,
        len: u64,
        regs: &mut R,
    ) -> Result<(u32, u64), RefillError> {
        // SAFETY: `self` is a unique reference: valid for writes, reached by nothing else.
        unsafe { translate_span_in_place(self, addr, len, regs) }
    }

    /// Translates `addr` (`neuron_translate`): the matching window's local address, or,
    /// on a miss, a refill of the victim window (which programs its register through
    /// `regs`) and the local address there.
    ///
    /// A hit changes nothing. A refill whose victim has an unusable register address
    /// changes nothing and returns the error; the FFI traps on it.
    #[inline(always)]
    pub fn translate<R: WindowRegisters + ?Sized>(
        &mut self,
        addr: u64,
        regs: &mut R,
    ) -> Result<u32, RefillError> {
        if let Some(local) = self.hit(addr) {
            return Ok(local);
        }
        let plan = self.plan_refill(addr)?;
        self.apply_refill(&plan, regs);
        Ok(plan.local)
    }
}

// The steps that write, on a table reached through a raw pointer. They are the one
// implementation of each: the safe methods above call them with `self`, and the C entry
// points (abi.rs) with the caller's pointer. A C caller's register block may alias the
// table itself (docs/contract.md §4: any contents are allowed), so no reference to the
// table may be live across the register stores: every write goes through a raw place, and
// every read through a reference that ends before the next write.

/// [`TranslationCtx::apply_refill`] on a table behind a pointer.
///
/// # Safety
///
/// `ctx` is valid for reads and writes and 8-aligned, no reference to `*ctx` is live, and
/// `plan.slot < RECORDS`. `regs` may store anywhere its own contract allows, the table
/// included.
#[inline(always)]
pub(crate) unsafe fn apply_refill_in_place<R: WindowRegisters + ?Sized>(
    ctx: *mut TranslationCtx,
    plan: &Refill,
    regs: &mut R,
) {
    // SAFETY: the caller's contract: valid, unaliased by references, slot in range.
    unsafe {
        let victim = addr_of_mut!((*ctx).records)
            .cast::<MapRecord>()
            .add(plan.slot);
        addr_of_mut!((*victim).ptr).write(plan.tag);
        regs.program(plan.register, plan.tag);
        addr_of_mut!((*ctx).next_alloc).write(plan.next_alloc);
    }
}

/// [`TranslationCtx::translate_span`] on a table behind a pointer. When the refill's
/// register block aliases the victim's own record, the record may no longer match `addr`
/// after the stores, or may give it another local address (its `window` overwritten):
/// nothing then translates contiguously from the returned address, and the span is 0.
///
/// # Safety
///
/// As [`apply_refill_in_place`], less the slot (the victim is computed here).
#[inline]
pub(crate) unsafe fn translate_span_in_place<R: WindowRegisters + ?Sized>(
    ctx: *mut TranslationCtx,
    addr: u64,
    len: u64,
    regs: &mut R,
) -> Result<(u32, u64), RefillError> {
    let found = {
        // SAFETY: valid by the caller's contract; this reference ends before any write.
        let t = unsafe { &*ctx };
        match t.find(addr) {
            Some(k) => Ok((k, t.records[k].local(addr))),
            None => Err(t.plan_refill(addr)?),
        }
    };
    let (slot, local) = match found {
        Ok(hit) => hit,
        Err(plan) => {
            // SAFETY: the caller's contract; `plan.slot < 3`.
            unsafe { apply_refill_in_place(ctx, &plan, regs) };
            (plan.slot, plan.local)
        }
    };
    // SAFETY: as above; nothing writes while this reference lives.
    let t = unsafe { &*ctx };
    let r = &t.records[slot];
    let span = if r.matches(addr) && r.local(addr) == local {
        t.span_at(slot, addr, local, len)
    } else {
        0
    };
    Ok((local, span))
}
