//! A phase of a run in a process of its own: the shape function, and the kernel on each
//! core. The child answers each job's report on its socket (a worker's, run/worker.rs), or
//! writes it to a memory file as it ends, and its stdout to another memory file; it dies
//! with the process that forked it (`PR_SET_PDEATHSIG`), so no phase outlives its runner;
//! and the runner reads how it ended: its report, or the signal or exit status that ended
//! it before it wrote one.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::base::misuse::{Crash, Kind, Report};
use crate::base::stack::backtrace;
use crate::base::tcm::Touch;
use crate::run::frames::{interrupted_stack, remember_code, store, Interrupted, STACK_FRAMES};

/// The report file of this process, when it is a child.
static REPORT_FD: AtomicI32 = AtomicI32::new(-1);

/// A forked phase.
#[derive(Debug)]
pub struct Child {
    pid: i32,
    report: File,
    stdout: File,
    /// Whether its stdout file may hold something (it printed since the last clear).
    printed: std::cell::Cell<bool>,
}

/// How a child ended.
#[derive(Debug)]
pub struct Exited {
    /// Its wait status.
    status: i32,
    /// What it wrote to its report file (empty: it wrote nothing).
    pub report: Vec<u8>,
    /// What it printed.
    pub printed: String,
    /// Whether it was ended for running past its deadline.
    pub timed_out: bool,
    /// Whether it was stopped (SIGSTOP and the like) when it was ended: it could not say
    /// where it was.
    pub stopped: bool,
    /// Whether it ran on past its deadline after closing the runner's socket (a kernel that
    /// calls exec): it was killed, and could not say where it was.
    pub quiet: bool,
}

impl Exited {
    /// A child that is still running and finished a job: its report and what it printed.
    pub fn answered(report: Vec<u8>, printed: String) -> Exited {
        Exited {
            status: 0,
            report,
            printed,
            timed_out: false,
            stopped: false,
            quiet: false,
        }
    }

    /// The signal that killed it.
    pub fn signal(&self) -> Option<i32> {
        libc::WIFSIGNALED(self.status).then(|| libc::WTERMSIG(self.status))
    }

    /// Its exit status, when it exited.
    pub fn exit_code(&self) -> Option<i32> {
        libc::WIFEXITED(self.status).then(|| libc::WEXITSTATUS(self.status))
    }

    /// Where a child that ran out of time was, if it did: its stack, innermost first (the
    /// interrupted instruction, then the callers' return addresses).
    pub fn timed_out_at(&self) -> Option<Vec<u64>> {
        let rest = self.report.strip_prefix(TIMED_OUT)?;
        let words = std::str::from_utf8(rest).ok()?.split_whitespace();
        let stack: Option<Vec<u64>> = words.map(|w| u64::from_str_radix(w, 16).ok()).collect();
        stack.filter(|s| !s.is_empty())
    }

    /// The report of a child that ran out of time after `limit`.
    pub fn timeout(
        &self,
        op: &str,
        phase: &str,
        core: Option<u32>,
        limit: std::time::Duration,
    ) -> Report {
        let unknown = if self.stopped {
            "a place not known: it was stopped (SIGSTOP or another stop signal, sent by itself \
             or another process) and could not say where"
        } else if self.quiet {
            "a place not known: it had closed the runner's socket, as a kernel that calls exec \
             does (the process no longer runs the op's program), and was killed"
        } else {
            "where is not known"
        };
        let (at, stack) = self.timed_out_at().map_or_else(
            || (unknown.into(), Vec::new()),
            |s| crate::run::place::author_place(&s),
        );
        let who = core.map_or(String::new(), |c| format!(" on core {c}"));
        let detail = format!(
            "the {phase}{who} still ran after {} s, at {at}",
            limit.as_secs_f64()
        );
        self.timeout_report(op, phase, core, detail, stack)
    }

