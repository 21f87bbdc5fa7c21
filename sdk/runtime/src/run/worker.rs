//! The processes that run an op's phases, kept between calls: a worker per core (0 to 7)
//! and one for shape functions, each forked from the runner on first use and used again
//! by every later call while it lives. A misuse error or a crash ends a worker (its
//! report said why); the next call forks it anew. A worker takes a job over its socket,
//! runs it with the call's tensors adopted over the same HBM (nothing copied) and answers
//! its report (a message, as [`send`] writes them); a worker whose runner is gone exits
//! (the socket ends, and `PR_SET_PDEATHSIG`).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::base::cabi::{Arg, ARG_TENSOR};
use crate::base::dtype::DType;
use crate::base::limits::MAX_CORES;
use crate::run::child::{self, Child, Exited};

/// How often the runner cuts what a running child printed ([`Child::trim`]).
const TRIM_EVERY: Duration = Duration::from_millis(100);

/// The shape function's worker.
pub const SHAPE_WORKER: usize = MAX_CORES as usize;

/// An argument of a job: a tensor by its place in HBM, or a value as the C ABI holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum WorkerArg {
    /// A tensor: element type, sizes, HBM address (0: data-less), name in reports.
    Tensor(DType, Vec<i64>, u64, String),
    /// A value: its `ARG_*` kind, integer, and double as its bit pattern (JSON has no NaN
    /// nor infinities; the bits carry every double exactly).
    Value(i32, i64, u64),
}

/// What a worker runs: op `op`'s shape function (no `output`) or its kernel on `core`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Assignment {
    /// The op.
    pub op: String,
    /// The core (a kernel's).
    pub core: u32,
    /// Cores running the op.
    pub cores: u32,
    /// Its arguments.
    pub args: Vec<WorkerArg>,
    /// The op's output (a kernel's `get_dst_tensor()`).
    pub output: Option<WorkerArg>,
    /// Whether the output is to be poisoned when the kernel first asks for it.
    #[serde(default)]
    pub poison_at_dst: bool,
    /// `--sanitize`.
    #[serde(default)]
    pub sanitize: bool,
    /// `--device`: the kernel's program for the emulated Q7.
    #[serde(default)]
    pub device: Option<crate::run::device::Program>,
}

impl WorkerArg {
    /// A tensor's elements (0 for a value).
    pub fn numel(&self) -> u64 {
        match self {
            WorkerArg::Tensor(_, sizes, _, _) => crate::percore::tensors::numel(sizes).unwrap_or(0),
            WorkerArg::Value(..) => 0,
        }
    }
}

/// The job arguments of a call whose tensors this process made.
pub fn job_args(call: &[Arg]) -> Vec<WorkerArg> {
    call.iter()
        .map(|a| {
            if a.kind != ARG_TENSOR {
                return WorkerArg::Value(a.kind, a.i, a.f.to_bits());
            }
            // SAFETY: a live tensor the caller holds.
            let m = unsafe { *a.meta };
            let (dtype, label) = crate::percore::state::with(|rt| {
                let e = rt.entry(m.handle);
                (e.dtype, e.label.clone())
            });
            WorkerArg::Tensor(
                dtype,
                m.sizes[..m.ndim as usize].to_vec(),
                m.hbm_addr,
                label,
            )
        })
        .collect()
}

/// In a worker: a job's arguments as this process's tensors (adopted over the same HBM;
/// data-less for a shape function) and values: the call's arguments, and the handles to
/// release after it.
pub fn adopt_args(
    rt: &mut crate::percore::state::Runtime,
    args: &[WorkerArg],
    data_less: bool,
) -> (Vec<Arg>, Vec<u32>) {
    let mut held = Vec::new();
    let call = args
        .iter()
        .map(|a| match a {
            WorkerArg::Value(kind, i, f) => Arg {
                kind: *kind,
                meta: core::ptr::null(),
                i: *i,
                f: f64::from_bits(*f),
            },
            WorkerArg::Tensor(dtype, sizes, addr, label) => {
                let addr = if data_less { 0 } else { *addr };
                let h = crate::percore::tensors::adopt(rt, *dtype, sizes, addr, label);
                held.push(h);
                Arg {
                    kind: ARG_TENSOR,
                    meta: &*rt.entry(h).meta,
                    i: 0,
                    f: 0.0,
                }
            }
        })
        .collect();
    (call, held)
}

