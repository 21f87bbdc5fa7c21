//! The exported C ABI of `translation.o` (contract §1) and its hardening (contract §4).
//!
//! This is the unsafe boundary: raw pointers are checked and turned into references here,
//! and everything else is done by the safe code in `translate.rs` and `init.rs`. Names come
//! from the one table in `symbols.rs`.
//!
//! # Safety contract for C callers
//!
//! `ctx` is NULL or points to a readable, 8-aligned `_translation_ctx_t` (writable for
//! `neuron_translate`). Every reusable record's `reg_location` whose slot a refill may pick
//! is null or not 4-aligned (the call then traps) or the address of an 8-byte window
//! register block. The outputs of the lookup and the span are NULL or valid
//! `unsigned long long` locations. `_init_translate_ctx` needs the NX register block mapped
//! at NX-local `0x0010_0000` (always so on the device; a host maps a page there). Any table
//! *contents* are fine: there is no content for which this code reads or writes outside
//! the table and the victim's register block.

use core::ffi::c_void;
use core::ptr::{addr_of, addr_of_mut};

use crate::init::{initial_table, sbuf_window, InitInputs};
use crate::layout::{MapRecord, TranslationCtx, RECORDS, REUSABLE_SLOTS};
use crate::regs::read_engine_base;
use crate::translate::{apply_refill_in_place, translate_span_in_place};

/// The register sink the exported functions write through: the device's MMIO, or, with
/// the host model compiled in (feature `sim`), the same stores observed by the model. The
/// model plugs in here and nowhere below this layer.
#[cfg(not(nt_sim))]
type Registers = crate::window_reg::Mmio;
#[cfg(nt_sim)]
type Registers = crate::model::hooks::Observed;

// The object's `.bss` holds `_ctx` at offset 0 and `_sbuf_window` at offset 8, as the
// original's does (docs/contract.md §1); the table has a `.bss.*` section of its own, so
// that nothing else can land between or before them (rustc does not emit statics in
// source order). abi-tests/tests/device_object.rs checks the offsets.

/// `_ctx`:
#[doc = sym_doc!(ctx)]
///
/// A C object of type `_translation_ctx_t *` in `.bss` (4 bytes on the device).
#[export_name = sym!(ctx)]
#[cfg_attr(target_arch = "xtensa", link_section = ".bss")]
pub static mut CTX: *mut TranslationCtx = core::ptr::null_mut();

/// `_sbuf_window`:
#[doc = sym_doc!(sbuf_window)]
///
/// A C object of type `uint64_t` in `.bss`, 8 bytes, 8-aligned.
#[export_name = sym!(sbuf_window)]
#[cfg_attr(target_arch = "xtensa", link_section = ".bss")]
pub static mut SBUF_WINDOW: u64 = 0;

/// The storage `_init_translate_ctx` fills: a local `.bss` object. DECIDED (docs/contract.md
/// §3): the public decode infers, with medium confidence, that the original keeps the table
/// in the region `data_scratch_map` describes; writing through a pointer whose meaning is
/// only inferred is the riskier choice. This is the one place to change that.
#[cfg_attr(target_arch = "xtensa", link_section = ".bss.neuron_translate_table")]
static mut TABLE: TranslationCtx = TranslationCtx {
    records: [MapRecord {
        ptr: 0,
        window: 0,
        _pad: 0,
        mask: 0,
        reg_location: 0,
    }; RECORDS],
    next_alloc: 0,
    _pad: [0; 7],
};

extern "C" {
    /// `extended_isa::sdk::hbm_scratch` (start_exit.o): SoC address of the HBM scratch.
    #[link_name = sym!(hbm_scratch)]
    static HBM_SCRATCH: u64;
}

/// Stops the core (or the host process) without storing anything: the contract's
/// "traps deterministically" (§4).
#[cold]
#[inline(never)]
pub(crate) fn trap() -> ! {
    #[cfg(target_arch = "xtensa")]
    {
        extern "C" {
            // `ill` (illegal instruction), hand-written in xtensa/trap.s: upstream rustc
            // has no inline assembly for Xtensa, and `llvm.trap` would import `abort`.
            fn __neuron_translate_trap() -> !;
        }
        // SAFETY: the routine takes no arguments and never returns.
        unsafe { __neuron_translate_trap() }
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `ud2` raises SIGILL; it touches no memory.
    unsafe {
        core::arch::asm!("ud2", options(noreturn, nomem, nostack))
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `udf` raises SIGILL; it touches no memory.
    unsafe {
        core::arch::asm!("udf #0", options(noreturn, nomem, nostack))
    }
    #[cfg(not(any(
        target_arch = "xtensa",
        target_arch = "x86_64",
        target_arch = "aarch64"
    )))]
    loop {
        // No trap instruction known for this architecture: stop here, storing nothing.
        core::hint::spin_loop()
    }
}

