//! The processes `ntx op run` starts, held to it, so that none outlives it and its build
//! folder goes with it, however it ends:
//!
//! * each command (a compiler, the op's program and so its cores) runs in a process group
//!   of its own and is killed when ntx dies (`PR_SET_PDEATHSIG`);
//! * SIGINT, SIGTERM and SIGHUP kill that group at once; ntx then removes its build folder
//!   and dies of the same signal;
//! * a watchdog, a process in a session of its own (so a signal to ntx's process group
//!   does not reach it), waits for ntx to end by any means, SIGKILL included: it then kills
//!   the group still running, removes the build folder, and exits.
//!
//! * ntx is a child subreaper: a process a command started that outlives it (a kernel's
//!   `fork()`, even one that left the group) becomes ntx's child, and once the command
//!   ends, its group and every such child are killed and reaped;
//! * a command killed mid-write leaves no `--out` temporary file ([`tmp_name`]): the signal
//!   path and the watchdog remove it.
//!
//! Without [`Guard::start`], [`output`] and [`status`] still give each command its group
//! and its death signal, and kill the group when the command ends.

use std::io;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output};
use std::sync::atomic::{AtomicI32, Ordering};

/// The process group of the command running now (0: none).
static GROUP: AtomicI32 = AtomicI32::new(0);
/// The signal caught (0: none).
static CAUGHT: AtomicI32 = AtomicI32::new(0);
/// The watchdog's pipe (-1: no watchdog).
static WATCHDOG: AtomicI32 = AtomicI32::new(-1);
/// The watchdog's process (0: none).
static WATCHDOG_PID: AtomicI32 = AtomicI32::new(0);
/// The last command's process group (0: none yet).
static LAST_GROUP: AtomicI32 = AtomicI32::new(0);

/// The temporary file the op's program (process `pid`) writes `--out` through, as its
/// runtime names it (sdk/common).
use nt_sdk_common::tmp_name;

/// Removes the `--out` temporary file of process group `group`'s leader, if any.
fn remove_tmp(out: Option<&Path>, group: i32) {
    let (Some(out), Ok(pid)) = (out, u32::try_from(group)) else {
        return;
    };
    if pid > 0 {
        if let Some(t) = tmp_name(out, pid) {
            let _ = std::fs::remove_file(t);
        }
    }
}

/// Kills and reaps every child of ntx but the watchdog (with ntx a subreaper: every
/// process its commands left behind), until none is left.
fn reap_strays() {
    let watchdog = WATCHDOG_PID.load(Ordering::SeqCst);
    for _ in 0..100 {
        let mut strays = Vec::new();
        if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
            for t in tasks.flatten() {
                let text = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
                strays.extend(
                    text.split_whitespace()
                        .filter_map(|p| p.parse::<i32>().ok()),
                );
            }
        }
        strays.retain(|p| *p != watchdog);
        if strays.is_empty() {
            return;
        }
        for p in strays {
            // SAFETY: a child of this process; kill and waitpid on it.
            unsafe {
                libc::kill(p, libc::SIGKILL);
                libc::waitpid(p, std::ptr::null_mut(), 0);
            }
        }
    }
}

