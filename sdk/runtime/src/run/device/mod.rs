//! A kernel on the emulated Q7 (`--device PROGRAM`, docs/customop-device.md): the core's
//! worker runs the kernel's program for the device (built by `ntx op run --device`) under
//! `qemu-xtensa` instead of calling the kernel itself, and answers what the program's
//! runtime (sdk/device) asks over a socket: the same checks, tensors and operations as a
//! host run, on the same HBM, which the program maps (its windows show it). What the
//! program executed is counted from qemu's log ([`crate::run::device::count`]).

pub mod answer;
pub mod count;
pub mod print;
pub mod profile;
pub(crate) mod symbols;
pub mod watch;

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::base::cabi::Arg;
use crate::base::codes::{DeviceExit, DeviceFd};
use crate::percore::state;
use crate::run::device::answer::{DeviceRequest, ProgramRun};
use crate::run::device::count::{Classes, DeviceCounts};

/// The program for the device and the translation object linked into it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Program {
    /// The linked program.
    pub program: PathBuf,
    /// The translation object it was linked with (its functions are counted apart).
    pub translation: PathBuf,
    /// `--profile`: where the counted instructions went, too ([`profile`]).
    #[serde(default)]
    pub profile: bool,
}

/// The emulator and the core it emulates (one with the single-precision FP option and the
/// division steps, the 32-bit divider and MIN/MAX, as the Q7 has: docs/q7-isa.md):
/// `NT_QEMU_XTENSA` names another qemu-xtensa. The Makefile reads this line: every
/// emulated run of the project uses this core.
const QEMU_CPU: &str = "de233_fpu";
/// The program's descriptors ([`DeviceFd`]); the counting plugin writes to `FD_COUNTS`
/// (sdk/qemu/count_plugin.c's `fd=`).
const FD_RPC: RawFd = DeviceFd::Rpc as RawFd;
const FD_HBM: RawFd = DeviceFd::Hbm as RawFd;
const FD_COUNTS: RawFd = DeviceFd::Counts as RawFd;
const FD_WATCH: RawFd = DeviceFd::Watch as RawFd;

fn read_request(s: &mut UnixStream) -> Option<(u32, Vec<u8>)> {
    let mut head = [0u8; 8];
    s.read_exact(&mut head).ok()?;
    let code = u32::from_le_bytes(head[..4].try_into().ok()?);
    let n = u32::from_le_bytes(head[4..].try_into().ok()?) as usize;
    let mut p = vec![0u8; n];
    s.read_exact(&mut p).ok()?;
    Some((code, p))
}

/// The counting plugin (sdk/qemu/count_plugin.c) ntx names in `NT_QEMU_COUNT_PLUGIN`;
/// without it, qemu's log is read (slower: the plugin's oracle in the tests).
fn count_plugin() -> Option<std::ffi::OsString> {
    std::env::var_os("NT_QEMU_COUNT_PLUGIN").filter(|p| !p.is_empty())
}

/// Counts what the program executes: the plugin's lines on `counts` (read to their end),
/// or qemu's log on `stderr`; and what else qemu said there.
/// What the counter found: the counts (none if the plugin's stopped short), the plugin's
/// profile lines, and qemu's last words.
type Counted = (Option<DeviceCounts>, Vec<String>, String);

fn counter(
    counts: Option<std::fs::File>,
    stderr: std::process::ChildStderr,
    classes: std::sync::Arc<Classes>,
) -> std::thread::JoinHandle<Counted> {
    std::thread::spawn(move || match counts {
        Some(f) => {
            let said = std::thread::spawn(move || crate::run::device::count::tail(stderr));
            let c = crate::run::device::count::count_blocks(f, &classes);
            let (c, profile) = c.map_or((None, Vec::new()), |(c, p)| (Some(c), p));
            (c, profile, said.join().unwrap_or_default())
        }
        None => {
            let (c, tail) = crate::run::device::count::count(stderr, &classes);
            (Some(c), Vec::new(), tail)
        }
    })
}