/// `void* neuron_translate(void* ctx, unsigned long long addr)`:
#[doc = sym_doc!(translate)]
///
/// # Safety
/// See the module documentation.
#[export_name = sym!(translate)]
pub unsafe extern "C" fn neuron_translate(ctx: *mut c_void, addr: u64) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { translate(ctx, addr) }
}

/// The body of `neuron_translate`.
///
/// With the host model compiled in (feature `sim`), one test of its flag comes first and
/// sends the call, while a model runs, to [`translate_observed`]: the path without a model
/// is then the device's, each hit leaving from its own block with nothing to count.
///
/// # Safety
/// See the module documentation.
#[inline(always)]
unsafe fn translate(ctx: *mut c_void, addr: u64) -> *mut c_void {
    #[cfg(nt_sim)]
    if crate::model::hooks::active() {
        // SAFETY: the caller's contract.
        return unsafe { translate_observed(ctx, addr) };
    }
    // SAFETY: the caller's contract.
    unsafe {
        translate_with(ctx, addr, |table, addr| {
            table.hit(addr).map(|local| local as usize as *mut c_void)
        })
    }
}

/// [`translate`] while a host model runs: the same, and the hit counted by its slot (the
/// count the caller's tail call).
///
/// # Safety
/// See the module documentation.
#[cfg(nt_sim)]
#[inline(never)]
unsafe fn translate_observed(ctx: *mut c_void, addr: u64) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe {
        translate_with(ctx, addr, |table, addr| {
            let (slot, _) = table.hit_slot(addr)?;
            Some(crate::model::hooks::count_hit(
                &table.records[slot],
                slot,
                addr,
            ))
        })
    }
}

/// `neuron_translate` with the hit path given: `hit` answers from the table, or `None` for
/// a miss, which refills.
///
/// # Safety
/// See the module documentation.
#[inline(always)]
unsafe fn translate_with(
    ctx: *mut c_void,
    addr: u64,
    hit: impl FnOnce(&TranslationCtx, u64) -> Option<*mut c_void>,
) -> *mut c_void {
    let ctx = ctx.cast::<TranslationCtx>();
    if ctx.is_null() {
        return core::ptr::null_mut();
    }
    // The hit path reads through a shared reference that ends before anything is written.
    let next_alloc = {
        // SAFETY: non-null, and valid and aligned by the caller's contract.
        let table = unsafe { &*ctx };
        if let Some(local) = hit(table, addr) {
            return local;
        }
        table.next_alloc
    };
    // SAFETY: as above.
    unsafe { miss(ctx, addr, next_alloc) }
}

/// The miss path of `neuron_translate`: refill the victim that `next_alloc` names.
///
/// Inlined on the device, where the budget counts every instruction of both paths; out of
/// line elsewhere, so that the hit path saves none of the registers the refill needs.
///
/// # Safety
/// `ctx` is valid (the module's contract).
#[cfg_attr(target_arch = "xtensa", inline(always))]
#[cfg_attr(not(target_arch = "xtensa"), inline(never))]
unsafe fn miss(ctx: *mut TranslationCtx, addr: u64, next_alloc: u8) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe {
        if next_alloc < REUSABLE_SLOTS {
            refill(ctx, addr, usize::from(next_alloc))
        } else {
            refill_out_of_range(ctx, addr)
        }
    }
}

/// The refill of `neuron_translate`, victim `slot < 3` given.
///
/// # Safety
/// `ctx` is valid (the module's contract).
#[inline(always)]
unsafe fn refill(ctx: *mut TranslationCtx, addr: u64, slot: usize) -> *mut c_void {
    // SAFETY: valid by the caller's contract; the reference ends before the stores.
    let Ok(plan) = (unsafe { &*ctx }).plan_refill_at(addr, slot) else {
        trap()
    };
    // SAFETY: `plan.slot < 3`; the table is writable and no reference to it is live; the
    // register address was checked, and is a register block by the caller's contract.
    unsafe { apply_refill_in_place(ctx, &plan, &mut Registers::new()) };
    // The host model (feature `sim`) counts the refill by its slot.
    #[cfg(nt_sim)]
    crate::model::hooks::refilled(plan.slot, addr);
    plan.local as usize as *mut c_void
}