struct Worker {
    child: Child,
    sock: UnixStream,
}

/// A session's workers, by index (a core's, or [`SHAPE_WORKER`]), kept between its calls.
/// Dropped, it ends them: each is killed and reaped.
#[derive(Default)]
pub struct Workers {
    slots: Vec<Option<Worker>>,
}

impl Drop for Workers {
    fn drop(&mut self) {
        for w in self.slots.drain(..).flatten() {
            // SAFETY: a signal to our own child, idle between jobs.
            unsafe { libc::kill(w.child.pid(), libc::SIGKILL) };
            drop(w.sock);
            child::wait(w.child);
        }
    }
}

/// Writes one message: its length (4 bytes, little-endian), then its bytes, in one write
/// (two would wake the reader twice, once for the length alone: a context switch more on
/// every call's way there and back).
pub fn send(sock: &mut UnixStream, bytes: &[u8]) -> std::io::Result<()> {
    let mut message = Vec::with_capacity(4 + bytes.len());
    message.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    message.extend_from_slice(bytes);
    sock.write_all(&message)
}

/// Reads one message [`send`] wrote; a short one in one read. The other end sends nothing
/// more before this end answers: bytes past the message are an error.
pub fn receive(sock: &mut UnixStream) -> std::io::Result<Vec<u8>> {
    let mut v = vec![0u8; 1 << 16];
    let mut have = 0;
    while have < 4 {
        match sock.read(&mut v[have..])? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => have += n,
        }
    }
    let whole = 4 + u32::from_le_bytes([v[0], v[1], v[2], v[3]]) as usize;
    if have > whole {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "bytes past the message",
        ));
    }
    v.resize(whole, 0);
    sock.read_exact(&mut v[have..])?;
    v.drain(..4);
    Ok(v)
}

/// A worker's process: each job through `body`, then the report it returns as the answer.
/// Each job starts with descriptor 1 on the worker's stdout file again: a kernel that
/// closed or moved it silences no later call (the device has no descriptors: its printf
/// goes to the core's ring whatever a kernel did before).
fn serve_jobs(mut sock: UnixStream, body: fn(&Assignment) -> Vec<u8>) -> ! {
    // SAFETY: a duplicate of this process's own stdout, past the low numbers kernels use.
    let stdout = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 100) };
    loop {
        let Ok(job) = receive(&mut sock).map(|b| serde_json::from_slice::<Assignment>(&b)) else {
            // SAFETY: the runner is gone: end.
            unsafe { libc::_exit(0) }
        };
        if stdout >= 0 {
            // SAFETY: both descriptors this process's; 1 replaced, as dup2 does.
            unsafe { libc::dup2(stdout, 1) };
        }
        let report = match job {
            Ok(job) => body(&job),
            // SAFETY: a job this runner did not write: end.
            Err(_) => unsafe { libc::_exit(libc::EXIT_FAILURE) },
        };
        if send(&mut sock, &report).is_err() {
            // SAFETY: the runner is gone: end.
            unsafe { libc::_exit(0) }
        }
    }
}

/// Gives worker `index` its job (forking it first if it is not running); `body` is what
/// a new worker runs each job with.
pub fn start(
    workers: &mut Workers,
    index: usize,
    job: &Assignment,
    body: fn(&Assignment) -> Vec<u8>,
) {
    let slots = &mut workers.slots;
    if slots.len() <= index {
        slots.resize_with(index + 1, || None);
    }
    let bytes = serde_json::to_vec(job).expect("a job serializes");
    for _ in 0..2 {
        let w = slots[index].get_or_insert_with(|| {
            let (mine, theirs) = UnixStream::pair().expect("socketpair");
            let mine_fd = std::os::fd::AsRawFd::as_raw_fd(&mine);
            let child = child::spawn(move || {
                // SAFETY: the runner's end, in the child's copy of the descriptors.
                unsafe { libc::close(mine_fd) };
                child::catch_timeout();
                child::catch_faults();
                serve_jobs(theirs, body)
            });
            Worker { child, sock: mine }
        });
        w.child.clear();
        if send(&mut w.sock, &bytes).is_ok() {
            return;
        }
        // It died after its last answer: reap it and fork another.
        if let Some(dead) = slots[index].take() {
            child::wait(dead.child);
        }
    }
    panic!("worker {index} cannot take a job");
}