/// The program under qemu: the emulator, the runner's end of the program's socket, and
/// with the plugin the read end of its counts' pipe and the TCM pool's store watch.
struct Started {
    child: std::process::Child,
    socket: UnixStream,
    counts: Option<std::fs::File>,
    watch: Option<watch::Watch>,
}

/// Why the program did not start under qemu.
#[derive(Debug, thiserror::Error)]
enum NotStarted {
    #[error("a pipe: {0}")]
    Pipe(std::io::Error),
    #[error("cannot run {qemu}: {source}")]
    Qemu {
        qemu: String,
        source: std::io::Error,
    },
}

/// A pipe: (read end, write end).
fn pipe() -> Result<(std::fs::File, std::fs::File), NotStarted> {
    let (r, w) = std::io::pipe().map_err(NotStarted::Pipe)?;
    let file = |fd: std::os::fd::OwnedFd| std::fs::File::from(fd);
    Ok((file(r.into()), file(w.into())))
}

/// The program started under qemu, or why not.
fn start_program(dev: &Program) -> Result<Started, NotStarted> {
    let (mine, theirs) = UnixStream::pair().expect("a socket pair");
    let hbm = state::with(|rt| rt.machine.as_ref().map(|m| m.hbm_fd())).expect("the model runs");
    let qemu = std::env::var("NT_QEMU_XTENSA").unwrap_or_else(|_| "qemu-xtensa".into());
    let plugin = count_plugin();
    // The plugin's pipes: its counts read here, from the program's FD_COUNTS; the pool's
    // live blocks written here, to the program's FD_WATCH, when the pool has a zone.
    let zone = plugin.as_ref().and_then(|_| watch::zone(&dev.program));
    let (read_counts, write_counts) = match plugin {
        Some(_) => pipe().map(|(r, w)| (Some(r), Some(w)))?,
        None => (None, None),
    };
    let (read_watch, write_watch) = match zone {
        Some(_) => pipe().map(|(r, w)| (Some(r), Some(w)))?,
        None => (None, None),
    };
    let fd = |f: &Option<std::fs::File>| f.as_ref().map_or(-1, |f| f.as_raw_fd());
    let (theirs_fd, counts_fd, watch_fd) = (theirs.as_raw_fd(), fd(&write_counts), fd(&read_watch));
    let mut cmd = Command::new(&qemu);
    cmd.args(["-cpu", QEMU_CPU]);
    match &plugin {
        Some(p) => {
            let mut arg = p.clone();
            arg.push(format!(",fd={FD_COUNTS}"));
            if let Some((lo, bytes)) = zone {
                arg.push(format!(",watch={FD_WATCH},tcm={lo:x}-{:x}", lo + bytes));
            }
            if dev.profile {
                arg.push(",profile=1");
                if let Some((lo, hi)) = count::aside_range(&dev.program) {
                    arg.push(format!(",aside={lo:x}-{hi:x}"));
                }
            }
            cmd.arg("-plugin").arg(arg)
        }
        None => cmd.args(["-d", "in_asm,exec,nochain"]),
    };
    cmd.arg(&dev.program)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // SAFETY: between fork and exec only async-signal-safe calls: the program's
    // descriptors at their numbers (without close-on-exec), and death with this process.
    unsafe {
        cmd.pre_exec(move || {
            // All moved out of the way first: any may be 3, 4 or 5 now.
            let moved = |fd: RawFd| libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 10);
            let (a, b) = (moved(theirs_fd), moved(hbm));
            let c = if counts_fd < 0 { -1 } else { moved(counts_fd) };
            let w = if watch_fd < 0 { -1 } else { moved(watch_fd) };
            if a < 0 || b < 0 || libc::dup2(a, FD_RPC) < 0 || libc::dup2(b, FD_HBM) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if counts_fd >= 0 && (c < 0 || libc::dup2(c, FD_COUNTS) < 0) {
                return Err(std::io::Error::last_os_error());
            }
            if watch_fd >= 0 && (w < 0 || libc::dup2(w, FD_WATCH) < 0) {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|source| NotStarted::Qemu { qemu, source })?;
    drop((theirs, write_counts, read_watch));
    Ok(Started {
        child,
        socket: mine,
        counts: read_counts,
        watch: write_watch
            .zip(zone)
            .map(|(w, (lo, _))| watch::Watch::new(w, lo)),
    })
}

/// How serving the program's requests ended: it returned, or the runner could not
/// answer it (why); neither if the program went first.
#[derive(Default)]
struct Served {
    returned: bool,
    unanswered: Option<crate::run::error::RunError>,
}

/// Answers the program's requests on `s` until it returns or goes; after each, the pool's
/// live blocks to the store watch (before the reply, which the plugin waits for).
fn serve(
    s: &mut UnixStream,
    mut watch: Option<&mut watch::Watch>,
    kernel: &str,
    call: &[Arg],
    ran: &mut ProgramRun,
) -> Served {
    let mut served = Served::default();
    while let Some((code, p)) = read_request(s) {
        let mut out = Vec::new();
        let more = state::with(|rt| {
            let more = if code == DeviceRequest::Start as u32 {
                out = answer::start(rt, kernel, call);
                Ok(true)
            } else {
                answer::answer(rt, code, &p, ran, &mut out)
            };
            if let Some(w) = watch.as_deref_mut() {
                w.update(&rt.job.pool);
            }
            more
        });
        let more = match more {
            Ok(more) => more,
            Err(why) => {
                served.unanswered = Some(why);
                break;
            }
        };
        let mut reply = (out.len() as u32).to_le_bytes().to_vec();
        reply.extend(out);
        if s.write_all(&reply).is_err() {
            break;
        }
        if !more {
            served.returned = true;
            break;
        }
    }
    served
}

/// Runs `kernel` with `call` in `dev`'s program on this core, answering its requests until
/// it returns or ends.
pub fn run(dev: &Program, kernel: &str, call: &[Arg]) -> ProgramRun {
    let mut ran = ProgramRun::default();
    let mut started = match start_program(dev) {
        Ok(started) => started,
        Err(why) => {
            ran.ended = Some(why.to_string());
            return ran;
        }
    };
    ran.watched = started.watch.is_some();
    let classes = std::sync::Arc::new(Classes::of(&dev.program, &dev.translation));
    let stderr = started.child.stderr.take().expect("piped");
    let counter = counter(started.counts.take(), stderr, classes.clone());
    let served = serve(
        &mut started.socket,
        started.watch.as_mut(),
        kernel,
        call,
        &mut ran,
    );
    drop(started.socket);
    if served.unanswered.is_some() {
        let _ = started.child.kill();
    }
    let status = started.child.wait().ok();
    let (counts, mut lines, tail) = counter.join().unwrap_or_default();
    if let Some(w) = &started.watch {
        ran.stray_store = lines.iter().find_map(|l| w.stray(l));
        lines.retain(|l| !l.starts_with("s "));
    }
    ran.counts = counts.unwrap_or_default();
    if dev.profile && counts.is_some() {
        let p = profile::of(&lines, &classes, &dev.program, ran.counts.instructions);
        ran.profile = Some(p);
    }
    if served.returned && counts.is_none() {
        ran.ended = Some(format!("the counting plugin gave no counts{tail}"));
    }
    if let Some(why) = served.unanswered {
        ran.ended = Some(format!("the runner stopped the program: {why}"));
    } else if !served.returned {
        ran.ended = Some(format!(
            "the program under qemu {}{tail}",
            how_it_ended(status)
        ));
    }
    ran
}

/// How the program under qemu ended without returning, in words, from its `status`.
fn how_it_ended(status: Option<std::process::ExitStatus>) -> String {
    let own = status
        .and_then(|s| s.code())
        .and_then(DeviceExit::from_code);
    match (status, own) {
        (_, Some(e)) => format!(
            "was ended by the device runtime ({}: {})",
            e.code(),
            e.words()
        ),
        (Some(s), None) => format!("ended: {s}"),
        (None, None) => "was lost".into(),
    }
}
