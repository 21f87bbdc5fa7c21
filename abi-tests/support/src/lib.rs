//! Test support for neuron-translate: what the integration tests (abi-tests/tests), the
//! device benchmarks and the fuzz targets share. Nothing here is part of the `ntx` tool.
//!
//! * [`start_exit`]: the host definition of the import, standing in for start_exit.o.
//! * [`nx`]: the NX register block mapped on the host, and a log of the stores to it.
//! * [`reference`]: the seed's reference C model (abi-tests/csrc/reference.c), linked for tests.
//! * [`gen`]: deterministic generators of tables and address streams, and fixtures.
//! * [`differential`]: one call through the library and the reference model, compared.
//! * [`qemu`]: building and running device programs under qemu-xtensa.
//! * [`RegisterBank`], [`guard`], [`in_child`], [`tools`]: register memory, guard pages,
//!   forked children, the Makefile's tools.

use neuron_translate::TranslationCtx;

pub mod differential;
pub mod gen;
pub mod install;
pub mod nx;
pub mod qemu;

/// Host stand-in for what start_exit.o defines and the library imports (docs/contract.md
/// §1): `extended_isa::sdk::hbm_scratch`. (The original also imports `data_scratch_map`;
/// this library does not.)
pub mod start_exit {
    use core::cell::UnsafeCell;

    /// A static the tests may write (single-threaded use: see [`crate::GLOBAL_LOCK`]).
    #[repr(transparent)]
    pub struct Cell<T>(pub UnsafeCell<T>);
    // SAFETY: every writer holds GLOBAL_LOCK.
    unsafe impl<T> Sync for Cell<T> {}

    /// `extended_isa::sdk::hbm_scratch`.
    #[export_name = neuron_translate::sym!(hbm_scratch)]
    pub static HBM_SCRATCH: Cell<u64> = Cell(UnsafeCell::new(0));

    /// Sets `hbm_scratch`. Hold [`crate::GLOBAL_LOCK`].
    pub fn set_hbm_scratch(v: u64) {
        // SAFETY: single writer under GLOBAL_LOCK; the library reads it only in init.
        unsafe { HBM_SCRATCH.0.get().write(v) }
    }
}

/// Why a test that needs the tools and products the Makefile names (the device object,
/// `ntx`, the cross compilers, qemu) is ignored by a plain `cargo test`: each such test is
/// a plain `#[test]` with `#[ignore = ...]` in these words (abi-tests/tests/layout.rs
/// checks every one), and `make test` runs them (`--include-ignored`).
pub const MAKE_TEST: &str = "needs the tools and products the Makefile names: run `make test`";

/// The seed every property test starts its generator from: each run tries the same cases,
/// so a result never depends on the run (a failure is reproduced by running it again).
pub const PROPTEST_SEED: u64 = 0x6e74_7261_6e73_6c74;

/// The repository root (the workspace's).
pub fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Serialises the tests that touch the library's globals (`_ctx`, the table storage, the
/// imports): the test harness runs tests on several threads.
pub static GLOBAL_LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The seed's reference model, compiled from csrc/reference.c.
pub mod reference {
    use core::ffi::{c_int, c_void};
    extern "C" {
        /// docs/original.md §4 + §6.
        pub fn ref_translate(ctx: *mut c_void, addr: u64) -> *mut c_void;
        /// docs/original.md §7.
        pub fn ref_mapping_lookup(
            ctx: *mut c_void,
            addr: u64,
            out_start: *mut u64,
            out_end: *mut u64,
        ) -> c_int;
    }
}

/// `t` with every `reg_location`, a bank index `k`, replaced by the address `base + 8k`
/// of the bank's block `k`.
pub fn bind_registers(t: &TranslationCtx, base: u64) -> TranslationCtx {
    let mut out = *t;
    for r in out.records.iter_mut() {
        r.reg_location = base + 8 * r.reg_location;
    }
    out
}

/// The inverse of [`bind_registers`].
pub fn unbind_registers(t: &TranslationCtx, base: u64) -> TranslationCtx {
    let mut out = *t;
    for r in out.records.iter_mut() {
        r.reg_location = (r.reg_location - base) / 8;
    }
    out
}

/// A register bank: one 8-byte block (two `u32`) per record, at a stable address.
#[derive(Debug)]
pub struct RegisterBank(pub Box<[u32; 2 * neuron_translate::layout::RECORDS]>);

