//! The floating-point unit's sticky invalid-operation flags, around a kernel on the host:
//! an invalid operation (`inf - inf`, `0 * inf`, `sqrt(-1)`) is the one way x86 makes its
//! default NaN, whose sign the Q7's has clear. A kernel that raised no flag made no such
//! NaN, so its output need not be searched for one (`run::checks::x86_default_nan`).
//! Both units are watched: SSE's (`MXCSR.IE`) and x87's (`FSW.IE`; the i386 C library's
//! maths and a float's return go through it).

/// SSE's control and status register.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn mxcsr() -> u32 {
    let mut csr: u32 = 0;
    // SAFETY: stores MXCSR into a local: reads only.
    unsafe { core::arch::asm!("stmxcsr [{p}]", p = in(reg) &mut csr, options(nostack)) };
    csr
}

/// Clears both units' exception flags (before a kernel runs).
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub fn clear() {
    let csr = mxcsr() & !0x3f;
    // SAFETY: loads MXCSR back with its six flags clear, and clears x87's exception flags:
    // no other state changes.
    unsafe {
        core::arch::asm!("ldmxcsr [{p}]", p = in(reg) &csr, options(nostack));
        core::arch::asm!("fnclex", options(nostack, nomem));
    }
}

/// Whether an invalid operation raised either unit's flag since [`clear`].
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub fn invalid_raised() -> bool {
    let sw: u16;
    // SAFETY: stores x87's status word into AX: reads only.
    unsafe { core::arch::asm!("fnstsw ax", out("ax") sw, options(nostack, nomem)) };
    mxcsr() & 1 != 0 || sw & 1 != 0
}

/// Elsewhere nothing is cleared.
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
pub fn clear() {}

/// Elsewhere the default NaN is not x86's: nothing to search for.
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
pub fn invalid_raised() -> bool {
    false
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_invalid_operation_raises_the_flag_and_a_valid_one_does_not() {
        super::clear();
        let inf = std::hint::black_box(f32::INFINITY);
        let fine = std::hint::black_box(inf + 1.0);
        assert!(!super::invalid_raised(), "{fine}");
        let nan = std::hint::black_box(inf - inf);
        assert!(super::invalid_raised(), "{nan}");
        super::clear();
        assert!(!super::invalid_raised());
    }
}