const SIGNALS: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: i32) {
    CAUGHT.store(sig, Ordering::SeqCst);
    let group = GROUP.load(Ordering::SeqCst);
    if group > 0 {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}

/// Tells the watchdog which group runs now.
fn tell_watchdog(group: i32) {
    let fd = WATCHDOG.load(Ordering::SeqCst);
    if fd >= 0 {
        let b = group.to_ne_bytes();
        // SAFETY: a valid buffer; a failed write leaves the watchdog with the last group.
        unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
    }
}

/// The watchdog's process: reads the group running until the pipe ends (ntx is gone),
/// then kills that group and removes `dir`.
fn watchdog(read_fd: i32, dir: Option<&Path>, out: Option<&Path>) -> ! {
    // SAFETY: plain system calls on this process's own state.
    unsafe {
        libc::setsid();
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
    }
    let mut group = 0i32;
    let mut b = [0u8; 4];
    // SAFETY: reading into a buffer of its length.
    while unsafe { libc::read(read_fd, b.as_mut_ptr().cast(), 4) } == 4 {
        group = i32::from_ne_bytes(b);
    }
    if group > 0 {
        // SAFETY: a process group this ntx started.
        unsafe { libc::kill(-group, libc::SIGKILL) };
        remove_tmp(out, group);
    }
    if let Some(d) = dir {
        let _ = std::fs::remove_dir_all(d);
    }
    // SAFETY: ending the watchdog.
    unsafe { libc::_exit(0) }
}

/// What [`Guard::start`] set up.
#[derive(Debug)]
pub struct Guard {
    dir: Option<PathBuf>,
    out: Option<PathBuf>,
}

impl Guard {
    /// Catches SIGINT, SIGTERM and SIGHUP, makes ntx a child subreaper and starts the
    /// watchdog, which removes `dir` (a temporary build folder, if any) and the temporary
    /// file of `out` (the run's `--out`, if any) when ntx ends. Call it while ntx has one
    /// thread.
    pub fn start(dir: Option<&Path>, out: Option<&Path>) -> Guard {
        // SAFETY: prctl on this process.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
        let mut fds = [0i32; 2];
        // SAFETY: a valid array of two.
        let piped = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0;
        if piped {
            // SAFETY: ntx has one thread; the child only runs the watchdog.
            match unsafe { libc::fork() } {
                0 => {
                    // SAFETY: the child's copy of the write end.
                    unsafe { libc::close(fds[1]) };
                    watchdog(fds[0], dir, out)
                }
                -1 => {}
                pid => {
                    WATCHDOG_PID.store(pid, Ordering::SeqCst);
                    // SAFETY: the parent's copy of the read end.
                    unsafe { libc::close(fds[0]) };
                    WATCHDOG.store(fds[1], Ordering::SeqCst);
                }
            }
        }
        for sig in SIGNALS {
            // SAFETY: the handler only stores atomics and calls kill.
            unsafe { libc::signal(sig, on_signal as extern "C" fn(i32) as libc::sighandler_t) };
        }
        Guard {
            dir: dir.map(Path::to_path_buf),
            out: out.map(Path::to_path_buf),
        }
    }

    /// Ends the run: removes the build folder; when a signal was caught, ntx dies of it
    /// here, as it would have without the guard.
    pub fn finish(self) {
        if let Some(d) = &self.dir {
            let _ = std::fs::remove_dir_all(d);
        }
        let sig = CAUGHT.load(Ordering::SeqCst);
        if sig != 0 {
            remove_tmp(self.out.as_deref(), LAST_GROUP.load(Ordering::SeqCst));
            // SAFETY: restoring the default action and raising the signal caught.
            unsafe {
                libc::signal(sig, libc::SIG_DFL);
                libc::raise(sig);
            }
        }
    }
}

/// Whether SIGINT, SIGTERM or SIGHUP arrived: the run stops.
pub fn interrupted() -> bool {
    CAUGHT.load(Ordering::SeqCst) != 0
}

fn interrupted_error() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "interrupted by a signal")
}

/// Runs `cmd` to its end in a process group of its own, which dies with ntx: what
/// `f` (`Child::wait_with_output` or `Child::wait`) gives.
fn guarded<T>(
    cmd: &mut Command,
    f: impl FnOnce(std::process::Child) -> io::Result<T>,
) -> io::Result<T> {
    if interrupted() {
        return Err(interrupted_error());
    }
    cmd.process_group(0);
    // SAFETY: prctl is async-signal-safe; it changes only the child.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    let group = child.id() as i32;
    GROUP.store(group, Ordering::SeqCst);
    LAST_GROUP.store(group, Ordering::SeqCst);
    tell_watchdog(group);
    if interrupted() {
        // The signal came between the spawn and the store: the handler missed the group.
        // SAFETY: the group just started.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    let result = f(child);
    // Whatever the command left running in its group, then any other stray child.
    // SAFETY: the group this function started; its leader has been waited for.
    unsafe { libc::kill(-group, libc::SIGKILL) };
    reap_strays();
    GROUP.store(0, Ordering::SeqCst);
    tell_watchdog(0);
    if interrupted() {
        return Err(interrupted_error());
    }
    result
}

/// [`Command::output`], guarded.
pub fn output(cmd: &mut Command) -> io::Result<Output> {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    guarded(cmd, std::process::Child::wait_with_output)
}

/// [`Command::output`], guarded, and its process group killed if it has not ended within
/// `limit` (None: no limit): an error of kind `TimedOut` then.
pub fn output_within(cmd: &mut Command, limit: Option<std::time::Duration>) -> io::Result<Output> {
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    guarded(cmd, |mut child| {
        let drain = |pipe: Option<Box<dyn io::Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut p) = pipe {
                    let _ = p.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
        let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
        let deadline = limit.map(|l| std::time::Instant::now() + l);
        let status = loop {
            if let Some(status) = child.try_wait()? {
                break status;
            }
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) || interrupted() {
                // SAFETY: the group guarded() started for this child.
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "it had not ended after {} s",
                        limit.unwrap_or_default().as_secs_f64()
                    ),
                ));
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        let join = |h: std::thread::JoinHandle<Vec<u8>>| h.join().unwrap_or_default();
        Ok(Output {
            status,
            stdout: join(out),
            stderr: join(err),
        })
    })
}

/// [`Command::status`], guarded.
pub fn status(cmd: &mut Command) -> io::Result<ExitStatus> {
    guarded(cmd, |mut c| c.wait())
}
