//! Nothing an op's program starts outlives it, even a kernel's child that left the
//! program's session and cleared its death signal (`setsid`, `PR_SET_PDEATHSIG` 0), and
//! even when the caller (ntx, Python) is killed with SIGKILL: the program marks itself and
//! everything it forks with a run's own mark (an environment variable, set by running
//! itself again with it), and a watchdog in a session of its own, told by the kernel when
//! the program ends (`PR_SET_PDEATHSIG`), kills every process that still carries the mark.
//! What it cannot contain (a process that rewrites its environment, or kills the
//! watchdog first) is in docs/customop-host.md.

use std::ffi::CString;

/// The variable that marks a run's processes: `PID:NANOS` of the program that set it.
const RUN_VAR: &str = "NT_CUSTOMOP_RUN";

/// Contains this program's run: when not yet marked, runs itself again marked (the same
/// process, `argv` as given); when marked, starts the watchdog. Where either cannot be
/// done (or the program runs under a tool such as valgrind), the run goes on uncontained,
/// as before.
///
/// # Safety
/// `argv` is the program's argument vector, NULL-terminated; the process has one thread.
pub unsafe fn contain(argv: *const *const libc::c_char) {
    let pid = std::process::id();
    let mark = std::env::var(RUN_VAR).ok();
    if mark.as_deref().and_then(|m| m.split(':').next()) == Some(&pid.to_string()) {
        watchdog(mark.unwrap_or_default());
        return;
    }
    if under_valgrind() {
        return;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let (Ok(name), Ok(value)) = (
        CString::new(RUN_VAR),
        CString::new(format!("{pid}:{nanos}")),
    ) else {
        return;
    };
    let exe = c"/proc/self/exe";
    // SAFETY: valid strings; on success execv does not return, on failure the run goes on.
    unsafe {
        libc::setenv(name.as_ptr(), value.as_ptr(), 1);
        libc::execv(exe.as_ptr(), argv);
        libc::unsetenv(name.as_ptr());
    }
}

/// Whether the program runs under valgrind, which runs it itself: running it again would
/// leave the tool (valgrind does not follow an exec unless told to).
fn under_valgrind() -> bool {
    std::env::var("LD_PRELOAD").is_ok_and(|p| p.contains("vgpreload"))
}

/// Forks the watchdog of run `mark`: it waits for this process to end, then kills every
/// process carrying the mark.
fn watchdog(mark: String) {
    let needle = format!("{RUN_VAR}={mark}\0").into_bytes();
    // SAFETY: this process's own id.
    let parent = unsafe { libc::getpid() };
    // SAFETY: one thread here; the child runs only the watchdog and exits.
    if unsafe { libc::fork() } != 0 {
        return;
    }
    // SAFETY: plain system calls on this new process.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigprocmask(libc::SIG_BLOCK, &set, core::ptr::null_mut());
        libc::setsid();
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
        for fd in 0..3 {
            libc::dup2(null, fd);
        }
        libc::close_range(3, u32::MAX, 0);
        if libc::getppid() == parent {
            let mut sig = 0;
            libc::sigwait(&set, &mut sig);
        }
    }
    kill_marked(&needle);
    // SAFETY: ends the watchdog.
    unsafe { libc::_exit(0) }
}

/// Kills every other process whose environment holds `needle` until none is left.
fn kill_marked(needle: &[u8]) {
    // SAFETY: this process's own id.
    let me = unsafe { libc::getpid() };
    let mut quiet = 0;
    for _ in 0..200 {
        let mut found = 0;
        for pid in std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|p| *p != me)
        {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            if env.windows(needle.len()).any(|w| w == needle) {
                // SAFETY: a signal to a process of this run.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                found += 1;
            }
        }
        quiet = if found == 0 { quiet + 1 } else { 0 };
        if quiet == 2 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
