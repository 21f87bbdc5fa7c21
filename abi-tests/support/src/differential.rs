//! One differential step: a call through the library's exported C ABI and through the
//! seed's reference C model, on two copies of one table, each with its own register bank;
//! then results, table bytes and register stores are compared. Used by the differential
//! test (abi-tests/library/tests/differential.rs) and by the `translate_diff` fuzz target.
//!
//! The library deviates from the seed on purpose in these places, each modelled by name
//! and each checked against the contract instead of the model:
//!
//! * `D1_REFILL_MASK`: the seed's miss path always maps a 16 MiB page (a fixed mask); the
//!   library uses the victim record's own mask (contract §3, DECIDED). Refills of a victim
//!   whose mask is that page mask are compared with the model; the others against the
//!   contract's formula, after which the model is brought to the library's state.
//! * `D2_NEXT_ALLOC_RANGE`: the seed indexes `records[next_alloc]` as is; the library uses
//!   `next_alloc % 3` (contract §4). The model is handed `next_alloc % 3`.
//! * `D3_NULL_POINTERS` and `D4_BAD_REGISTER`: the model would fault; a [`Pair`] never
//!   passes them (abi-tests/library/tests/ffi_contract.rs checks the library's hardened behaviour).

use crate::gen::LibCall;
use crate::reference::{ref_mapping_lookup, ref_translate};
use crate::RegisterBank;
use neuron_translate::abi::{
    neuron_translate, neuron_translate_mapping_lookup, neuron_translate_span,
};
use neuron_translate::init::REFILL_MASK;
use neuron_translate::layout::REUSABLE_SLOTS;
use neuron_translate::TranslationCtx;

/// What a run exercised, so that a test can insist it exercised everything.
#[derive(Default, Debug, Clone, Copy)]
pub struct Counts {
    /// Translates that hit.
    pub hits: usize,
    /// Refills compared with the model.
    pub refills_compared: usize,
    /// Refills checked against the contract (D1).
    pub refills_d1: usize,
    /// Refills with next_alloc >= 3 (D2).
    pub d2_applied: usize,
    /// Lookups compared.
    pub lookups: usize,
}

/// The library's table and the model's, each bound to its own register bank.
pub struct Pair {
    bank_r: RegisterBank,
    bank_c: RegisterBank,
    /// The library's table.
    pub rust: TranslationCtx,
    model: TranslationCtx,
    /// What ran so far.
    pub counts: Counts,
}

impl Pair {
    /// Two copies of `table`, whose `reg_location`s are bank indices 0..5 (see
    /// [`crate::gen`]); every record gets a valid register block.
    pub fn new(table: &TranslationCtx) -> Pair {
        let mut bank_r = RegisterBank::default();
        let mut bank_c = RegisterBank::default();
        let rust = bank_r.bind(table);
        let model = bank_c.bind(table);
        Pair {
            bank_r,
            bank_c,
            rust,
            model,
            counts: Counts::default(),
        }
    }