/// Waits for worker `index`'s answer to the job [`start`] gave it, until `deadline`: its
/// report and what it printed, or how it ended (it is then gone, and the next job forks
/// another). A worker still running at the deadline is sent [`child::TIMEOUT_SIGNAL`]
/// (it writes where it was and ends), then killed if it does not end within two seconds.
pub fn finish(workers: &mut Workers, index: usize, deadline: Option<Instant>) -> Exited {
    let slots = &mut workers.slots;
    let w = slots[index].as_mut().expect("a worker with a job");
    let late = !readable(&w.sock, deadline, &w.child);
    let mut stopped = false;
    if late {
        let pid = w.child.pid();
        stopped = child::is_stopped(pid);
        // SAFETY: signals to our own child.
        unsafe { libc::kill(pid, child::TIMEOUT_SIGNAL) };
        if !readable(
            &w.sock,
            Some(Instant::now() + Duration::from_secs(2)),
            &w.child,
        ) {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    if let Some(report) = answer(&mut w.sock, deadline) {
        return Exited::answered(report, w.child.printed());
    }
    let dead = slots[index].take().expect("checked above");
    // A worker that closed its socket (an exec) and runs on is killed at the deadline.
    let mut ended = child::wait_until(dead.child, deadline.filter(|_| !late));
    ended.timed_out |= late;
    ended.stopped = stopped;
    ended
}

/// The answer a worker's socket holds, [`readable`] said: its report. None when the socket
/// ended, the message is past [`ANSWER_MOST`] or bytes follow it, or its rest did not come
/// by `deadline` (a kernel that wrote to the socket itself): the worker is then ended as a
/// dead one.
fn answer(sock: &mut UnixStream, deadline: Option<Instant>) -> Option<Vec<u8>> {
    let mut message = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        // Until the length is in, a read takes what there is: a short answer in one read.
        let mut room = buf.len();
        if let Some(len) = message.get(..4) {
            let want = 4 + u32::from_le_bytes(len.try_into().ok()?) as usize;
            if want > ANSWER_MOST || message.len() > want {
                return None;
            }
            if message.len() == want {
                return Some(message.split_off(4));
            }
            room = room.min(want - message.len());
        }
        // SAFETY: a buffer of at least `room` bytes; MSG_DONTWAIT never blocks.
        let n = unsafe {
            libc::recv(
                std::os::fd::AsRawFd::as_raw_fd(sock),
                buf.as_mut_ptr().cast(),
                room,
                libc::MSG_DONTWAIT,
            )
        };
        match n {
            0 => return None,
            n if n > 0 => message.extend_from_slice(&buf[..n as usize]),
            _ => match std::io::Error::last_os_error().kind() {
                std::io::ErrorKind::Interrupted => {}
                std::io::ErrorKind::WouldBlock if wait_readable(sock, deadline) => {}
                _ => return None,
            },
        }
    }
}

/// The largest answer a worker gives (a report with a `--device` profile is far smaller).
const ANSWER_MOST: usize = 1 << 30;

/// Whether `sock` has something to read (or has ended) before `deadline` (none: ever).
fn wait_readable(sock: &UnixStream, deadline: Option<Instant>) -> bool {
    let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
    if left.is_some_and(|l| l.is_zero()) {
        return false;
    }
    let wait = left.map_or(-1, |l| {
        i32::try_from(l.as_millis().max(1)).unwrap_or(i32::MAX)
    });
    let mut p = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(sock),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    match unsafe { libc::poll(&mut p, 1, wait) } {
        0 => false,
        n if n > 0 => true,
        _ => std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted,
    }
}

/// Whether `sock` has something to read (or has ended) before `deadline` (none: ever).
/// Every tenth of a second meanwhile, `child`'s printing is cut to what is kept.
fn readable(sock: &UnixStream, deadline: Option<Instant>, child: &Child) -> bool {
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            return false;
        }
        let slice = left.map_or(TRIM_EVERY, |l| l.min(TRIM_EVERY));
        let wait = i32::try_from(slice.as_millis().max(1)).unwrap_or(i32::MAX);
        let mut p = libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(sock),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        match unsafe { libc::poll(&mut p, 1, wait) } {
            0 => child.trim(),
            n if n > 0 => return true,
            _ if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {}
            _ => return true,
        }
    }
}
