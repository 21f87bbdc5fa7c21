//! The NX register block on the host (docs/contract.md §5): a page mapped at the block's
//! NX-local address, so the unmodified `_init_translate_ctx` and refills run against it,
//! and a store log that records, in order, every store the library makes to the page.
//!
//! The page is one fixed address per process: hold [`crate::GLOBAL_LOCK`] while one is
//! mapped, or keep the test in a binary of its own.

use neuron_translate::regs::{ENGINE_BASE_ADDR, NX_REG_BASE, NX_REG_BLOCK_SIZE};

extern "C" {
    /// consumers/host_nx.h's `host_nx_map` (csrc/nx_page.c): the block, or NULL.
    fn nt_support_nx_map(engine_base: u64) -> *mut u32;
    /// consumers/host_nx.h's `host_nx_unmap`.
    fn nt_support_nx_unmap(regs: *mut u32);
}

/// Words in the block.
pub const WORDS: usize = NX_REG_BLOCK_SIZE as usize / 4;

/// The register block, mapped read-write at [`NX_REG_BASE`] and zeroed. Shared, so that a
/// forked child's stores are visible to the parent.
#[derive(Debug)]
pub struct RegisterPage {
    base: *mut u32,
}

impl RegisterPage {
    /// Maps the page (through the helper the C tests use, consumers/host_nx.h). Panics,
    /// saying why, if the address is taken or cannot be mapped.
    pub fn map() -> RegisterPage {
        assert!(
            NX_REG_BLOCK_SIZE as usize >= crate::guard::page(),
            "the block is smaller than a page"
        );
        // SAFETY: maps a fresh page at a fixed address that must not already be in use
        // (MAP_FIXED_NOREPLACE fails instead of replacing anything); engine base 0 leaves
        // the page all zeros.
        let p = unsafe { nt_support_nx_map(0) };
        assert!(
            !p.is_null(),
            "cannot map the NX register block at {NX_REG_BASE:#x}: {} (is the address in use, \
             or below vm.mmap_min_addr?)",
            std::io::Error::last_os_error()
        );
        RegisterPage { base: p }
    }

    /// The word at byte offset `offset` of the block.
    pub fn word(&self, offset: u32) -> u32 {
        assert!(offset.is_multiple_of(4) && (offset as usize) < NX_REG_BLOCK_SIZE as usize);
        // SAFETY: inside the mapping, aligned.
        unsafe { self.base.add(offset as usize / 4).read_volatile() }
    }

    /// Stores `value` at byte offset `offset`.
    pub fn set_word(&self, offset: u32, value: u32) {
        assert!(offset.is_multiple_of(4) && (offset as usize) < NX_REG_BLOCK_SIZE as usize);
        // SAFETY: inside the mapping, aligned.
        unsafe { self.base.add(offset as usize / 4).write_volatile(value) }
    }

    /// Writes `ENGINE_BASE_ADDR` (`_LO`, `_HI`).
    pub fn set_engine_base(&self, v: u64) {
        self.set_word(ENGINE_BASE_ADDR.offset, v as u32);
        self.set_word(ENGINE_BASE_ADDR.offset + 4, (v >> 32) as u32);
    }

    /// Every word of the block.
    pub fn snapshot(&self) -> Vec<u32> {
        (0..WORDS as u32).map(|i| self.word(4 * i)).collect()
    }
}

impl Drop for RegisterPage {
    fn drop(&mut self) {
        // SAFETY: unmapping what map() mapped.
        unsafe { nt_support_nx_unmap(self.base) };
    }
}