/// The refill with `next_alloc >= 3`, taken modulo 3 (contract §4). Out of line, so that
/// the usual path keeps the cursor as loaded: a value the code generator then knows to be
/// below 3, which needs no masking and no range check.
///
/// # Safety
/// As [`refill`].
#[cold]
#[inline(never)]
unsafe fn refill_out_of_range(ctx: *mut TranslationCtx, addr: u64) -> *mut c_void {
    // SAFETY: as the caller's.
    unsafe { refill(ctx, addr, (*ctx).victim()) }
}

/// `void* neuron_translate_span(void* ctx, unsigned long long addr, unsigned long long len,
/// unsigned long long* out_span)`, this library's addition (C linkage):
#[doc = sym_doc!(translate_span)]
///
/// # Safety
/// As `neuron_translate`; `out_span` is NULL or a valid `unsigned long long` location.
#[export_name = sym!(translate_span)]
pub unsafe extern "C" fn neuron_translate_span(
    ctx: *mut c_void,
    addr: u64,
    len: u64,
    out_span: *mut u64,
) -> *mut c_void {
    let table = ctx.cast::<TranslationCtx>();
    let (local, span) = if table.is_null() {
        (core::ptr::null_mut(), 0)
    } else {
        // SAFETY: valid by the caller's contract, registers included.
        match unsafe { translate_span_in_place(table, addr, len, &mut Registers::new()) } {
            Ok((local, span)) => (local as usize as *mut c_void, span),
            Err(_) => trap(),
        }
    };
    if !out_span.is_null() {
        // SAFETY: valid by the caller's contract.
        unsafe { out_span.write(span) };
    }
    #[cfg(nt_sim)]
    crate::model::hooks::spanned(table, addr, len);
    local
}

/// `_translation_ctx_t* neuron_translate_ctx()`:
#[doc = sym_doc!(translate_ctx)]
#[export_name = sym!(translate_ctx)]
pub extern "C" fn neuron_translate_ctx() -> *mut TranslationCtx {
    // SAFETY: a plain read of a pointer-sized static; the library is single-threaded per
    // core, as the original is.
    unsafe { addr_of!(CTX).read() }
}

/// `int neuron_translate_mapping_lookup(void* ctx, unsigned long long addr,
/// unsigned long long* out_start, unsigned long long* out_end)`:
#[doc = sym_doc!(mapping_lookup)]
///
/// The device object's lookup is `xtensa/lookup.s`, written by hand (the compiler's code
/// for this function takes three more instructions on a hit); this is the host's, and the
/// behaviour both are held to (docs/contract.md §3, §4).
///
/// # Safety
/// See the module documentation.
#[cfg(not(target_arch = "xtensa"))]
#[export_name = sym!(mapping_lookup)]
pub unsafe extern "C" fn neuron_translate_mapping_lookup(
    ctx: *mut c_void,
    addr: u64,
    out_start: *mut u64,
    out_end: *mut u64,
) -> core::ffi::c_int {
    // SAFETY: NULL or valid and aligned by the caller's contract.
    let Some(table) = (unsafe { ctx.cast::<TranslationCtx>().as_ref() }) else {
        return -1;
    };
    let Some(m) = table.lookup(addr) else {
        return -1;
    };
    // SAFETY: each output is NULL (skipped) or valid by the caller's contract.
    unsafe {
        if !out_start.is_null() {
            out_start.write(m.start);
        }
        if !out_end.is_null() {
            out_end.write(m.end);
        }
    }
    0
}

/// `void _init_translate_ctx()`:
#[doc = sym_doc!(init_translate_ctx)]
#[export_name = sym!(init_translate_ctx)]
pub extern "C" fn _init_translate_ctx() {
    // SAFETY: the register block is mapped (the function's documented precondition: on
    // the device it always is); hbm_scratch is defined by start_exit.o and only read.
    let inputs = unsafe {
        InitInputs {
            engine_base: read_engine_base(),
            hbm_scratch: addr_of!(HBM_SCRATCH).read(),
        }
    };
    let table = addr_of_mut!(TABLE);
    // SAFETY: the globals are only reached through `_ctx` and `_sbuf_window`, by callers
    // of this single-threaded library; no reference to them is live here.
    unsafe {
        addr_of_mut!(SBUF_WINDOW).write(sbuf_window(inputs.engine_base));
        table.write(initial_table(&inputs));
        addr_of_mut!(CTX).write(table);
    }
}