    /// The report of a kernel on the emulated Q7 that ran out of time after `limit`: its
    /// core's process waited on the program's next request, so the stack it wrote is the
    /// runner's, not the kernel's, and is not placed.
    pub fn device_timeout(&self, op: &str, core: u32, limit: std::time::Duration) -> Report {
        let detail = format!(
            "the kernel on core {core} still ran on the emulated Q7 after {} s (where in the \
             kernel is not known: the emulator does not say)",
            limit.as_secs_f64()
        );
        self.timeout_report(op, "kernel", Some(core), detail, Vec::new())
    }

    fn timeout_report(
        &self,
        op: &str,
        phase: &str,
        core: Option<u32>,
        detail: String,
        stack: Vec<String>,
    ) -> Report {
        Report {
            kind: Kind::Timeout,
            detail,
            crash: None,
            stack,
            ..self.crash(op, phase, core)
        }
    }

    /// The report of a child that died without writing its own: `phase` of op `op` (on
    /// `core`, for a kernel) killed by a signal or exiting before it returned.
    pub fn crash(&self, op: &str, phase: &str, core: Option<u32>) -> Report {
        let overflowed = self.report.strip_prefix(STACK_OVERFLOW).and_then(|r| {
            let deep: u64 = std::str::from_utf8(r).ok()?.trim().parse().ok()?;
            Some(format!(
                ": its stack overflowed, {} KiB below where the kernel was called (the \
                 device runs a kernel on a stack of a few KiB: docs/customop-device.md, \
                 \"The stack\")",
                deep >> 10
            ))
        });
        let detail = match (self.signal(), self.exit_code()) {
            (Some(sig), _) => format!(
                "the {phase} died of signal {sig} ({}){}",
                signal_name(sig),
                overflowed.unwrap_or_default()
            ),
            (None, Some(code)) => format!("the {phase} called exit({code}) before it returned"),
            _ => format!("the {phase} ended with wait status {:#x}", self.status),
        };
        Report {
            crash: Some(Crash {
                phase: phase.into(),
                signal: self.signal(),
                exit_code: self.exit_code(),
                exception: None,
            }),
            ..Report::of_run(op, Kind::Crashed, core, detail)
        }
    }
}

/// What a child that ran out of time writes to its report file, before its program counter.
const TIMED_OUT: &[u8] = b"TIMEOUT ";

/// The signal the runner sends a child that ran out of time.
pub const TIMEOUT_SIGNAL: i32 = libc::SIGUSR2;

extern "C" fn on_timeout(_: i32, _: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes the interrupted context.
    let at = unsafe { Interrupted::of(context.cast()) };
    let (stack, len) = interrupted_stack(at);
    let mut line = [b' '; 8 + 17 * STACK_FRAMES];
    line[..8].copy_from_slice(TIMED_OUT);
    for (f, frame) in stack[..len].iter().enumerate() {
        for k in 0..16 {
            line[8 + 17 * f + k] = b"0123456789abcdef"[((frame >> (60 - 4 * k)) & 15) as usize];
        }
    }
    let fd = REPORT_FD.load(Ordering::Relaxed);
    // SAFETY: write and _exit are async-signal-safe.
    unsafe {
        libc::write(fd, line.as_ptr().cast(), 8 + 17 * len);
        libc::_exit(crate::base::codes::ExitStatus::Timeout.code())
    }
}

/// In a child: on [`TIMEOUT_SIGNAL`], write where it was and end.
pub fn catch_timeout() {
    remember_code();
    let mut warm = [core::ptr::null_mut(); 2];
    // SAFETY: a buffer of its length: the first call loads the unwinder, outside a handler.
    unsafe { backtrace(warm.as_mut_ptr(), 2) };
    on_signal(TIMEOUT_SIGNAL, on_timeout);
}

/// Installs `handler` (an `SA_SIGINFO` one) for signal `sig` in this process.
fn on_signal(sig: i32, handler: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void)) {
    on_signal_flags(sig, handler, 0);
}