    /// Runs `op` on both and compares; `Err` describes the first difference.
    pub fn step(&mut self, op: LibCall) -> Result<(), String> {
        let ctx_r = (&mut self.rust as *mut TranslationCtx).cast::<core::ffi::c_void>();
        let ctx_c = (&mut self.model as *mut TranslationCtx).cast::<core::ffi::c_void>();
        match op {
            LibCall::Lookup(a) => {
                self.counts.lookups += 1;
                let (mut wr, mut lr, mut wc, mut lc) = (0xAAu64, 0xBBu64, 0xAAu64, 0xBBu64);
                // SAFETY: valid tables and outputs.
                let (rr, rc) = unsafe {
                    (
                        neuron_translate_mapping_lookup(ctx_r, a, &mut wr, &mut lr),
                        ref_mapping_lookup(ctx_c, a, &mut wc, &mut lc),
                    )
                };
                if (rr, wr, lr) != (rc, wc, lc) {
                    return Err(format!(
                        "lookup({a:#x}): library {:?}, model {:?}",
                        (rr, wr, lr),
                        (rc, wc, lc)
                    ));
                }
            }
            LibCall::Translate(a) => {
                let hit = self.rust.find(a).is_some();
                let victim = self.rust.victim();
                if hit {
                    self.counts.hits += 1;
                } else if self.rust.next_alloc >= REUSABLE_SLOTS {
                    // D2_NEXT_ALLOC_RANGE
                    self.counts.d2_applied += 1;
                    self.model.next_alloc = self.rust.next_alloc % REUSABLE_SLOTS;
                }
                if hit || self.rust.records[victim].mask == REFILL_MASK {
                    if !hit {
                        self.counts.refills_compared += 1;
                    }
                    // SAFETY: valid tables; every register points into a bank.
                    let (xr, xc) = unsafe { (neuron_translate(ctx_r, a), ref_translate(ctx_c, a)) };
                    if !core::ptr::eq(xr, xc) {
                        return Err(format!(
                            "translate({a:#x}): library {:#x}, model {:#x}",
                            xr as usize, xc as usize
                        ));
                    }
                } else {
                    // D1_REFILL_MASK: the contract's refill with the record's own mask.
                    self.counts.refills_d1 += 1;
                    let before = self.rust;
                    // SAFETY: as above.
                    let xr = unsafe { neuron_translate(ctx_r, a) } as usize as u32;
                    let r = &before.records[victim];
                    let tag = a & r.mask;
                    if xr != r.window.wrapping_add(a as u32 & !(r.mask as u32)) {
                        return Err(format!("D1 refill translate({a:#x}) = {xr:#x}"));
                    }
                    let mut expect = before;
                    expect.records[victim].ptr = tag;
                    expect.next_alloc = ((victim + 1) % usize::from(REUSABLE_SLOTS)) as u8;
                    if self.rust != expect {
                        return Err(format!(
                            "D1 refill translate({a:#x}): table {:?}, expected {expect:?}",
                            self.rust
                        ));
                    }
                    let blk = 2 * victim;
                    if [self.bank_r.0[blk], self.bank_r.0[blk + 1]]
                        != [tag as u32, (tag >> 32) as u32]
                    {
                        return Err(format!(
                            "D1 refill translate({a:#x}): register block {victim}"
                        ));
                    }
                    // Bring the model to the same state.
                    self.model = self.bank_c.bind(&self.bank_r.unbind(&self.rust));
                    *self.bank_c.0 = *self.bank_r.0;
                }
            }
        }
        self.compare(&format!("{op:?}"))
    }

    /// `neuron_translate_span(addr, len)` on the library, checked against the safe API's
    /// `translate_span` on a copy (the model has no span), and the span checked against
    /// its definition at its ends; then the model is brought to the library's state.
    pub fn step_span(&mut self, addr: u64, len: u64) -> Result<(), String> {
        let mut expect = self.rust;
        let mut log = neuron_translate::RegisterLog::default();
        let want = expect
            .translate_span(addr, len, &mut log)
            .map_err(|e| format!("span: {e}"))?;
        let mut span = 0u64;
        let ctx_r = (&mut self.rust as *mut TranslationCtx).cast::<core::ffi::c_void>();
        // SAFETY: a valid table; every register points into a bank.
        let local = unsafe { neuron_translate_span(ctx_r, addr, len, &mut span) } as usize as u32;
        if (local, span) != want {
            return Err(format!(
                "span({addr:#x}, {len:#x}): library {:?}, safe API {want:?}",
                (local, span)
            ));
        }
        if self.rust != expect {
            return Err(format!(
                "span({addr:#x}, {len:#x}): table differs from the safe API's"
            ));
        }
        if span > len {
            return Err(format!("span({addr:#x}, {len:#x}) = {span:#x} > len"));
        }
        for i in [0, span / 2, span.wrapping_sub(1)] {
            if span == 0 {
                break;
            }
            let a = addr.wrapping_add(i);
            let k = self.rust.find(a);
            if k.map(|k| self.rust.records[k].local(a)) != Some(local.wrapping_add(i as u32)) {
                return Err(format!("span({addr:#x}, {len:#x}) = {span:#x}: +{i:#x} does not translate to local + {i:#x}"));
            }
        }
        self.model = self.bank_c.bind(&self.bank_r.unbind(&self.rust));
        *self.bank_c.0 = *self.bank_r.0;
        self.compare("span")
    }

    fn compare(&mut self, what: &str) -> Result<(), String> {
        let op = what;
        if self.bank_r.unbind(&self.rust) != self.bank_c.unbind(&self.model) {
            return Err(format!("tables differ after {op}"));
        }
        if *self.bank_r.0 != *self.bank_c.0 {
            return Err(format!(
                "registers differ after {op}: {:x?} vs {:x?}",
                self.bank_r.0, self.bank_c.0
            ));
        }
        Ok(())
    }
}
