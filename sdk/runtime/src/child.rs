//! A phase of a run in a process of its own: the shape function, and the kernel on each
//! core. The child writes its report to a memory file and its stdout to another; it dies
//! with the process that forked it (`PR_SET_PDEATHSIG`), so no phase outlives its runner;
//! and the runner reads how it ended: its report, or the signal or exit status that ended
//! it before it wrote one.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::misuse::{Crash, Kind, Report};

/// The report file of this process, when it is a child.
static REPORT_FD: AtomicI32 = AtomicI32::new(-1);

/// A forked phase.
#[derive(Debug)]
pub struct Child {
    pid: i32,
    report: File,
    stdout: File,
}

/// How a child ended.
#[derive(Debug)]
pub struct Outcome {
    /// Its wait status.
    status: i32,
    /// What it wrote to its report file (empty: it wrote nothing).
    pub report: Vec<u8>,
    /// What it printed.
    pub printed: String,
}

impl Outcome {
    /// A child that is still running and finished a job: its report and what it printed.
    pub fn answered(report: Vec<u8>, printed: String) -> Outcome {
        Outcome {
            status: 0,
            report,
            printed,
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

    /// The report of a child that died without writing its own: `phase` of op `op` (on
    /// `core`, for a kernel) killed by a signal or exiting before it returned.
    pub fn crash(&self, op: &str, phase: &str, core: Option<u32>) -> Report {
        let detail = match (self.signal(), self.exit_code()) {
            (Some(sig), _) => format!("the {phase} died of signal {sig} ({})", signal_name(sig)),
            (None, Some(code)) => format!("the {phase} called exit({code}) before it returned"),
            _ => format!("the {phase} ended with wait status {:#x}", self.status),
        };
        Report {
            kind: Kind::Crashed,
            severity: Kind::Crashed.severity(),
            op: op.into(),
            core,
            tensor: None,
            index: None,
            detail,
            crash: Some(Crash {
                phase: phase.into(),
                signal: self.signal(),
                exit_code: self.exit_code(),
                exception: None,
            }),
        }
    }
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

/// All of a memory file, read without moving its offset.
fn contents(f: &File) -> Vec<u8> {
    let mut v = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read_at(&mut buf, v.len() as u64) {
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

    /// What it reported and printed so far.
    pub fn collect(&self) -> (Vec<u8>, String) {
        let printed = String::from_utf8_lossy(&contents(&self.stdout)).into_owned();
        (contents(&self.report), printed)
    }

    /// Empties its report and stdout files, for its next job (their offsets, which the
    /// child shares, back at 0).
    pub fn clear(&self) {
        for f in [&self.report, &self.stdout] {
            let _ = f.set_len(0);
            // SAFETY: a descriptor this File owns.
            unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_SET) };
        }
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
        },
    }
}

/// Waits for `c` to end: how it did.
pub fn wait(c: Child) -> Outcome {
    let mut status = 0;
    // SAFETY: our child; retried when a signal interrupts the wait.
    while unsafe { libc::waitpid(c.pid, &mut status, 0) } == -1
        && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
    {}
    let (report, printed) = c.collect();
    Outcome {
        status,
        report,
        printed,
    }
}

/// In a child: `report` into its report file, stdout flushed.
pub fn put_report(report: &[u8]) {
    let fd = REPORT_FD.load(Ordering::Relaxed);
    // SAFETY: flushing every stdio stream.
    unsafe { libc::fflush(core::ptr::null_mut()) };
    let mut at = 0;
    while at < report.len() {
        // SAFETY: fd is the child's report file; the bytes are valid for their length.
        let n = unsafe { libc::write(fd, report[at..].as_ptr().cast(), report.len() - at) };
        if n <= 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
        at += n.max(0) as usize;
    }
}

/// Ends a child: `report` into its report file, stdout flushed, `_exit(code)`.
pub fn exit_with(report: &[u8], code: i32) -> ! {
    put_report(report);
    // SAFETY: ending the child.
    unsafe { libc::_exit(code) }
}