/// [`on_signal`] with more `flags`.
fn on_signal_flags(
    sig: i32,
    handler: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void),
    flags: i32,
) {
    // SAFETY: a zeroed sigaction with a valid handler and flags.
    unsafe {
        let mut a: libc::sigaction = std::mem::zeroed();
        a.sa_sigaction = handler as *const () as usize;
        a.sa_flags = libc::SA_SIGINFO | flags;
        libc::sigaction(sig, &a, core::ptr::null_mut());
    }
}

extern "C" fn on_fault(sig: i32, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // SAFETY: the kernel passes the fault's information and context.
    let (addr, at, write) = unsafe {
        (
            (*info).si_addr() as usize,
            Interrupted::of(context.cast()),
            store(context.cast()),
        )
    };
    if let Some(write) = write {
        // A watched TCM block: a store opens its page (and is made again on return); a
        // load from a page nothing stored into is reported.
        let touch = crate::percore::state::try_with(|rt| match rt.job.pool.touch(addr, write) {
            Touch::Unwritten(what) => {
                let detail = format!("a load at {addr:#x}: {what}");
                rt.placed(Kind::UninitializedRead, detail, fault_stack(at))
            }
            t => t,
        });
        if touch == Some(Touch::Opened) {
            return;
        }
    }
    let what = crate::percore::state::try_with(|rt| rt.job.pool.describe(addr)).flatten();
    if let Some(what) = what {
        // A fault in the TCM pool's pages: reported; the core ends there.
        crate::percore::state::try_with(|rt| rt.out_of_bounds(addr, what, write, fault_stack(at)));
    }
    // A fault within a megabyte of the stack pointer, far below where the kernel was
    // called, is its stack overflowing: said in the report file for the runner.
    let depth = crate::percore::state::try_with(|rt| rt.stack.top()).unwrap_or(0) as u64;
    if sig == libc::SIGSEGV && depth > at.sp && (addr as u64).abs_diff(at.sp) < 1 << 20 {
        put_number(STACK_OVERFLOW, depth - at.sp);
    }
    // Not the pool's: the signal takes its course (the runner reports it), whether the
    // kernel faulted or raised it.
    // SAFETY: restoring the default action and raising the signal again.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// The stack a fault interrupted, innermost first, for the runner to place in the
/// author's sources (a copy's fault is in the C library's memcpy, its caller the SDK's).
fn fault_stack(at: Interrupted) -> Vec<u64> {
    let (stack, len) = interrupted_stack(at);
    stack[..len].to_vec()
}

/// In a child: a fault in the TCM pool's pages (a guard page, a freed block) is reported
/// as `tcm-out-of-bounds`, with the access's place; any other fault ends the child as
/// before (a stack overflow said as one). The handler runs on a stack of its own, so that
/// it runs when the kernel's stack is what overflowed.
pub fn catch_faults() {
    remember_code();
    const ALT: usize = 256 << 10;
    // SAFETY: a new private mapping, owned by this process for its life.
    let at = unsafe {
        libc::mmap(
            core::ptr::null_mut(),
            ALT,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if at != libc::MAP_FAILED {
        let alt = libc::stack_t {
            ss_sp: at,
            ss_flags: 0,
            ss_size: ALT,
        };
        // SAFETY: a valid stack record over the mapping above.
        unsafe { libc::sigaltstack(&alt, core::ptr::null_mut()) };
    }
    on_signal_flags(libc::SIGSEGV, on_fault, libc::SA_ONSTACK);
}

/// What a child whose stack overflowed writes to its report file, before how deep it was.
const STACK_OVERFLOW: &[u8] = b"STACK ";

/// Writes `prefix` and `n` in decimal to the report file (async-signal-safe).
fn put_number(prefix: &[u8], n: u64) {
    let mut line = [b' '; 32];
    line[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 20];
    let (mut k, mut v) = (digits.len(), n);
    loop {
        k -= 1;
        digits[k] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let len = prefix.len() + digits.len() - k;
    line[prefix.len()..len].copy_from_slice(&digits[k..]);
    // SAFETY: write is async-signal-safe; the bytes are valid for their length.
    unsafe { libc::write(REPORT_FD.load(Ordering::Relaxed), line.as_ptr().cast(), len) };
}

/// Whether process `pid` is stopped (its state `T` in `/proc/PID/stat`).
pub fn is_stopped(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(") ")
        .is_some_and(|(_, rest)| rest.starts_with('T'))
}

/// A signal's name, as `strsignal` gives it.
pub fn signal_name(sig: i32) -> String {
    // SAFETY: strsignal returns a string that stays valid until the next call.
    unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) }
        .to_string_lossy()
        .into_owned()
}

fn memfd(name: &str) -> File {
    let n = CString::new(name).expect("no NUL");
    // SAFETY: a valid name.
    let fd = unsafe { libc::memfd_create(n.as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: a new descriptor, owned by the File from here on.
    unsafe { File::from_raw_fd(fd) }
}

/// The most of what a child prints in a job that is kept (the runner cuts the rest as it
/// waits, so a kernel printing in a loop holds no more memory than this).
pub const PRINTED_KEPT: u64 = 16 << 20;

/// All of a memory file, read without moving its offset.
fn contents(f: &File) -> Vec<u8> {
    contents_up_to(f, u64::MAX)
}

/// At most `most` bytes of a memory file, from its start.
fn contents_up_to(f: &File, most: u64) -> Vec<u8> {
    let mut v = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let want = buf
            .len()
            .min(usize::try_from(most - v.len() as u64).unwrap_or(usize::MAX));
        if want == 0 {
            return v;
        }
        match f.read_at(&mut buf[..want], v.len() as u64) {
            Ok(0) => return v,
            Ok(n) => v.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => panic!("reading a child's memory file: {e}"),
        }
    }
}

impl Child {
    /// Its process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// What it reported and printed so far: at most [`PRINTED_KEPT`] bytes of what it
    /// printed, and a line saying how much more there was.
    pub fn collect(&self) -> (Vec<u8>, String) {
        (contents(&self.report), self.printed())
    }

    /// What it printed so far: at most [`PRINTED_KEPT`] bytes, and a line saying how much
    /// more there was.
    pub fn printed(&self) -> String {
        let total = self.printed_bytes();
        if total == 0 {
            return String::new();
        }
        self.printed.set(true);
        let kept = contents_up_to(&self.stdout, PRINTED_KEPT);
        let mut printed = String::from_utf8_lossy(&kept).into_owned();
        if total > kept.len() as u64 {
            printed += &format!(
                "\n[the kernel printed {total} bytes in this call; the first {PRINTED_KEPT} are shown]\n"
            );
        }
        printed
    }

    /// How many bytes it printed since its files were last cleared: where its stdout's
    /// offset, which the child shares, stands (the file itself is cut at [`PRINTED_KEPT`]).
    fn printed_bytes(&self) -> u64 {
        // SAFETY: a descriptor this File owns; SEEK_CUR by 0 moves nothing.
        let at = unsafe { libc::lseek64(self.stdout.as_raw_fd(), 0, libc::SEEK_CUR) };
        let len = self.stdout.metadata().map_or(0, |m| m.len());
        u64::try_from(at).unwrap_or(0).max(len)
    }

    /// Cuts what it printed to [`PRINTED_KEPT`] bytes, giving the rest's memory back (the
    /// child writes on past the end, into a hole, until the next cut).
    pub fn trim(&self) {
        if self.stdout.metadata().is_ok_and(|m| m.len() > PRINTED_KEPT) {
            let _ = self.stdout.set_len(PRINTED_KEPT);
        }
    }

    /// Empties its stdout file for its next job, if it printed (its offset, which the child
    /// shares, back at 0). Its report file needs nothing: a worker answers a job's report
    /// on its socket (run/worker.rs) and writes the file only as it ends.
    pub fn clear(&self) {
        if !self.printed.replace(false) {
            return;
        }
        let _ = self.stdout.set_len(0);
        // SAFETY: a descriptor this File owns.
        unsafe { libc::lseek(self.stdout.as_raw_fd(), 0, libc::SEEK_SET) };
    }
}

/// Forks a child that runs `body` (which ends the child with [`exit_with`]; one that
/// returns ends it as a failure). The child's stdout is its memory file; it is killed when
/// this process ends.
pub fn spawn(body: impl FnOnce()) -> Child {
    let (report, stdout) = (memfd("phase-report"), memfd("phase-stdout"));
    // Nothing buffered in stdio is written twice.
    // SAFETY: flushing all streams.
    unsafe { libc::fflush(core::ptr::null_mut()) };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the runner forks from its one thread; the child only runs `body`.
    match unsafe { libc::fork() } {
        0 => {
            // SAFETY: plain system calls on the child's own state. If the parent is gone
            // already, the death signal will never come: end now.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(libc::EXIT_FAILURE);
                }
                libc::dup2(stdout.as_raw_fd(), 1);
            }
            REPORT_FD.store(report.as_raw_fd(), Ordering::Relaxed);
            body();
            // SAFETY: ending the child.
            unsafe { libc::_exit(libc::EXIT_FAILURE) }
        }
        -1 => panic!("fork: {}", std::io::Error::last_os_error()),
        pid => Child {
            pid,
            report,
            stdout,
            printed: std::cell::Cell::new(false),
        },
    }
}

/// Waits for `c` to end: how it did.
pub fn wait(c: Child) -> Exited {
    wait_until(c, None)
}

/// Waits for `c` to end until `deadline` (none: as long as it takes), then kills it: how it
/// ended, `timed_out` and `quiet` if it was killed (it no longer answered on its socket).
pub fn wait_until(c: Child, deadline: Option<std::time::Instant>) -> Exited {
    let mut status = 0;
    let mut killed = false;
    loop {
        let late = deadline.is_some_and(|d| std::time::Instant::now() >= d);
        let flags = if deadline.is_none() || killed {
            0
        } else {
            libc::WNOHANG
        };
        // SAFETY: our child.
        match unsafe { libc::waitpid(c.pid, &mut status, flags) } {
            0 if late => {
                // SAFETY: a signal to our own child, which has not been waited for.
                unsafe { libc::kill(c.pid, libc::SIGKILL) };
                killed = true;
            }
            0 => std::thread::sleep(std::time::Duration::from_millis(5)),
            -1 if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => break,
        }
    }
    let (report, printed) = c.collect();
    Exited {
        status,
        report,
        printed,
        timed_out: killed,
        stopped: false,
        quiet: killed,
    }
}

/// In a worker, as its job ends: stdout flushed, before its report is answered.
pub fn flush_stdio() {
    // SAFETY: flushing every stdio stream.
    unsafe { libc::fflush(core::ptr::null_mut()) };
}

/// Ends a child: `report` into its report file, stdout flushed, `_exit(code)`.
pub fn exit_with(report: &[u8], code: i32) -> ! {
    let fd = REPORT_FD.load(Ordering::Relaxed);
    // SAFETY: flushing every stdio stream.
    unsafe { libc::fflush(core::ptr::null_mut()) };
    let mut at = 0;
    while at < report.len() {
        // SAFETY: fd is the child's report file; the bytes are valid for their length.
        let n = unsafe { libc::write(fd, report[at..].as_ptr().cast(), report.len() - at) };
        if n <= 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            break;
        }
        at += n.max(0) as usize;
    }
    // SAFETY: ending the child.
    unsafe { libc::_exit(code) }
}
