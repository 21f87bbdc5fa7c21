//! Where a signal interrupted a child (a fault, a timeout): the program counter, stack and
//! frame pointers of its context, and the stack of calls that led there, found from a
//! signal handler (nothing here allocates or takes a lock).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::base::stack::backtrace;

/// Frames a timeout report keeps.
pub(crate) const STACK_FRAMES: usize = 32;

/// The main executable's code, `[first, end)`, once [`catch_faults`] or [`catch_timeout`]
/// ran: the kernels' and the SDK's code, not the C library's.
static CODE: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];

pub(crate) fn remember_code() {
    let code = crate::base::local::image_code();
    let first = code.iter().map(|c| c.0).min().unwrap_or(0);
    let end = code.iter().map(|c| c.1).max().unwrap_or(0);
    CODE[0].store(first, Ordering::Relaxed);
    CODE[1].store(end, Ordering::Relaxed);
}

fn in_code(addr: u64) -> bool {
    (CODE[0].load(Ordering::Relaxed) as u64..CODE[1].load(Ordering::Relaxed) as u64).contains(&addr)
}

/// Words of the interrupted stack searched for a return address into the program.
const SCANNED_WORDS: usize = 64;

/// Where a signal interrupted the program: its program counter, stack pointer and frame
/// pointer.
#[derive(Clone, Copy)]
pub(crate) struct Interrupted {
    pub(crate) pc: u64,
    pub(crate) sp: u64,
    fp: u64,
}

impl Interrupted {
    /// Its program counter, stack pointer and frame pointer, each arch's registers.
    ///
    /// # Safety
    /// `c` is the context a signal handler was given.
    pub(crate) unsafe fn of(c: *const libc::ucontext_t) -> Interrupted {
        // SAFETY: the caller's contract.
        let m = unsafe { &(*c).uc_mcontext };
        #[cfg(target_arch = "x86_64")]
        let (pc, sp, fp) = {
            let r = |k: libc::c_int| m.gregs[k as usize] as u64;
            (r(libc::REG_RIP), r(libc::REG_RSP), r(libc::REG_RBP))
        };
        #[cfg(target_arch = "x86")]
        let (pc, sp, fp) = {
            let r = |k: libc::c_int| u64::from(m.gregs[k as usize] as u32);
            (r(libc::REG_EIP), r(libc::REG_ESP), r(libc::REG_EBP))
        };
        #[cfg(target_arch = "aarch64")]
        let (pc, sp, fp) = (m.pc, m.sp, m.regs[29]);
        Interrupted { pc, sp, fp }
    }
}

/// The interrupted stack: the pc, then its callers (the frames `backtrace` gives past the
/// pc; the pc alone when the unwinder did not reach it). When the pc is in the C library
/// and none of the unwinder's frames is in the program (the i386 C library's `memcpy`
/// unwinds to nonsense), the callers are found as a debugger without unwind tables finds
/// them: the first word at the stack pointer or above it that points into the program's
/// code (the return address of the call that left the program: a leaf function such as
/// `memcpy` pushes a few registers at most), then the frame pointers' chain (ntx compiles
/// kernels with frame pointers), each link checked before it is followed.
pub(crate) fn interrupted_stack(at: Interrupted) -> ([u64; STACK_FRAMES], usize) {
    let (mut stack, mut len) = unwound_stack(at.pc);
    if in_code(at.pc) || stack[1..len].iter().any(|f| in_code(*f)) || at.sp == 0 {
        return (stack, len);
    }
    let found = (0..SCANNED_WORDS as u64)
        .filter_map(|k| read_word(at.sp + k * WORD))
        .find(|w| in_code(*w));
    let Some(caller) = found else {
        return (stack, len);
    };
    (stack[1], len) = (caller, 2);
    let mut fp = at.fp;
    while len < STACK_FRAMES && fp >= at.sp && fp.is_multiple_of(WORD) && fp - at.sp < 64 << 20 {
        let (Some(next), Some(ret)) = (read_word(fp), read_word(fp + WORD)) else {
            break;
        };
        if !in_code(ret) || next <= fp {
            break;
        }
        stack[len] = ret;
        len += 1;
        fp = next;
    }
    (stack, len)
}

/// Bytes in a word of the stack.
const WORD: u64 = core::mem::size_of::<usize>() as u64;

/// The word at `addr` of this process's memory, or `None` where nothing readable is
/// (`process_vm_readv` fails where a load would fault; it is safe in a signal handler).
fn read_word(addr: u64) -> Option<u64> {
    let mut word = 0usize;
    let local = libc::iovec {
        iov_base: (&raw mut word).cast(),
        iov_len: WORD as usize,
    };
    let remote = libc::iovec {
        iov_base: usize::try_from(addr).ok()? as *mut libc::c_void,
        iov_len: WORD as usize,
    };
    // SAFETY: one local buffer of the word's size; the remote side is only read, by the
    // kernel, which reports a fault instead of taking it.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    (n == WORD as isize).then_some(word as u64)
}

/// [`interrupted_stack`] as the unwinder gives it.
fn unwound_stack(pc: u64) -> ([u64; STACK_FRAMES], usize) {
    let mut raw = [core::ptr::null_mut(); STACK_FRAMES + 8];
    // SAFETY: a buffer of its length; backtrace was called once before (catch_timeout), so
    // it does not load libgcc here, in a signal handler.
    let n = unsafe { backtrace(raw.as_mut_ptr(), raw.len() as libc::c_int) }.max(0) as usize;
    let mut stack = [0u64; STACK_FRAMES];
    let from = raw[..n].iter().position(|p| *p as u64 == pc);
    let frames = from.map_or(&[][..], |k| &raw[k..n]);
    stack[0] = pc;
    let mut len = 1;
    for p in frames.iter().skip(1).take(STACK_FRAMES - 1) {
        stack[len] = *p as u64;
        len += 1;
    }
    (stack, len)
}

/// Whether a faulting access was a store (x86 and x86-64: the page fault's error code).
///
/// # Safety
/// `c` is the context a signal handler was given.
pub(crate) unsafe fn store(c: *const libc::ucontext_t) -> Option<bool> {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    // SAFETY: the caller's contract.
    return Some(unsafe { (*c).uc_mcontext.gregs[libc::REG_ERR as usize] } & 2 != 0);
    #[cfg(not(any(target_arch = "x86_64", target_arch = "x86")))]
    return None;
}