/// One store to the block: byte offset and the word there right after the store.
pub type Store = (u32, u32);

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod watch {
    use super::*;
    use core::sync::atomic::{AtomicUsize, Ordering};

    /// Capacity of the log.
    pub const MAX_STORES: usize = 256;

    /// The log, in a shared mapping the child writes and the parent reads.
    #[repr(C)]
    pub struct Log {
        pub count: usize,
        pub pending: usize,
        pub stores: [Store; MAX_STORES],
    }

    static LOG: AtomicUsize = AtomicUsize::new(0);

    fn log() -> &'static mut Log {
        // SAFETY: set before the handlers are installed, to a live shared mapping; only
        // the (single-threaded) child touches it while the handlers run.
        unsafe { &mut *(LOG.load(Ordering::SeqCst) as *mut Log) }
    }

    const TRAP_FLAG: i64 = 0x100;

    fn protect(prot: libc::c_int) {
        // SAFETY: the block is mapped for the whole run.
        unsafe {
            libc::mprotect(
                NX_REG_BASE as usize as *mut libc::c_void,
                NX_REG_BLOCK_SIZE as usize,
                prot,
            )
        };
    }

    extern "C" fn on_segv(_: libc::c_int, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo and ucontext to an SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        let base = NX_REG_BASE as usize;
        if !(base..base + NX_REG_BLOCK_SIZE as usize).contains(&addr) {
            // A real fault elsewhere: die of it.
            // SAFETY: restoring the default action and re-raising is async-signal-safe.
            unsafe {
                libc::signal(libc::SIGSEGV, libc::SIG_DFL);
                libc::raise(libc::SIGSEGV);
            }
            return;
        }
        log().pending = addr - base;
        protect(libc::PROT_READ | libc::PROT_WRITE);
        // Let the store run, then stop after it (single step).
        // SAFETY: as above.
        unsafe {
            (*(uc as *mut libc::ucontext_t)).uc_mcontext.gregs[libc::REG_EFL as usize] |= TRAP_FLAG
        };
    }

    extern "C" fn on_trap(_: libc::c_int, _: *mut libc::siginfo_t, uc: *mut libc::c_void) {
        let l = log();
        let off = (l.pending & !3) as u32;
        // SAFETY: the block is mapped; the offset is inside it.
        let value =
            unsafe { ((NX_REG_BASE as usize + off as usize) as *const u32).read_volatile() };
        if l.count < MAX_STORES {
            l.stores[l.count] = (off, value);
        }
        l.count += 1;
        protect(libc::PROT_READ);
        // SAFETY: as in on_segv.
        unsafe {
            (*(uc as *mut libc::ucontext_t)).uc_mcontext.gregs[libc::REG_EFL as usize] &= !TRAP_FLAG
        };
    }

    pub fn run(f: impl FnOnce()) -> Vec<Store> {
        let size = core::mem::size_of::<Log>();
        // SAFETY: a fresh shared anonymous mapping.
        let shared = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(shared, libc::MAP_FAILED);
        LOG.store(shared as usize, Ordering::SeqCst);
        let status = crate::in_child(|| {
            // SAFETY: installing handlers in the single-threaded child.
            unsafe {
                for (sig, h) in [
                    (libc::SIGSEGV, on_segv as *const () as usize),
                    (libc::SIGTRAP, on_trap as *const () as usize),
                ] {
                    let mut sa: libc::sigaction = core::mem::zeroed();
                    sa.sa_sigaction = h;
                    sa.sa_flags = libc::SA_SIGINFO;
                    libc::sigaction(sig, &sa, core::ptr::null_mut());
                }
            }
            protect(libc::PROT_READ);
            f();
            protect(libc::PROT_READ | libc::PROT_WRITE);
            0
        });
        assert_eq!(status, Ok(0), "the watched code did not finish");
        // SAFETY: the child is gone; the mapping holds a Log.
        let l = unsafe { &*(shared as *const Log) };
        assert!(l.count <= MAX_STORES, "more than {MAX_STORES} stores");
        let out = l.stores[..l.count].to_vec();
        // SAFETY: unmapping what was mapped above.
        unsafe { libc::munmap(shared, size) };
        out
    }
}

/// Runs `f` in a forked child with the block write-protected and returns every store `f`
/// made to the block, in order: each store faults, is let through one instruction, and is
/// logged. Loads are not logged. The block's contents after `f` are visible in the parent
/// (the page is shared). x86-64 Linux only: it single-steps with the trap flag.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub fn stores_of(page: &RegisterPage, f: impl FnOnce()) -> Vec<Store> {
    let _ = page;
    watch::run(f)
}