impl Default for RegisterBank {
    fn default() -> Self {
        RegisterBank(Box::new([0; 2 * neuron_translate::layout::RECORDS]))
    }
}

impl RegisterBank {
    /// Address of block `k`.
    pub fn block(&mut self, k: u64) -> u64 {
        self.0.as_mut_ptr().wrapping_add(2 * k as usize) as usize as u64
    }

    /// `t` with every bank index in `reg_location` replaced by that block's address.
    pub fn bind(&mut self, t: &TranslationCtx) -> TranslationCtx {
        bind_registers(t, self.block(0))
    }

    /// The inverse of [`RegisterBank::bind`], for comparing tables bound to different banks.
    pub fn unbind(&mut self, t: &TranslationCtx) -> TranslationCtx {
        unbind_registers(t, self.block(0))
    }
}

/// Memory laid out next to inaccessible pages, so that any access outside the intended
/// bytes faults at once.
pub mod guard {
    /// An anonymous shared mapping of `pages` pages (shared, so that a forked child's
    /// stores are visible to the parent), with some pages made inaccessible.
    #[derive(Debug)]
    pub struct GuardedPages {
        base: *mut u8,
        len: usize,
    }

    /// The page size.
    pub fn page() -> usize {
        // SAFETY: sysconf has no preconditions.
        unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
    }

    impl GuardedPages {
        /// Maps `pages` zeroed read-write pages.
        pub fn new(pages: usize) -> GuardedPages {
            let len = pages * page();
            // SAFETY: a fresh anonymous mapping.
            let base = unsafe {
                libc::mmap(
                    core::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            assert_ne!(base, libc::MAP_FAILED, "mmap failed");
            GuardedPages {
                base: base.cast(),
                len,
            }
        }

        /// Makes page `i` inaccessible.
        pub fn protect(&self, i: usize) {
            // SAFETY: page i lies inside the mapping.
            let rc = unsafe { libc::mprotect(self.page_ptr(i).cast(), page(), libc::PROT_NONE) };
            assert_eq!(rc, 0, "mprotect failed");
        }

        /// The start of page `i`.
        pub fn page_ptr(&self, i: usize) -> *mut u8 {
            assert!(i * page() < self.len);
            self.base.wrapping_add(i * page())
        }
    }

    impl Drop for GuardedPages {
        fn drop(&mut self) {
            // SAFETY: unmapping what new() mapped.
            unsafe { libc::munmap(self.base.cast(), self.len) };
        }
    }
}

/// Runs `f` in a forked child and returns how the child ended: `Ok(exit code)` or
/// `Err(signal)`. The child runs only `f` and `_exit`.
pub fn in_child(f: impl FnOnce() -> i32) -> Result<i32, i32> {
    // SAFETY: the child calls only `f` (library code that does not allocate or lock)
    // and `_exit`.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = f();
        // SAFETY: ends the child without running the parent's destructors.
        unsafe { libc::_exit(code) }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(rc, pid);
    if libc::WIFSIGNALED(status) {
        Err(libc::WTERMSIG(status))
    } else {
        Ok(libc::WEXITSTATUS(status))
    }
}

/// External tools and build products, as the Makefile names them. The Makefile is the one
/// place tool names live; the tests read them from the environment it exports.
pub mod tools {
    use std::path::PathBuf;
    use std::process::{Command, Output};

    /// The tool (or product path) the Makefile exports as `var`.
    pub fn tool(var: &str) -> String {
        std::env::var(var).unwrap_or_else(|_| {
            panic!("{var} is not set: run the tests through `make test` (the Makefile names every tool)")
        })
    }

    /// A product path the Makefile exports, which must exist.
    pub fn product(var: &str) -> PathBuf {
        let p = PathBuf::from(tool(var));
        assert!(
            p.exists(),
            "{} ({var}) does not exist: `make` builds it",
            p.display()
        );
        p
    }

    /// Runs a command, returning its output; panics with everything it printed if it fails.
    pub fn run_ok(cmd: &mut Command) -> Output {
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
        assert!(
            out.status.success(),
            "{cmd:?} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// A fresh scratch directory under the target directory, named for the test.
    pub fn scratch(name: &str) -> PathBuf {
        let dir = crate::root().join("target/test-scratch").join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
}
