//! A kernel on the emulated Q7 (`--device PROGRAM`, docs/customop-device.md): the core's
//! worker runs the kernel's program for the device (built by `ntx op run --device`) under
//! `qemu-xtensa` instead of calling the kernel itself, and answers what the program's
//! runtime (sdk/device) asks over a socket: the same checks, tensors and operations as a
//! host run, on the same HBM, which the program maps (its windows show it). What the
//! program executed is counted from qemu's log ([`crate::run::device::count`]).

pub mod count;
pub mod print;

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::base::cabi::{
    Arg, Meta, ARG_DOUBLE, ARG_INT, ARG_SCALAR_FLOAT, ARG_SCALAR_INT, ARG_TENSOR,
};
use crate::base::dtype::Num;
use crate::base::misuse::Kind;
use crate::percore::ops::{self, Operand};
use crate::percore::state::{self, Runtime};
use crate::percore::{access, tensors};
use crate::run::device::count::{Classes, DeviceCounts};

/// The program for the device and the translation object linked into it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Device {
    /// The linked program.
    pub program: PathBuf,
    /// The translation object it was linked with (its functions are counted apart).
    pub translation: PathBuf,
}

/// The emulator and the core it emulates (one with the single-precision FP option, as the
/// Q7 has): `NT_QEMU_XTENSA` names another qemu-xtensa.
const QEMU_CPU: &str = "de233_fpu";
/// The program's descriptors (sdk/device/protocol.h).
const FD_RPC: RawFd = 3;
const FD_HBM: RawFd = 4;
/// Where the counting plugin writes (sdk/qemu/count_plugin.c's `fd=`).
const FD_COUNTS: RawFd = 5;

/// Request codes (sdk/device/protocol.h, `NT_DEVICE_*`).
pub mod code {
    pub const START: u32 = 1;
    pub const NEW: u32 = 2;
    pub const RETAIN: u32 = 3;
    pub const RELEASE: u32 = 4;
    pub const FILL: u32 = 5;
    pub const APPLY: u32 = 6;
    pub const POLICY: u32 = 7;
    pub const OPEN: u32 = 8;
    pub const CLOSE: u32 = 9;
    pub const BAD_INDEX: u32 = 10;
    pub const BAD_STREAM: u32 = 11;
    pub const COUNT_TCM: u32 = 12;
    pub const TCM_COPY: u32 = 13;
    pub const NOTE: u32 = 14;
    pub const MALLOC: u32 = 15;
    pub const FREE: u32 = 16;
    pub const DST: u32 = 17;
    pub const PRINT: u32 = 18;
    pub const RETURN: u32 = 19;
    pub const STACK: u32 = 20;
}

/// What the program's run left: the tensor it returned (a reference for the runtime), the
/// translate calls it counted by window, and what it executed.
#[derive(Debug, Default)]
pub struct Ran {
    /// The returned tensor's handle.
    pub returned: Option<u32>,
    /// Translate calls, hits and refills by window.
    pub translations: u64,
    pub hits: [u64; 5],
    pub refills: [u64; 5],
    /// Instructions.
    pub counts: DeviceCounts,
    /// Why it ended without returning (its exit or signal), if it did.
    pub ended: Option<String>,
}

/// A request's payload, read in order.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        let n = N.min(self.0.len());
        b[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        b
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    fn i32(&mut self) -> i32 {
        i32::from_le_bytes(self.take())
    }
    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take())
    }
    fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }
    /// An argument: kind, handle, integer, double (as the C ABI's `operand`).
    fn operand(&mut self) -> Operand {
        let (kind, h, i, f) = (self.i32(), self.u32(), self.i64(), self.f64());
        match kind {
            ARG_TENSOR => Operand::Tensor(h),
            ARG_INT | ARG_SCALAR_INT => Operand::Scalar(Num::Int(i)),
            ARG_DOUBLE | ARG_SCALAR_FLOAT => Operand::Scalar(Num::Float(f)),
            _ => Operand::None,
        }
    }
}

/// A meta as the program keeps it (the same layout on both sides: sdk_abi.rs).
fn meta_bytes(rt: &mut Runtime, h: u32) -> Vec<u8> {
    let m: Meta = if h == 0 {
        Meta::default()
    } else {
        *rt.entry(h).meta
    };
    // SAFETY: a plain-data #[repr(C)] struct without padding, read as bytes.
    unsafe {
        std::slice::from_raw_parts((&m as *const Meta).cast::<u8>(), size_of::<Meta>()).to_vec()
    }
}

/// A pool block's offset as the program's TCM offset (-1: none).
fn offset_of(rt: &Runtime, p: *const u8) -> i64 {
    if p.is_null() {
        return -1;
    }
    rt.pool.offset_of(p).map_or(-1, |o| o as i64)
}

/// The answer to one request; false when the program returned (what it gave in `ran`).
fn answer(rt: &mut Runtime, code: u32, p: &[u8], ran: &mut Ran, out: &mut Vec<u8>) -> bool {
    let mut r = Reader(p);
    match code {
        code::OPEN..=code::FREE => access_answer(rt, code, &mut r, out),
        code::RETURN => {
            let h = r.u32();
            ran.returned = (h != 0).then_some(h);
            ran.translations = r.u64();
            for k in 0..5 {
                ran.hits[k] = r.u64();
            }
            for k in 0..5 {
                ran.refills[k] = r.u64();
            }
            return false;
        }
        code::STACK => {
            let (limit, depth, at_least) = (r.u32(), r.u64(), r.u32() != 0);
            let detail = crate::base::stack::device_detail(limit, depth, at_least);
            rt.misuse(Kind::StackOverflow, None, None, detail);
        }
        _ => tensor_answer(rt, code, &mut r, out),
    }
    true
}

/// Tensors and operations.
fn tensor_answer(rt: &mut Runtime, code: u32, r: &mut Reader<'_>, out: &mut Vec<u8>) {
    match code {
        code::NEW => {
            let (dtype, fill, ndim) = (r.i32(), r.i32(), r.u32() as usize);
            let sizes: Vec<i64> = (0..ndim.min(8)).map(|_| r.i64()).collect();
            let value = r.operand();
            let h = ops::factory(rt, dtype, &sizes, fill, value);
            out.extend(meta_bytes(rt, h));
        }
        code::RETAIN => tensors::retain(rt, r.u32()),
        code::RELEASE => tensors::release(rt, r.u32()),
        code::FILL => {
            let h = r.u32();
            ops::fill_with(rt, h, r.operand());
        }
        code::APPLY => {
            let (op, to) = (r.i32(), r.u32());
            let operands = [r.operand(), r.operand(), r.operand()];
            let h = ops::apply_code(rt, op, operands, (to != 0).then_some(to));
            out.extend(meta_bytes(rt, h));
        }
        code::POLICY => {
            let h = r.u32();
            out.extend(tensors::policy(rt, h, r.i32()).to_le_bytes());
        }
        code::DST => {
            let h = tensors::dst_tensor(rt);
            out.extend(meta_bytes(rt, h));
        }
        code::PRINT => out.extend(crate::run::device::print::print(r.0).to_le_bytes()),
        _ => {}
    }
}

/// Accessors, copies and the TCM pool.
fn access_answer(rt: &mut Runtime, code: u32, r: &mut Reader<'_>, out: &mut Vec<u8>) {
    match code {
        code::OPEN => {
            let (h, kind, dtype, ndim) = (r.u32(), r.i32(), r.i32(), r.i32());
            let b = access::open_checked(rt, h, kind, dtype, ndim);
            out.extend(offset_of(rt, b).to_le_bytes());
            out.extend(meta_bytes(rt, h));
        }
        code::CLOSE => {
            let (h, kind, at) = (r.u32(), r.i32(), r.i64());
            let b = rt.pool.block_at(at).unwrap_or(core::ptr::null_mut());
            access::close(rt, h, kind, b);
        }
        code::BAD_INDEX => {
            let (h, dim) = (r.u32(), r.i32());
            access::bad_index(rt, h, dim, r.i64(), r.i64());
        }
        code::BAD_STREAM => {
            let (h, closed, write) = (r.u32(), r.i32(), r.i32());
            access::bad_stream(rt, h, closed != 0, write != 0, r.u64());
        }
        code::COUNT_TCM => access::count_tcm(rt, r.u64(), r.u64()),
        code::TCM_COPY => {
            let (h, dtype, offset, count) = (r.u32(), r.i32(), r.u64(), r.u64());
            access::tcm_copy(rt, h, dtype, offset, count, r.i32() != 0);
        }
        code::NOTE => {
            let (h, first, count) = (r.u32(), r.u64(), r.u64());
            tensors::note(rt, h, first, count, r.i32() != 0, "a TCM or stream copy");
            out.extend(meta_bytes(rt, h));
        }
        code::MALLOC => {
            let (bytes, site) = (r.u64(), r.u32());
            let p = access::tcm_malloc(rt, bytes as usize, u64::from(site));
            out.extend(offset_of(rt, p.cast()).to_le_bytes());
        }
        code::FREE => {
            let (at, raw) = (r.i64(), r.u32());
            let p = rt.pool.block_at(at).unwrap_or(raw as usize as *mut u8);
            access::tcm_free(rt, p.cast());
        }
        _ => {}
    }
}

/// START's answer: the core, the model's layout, the kernel and its arguments.
fn start(rt: &mut Runtime, kernel: &str, call: &[Arg]) -> Vec<u8> {
    let m = rt.machine.as_ref().expect("the model runs");
    let c = m.config();
    let mut out = Vec::new();
    out.extend(rt.core.to_le_bytes());
    out.extend(rt.cores.to_le_bytes());
    for v in [c.engine_base, c.hbm_scratch, c.hbm_base, c.hbm_size] {
        out.extend(v.to_le_bytes());
    }
    out.extend((kernel.len() as u32).to_le_bytes());
    out.extend(kernel.as_bytes());
    out.extend((call.len() as u32).to_le_bytes());
    for a in call {
        // SAFETY: a tensor argument's meta is live while the job runs.
        let h = (a.kind == ARG_TENSOR).then(|| unsafe { (*a.meta).handle });
        out.extend(a.kind.to_le_bytes());
        out.extend(h.unwrap_or(0).to_le_bytes());
        out.extend(a.i.to_le_bytes());
        out.extend(a.f.to_le_bytes());
        if let Some(h) = h {
            out.extend(meta_bytes(rt, h));
        }
    }
    out
}

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
fn counter(
    counts: Option<std::fs::File>,
    stderr: std::process::ChildStderr,
    classes: Classes,
) -> std::thread::JoinHandle<(Option<DeviceCounts>, String)> {
    std::thread::spawn(move || match counts {
        Some(f) => {
            let said = std::thread::spawn(move || crate::run::device::count::tail(stderr));
            let c = crate::run::device::count::count_blocks(f, &classes);
            (c, said.join().unwrap_or_default())
        }
        None => {
            let (c, tail) = crate::run::device::count::count(stderr, &classes);
            (Some(c), tail)
        }
    })
}

/// The program started under qemu: the emulator, the runner's end of the program's
/// socket, and the read end of the counting plugin's pipe (with the plugin); or why not.
fn start_program(
    dev: &Device,
) -> Result<(std::process::Child, UnixStream, Option<std::fs::File>), String> {
    let (mine, theirs) = UnixStream::pair().expect("a socket pair");
    let hbm = state::with(|rt| rt.machine.as_ref().map(|m| m.hbm_fd())).expect("the model runs");
    let qemu = std::env::var("NT_QEMU_XTENSA").unwrap_or_else(|_| "qemu-xtensa".into());
    let plugin = count_plugin();
    // The plugin's pipe: read here, its write end the program's FD_COUNTS.
    let (read_counts, write_counts) = match plugin {
        Some(_) => {
            let (r, w) = std::io::pipe().map_err(|e| format!("a pipe: {e}"))?;
            (
                Some(std::fs::File::from(std::os::fd::OwnedFd::from(r))),
                Some(w),
            )
        }
        None => (None, None),
    };
    let (theirs_fd, counts_fd) = (
        theirs.as_raw_fd(),
        write_counts.as_ref().map_or(-1, |w| w.as_raw_fd()),
    );
    let mut cmd = Command::new(&qemu);
    cmd.args(["-cpu", QEMU_CPU]);
    match &plugin {
        Some(p) => {
            let mut arg = p.clone();
            arg.push(format!(",fd={FD_COUNTS}"));
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
            if a < 0 || b < 0 || libc::dup2(a, FD_RPC) < 0 || libc::dup2(b, FD_HBM) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if counts_fd >= 0 && (c < 0 || libc::dup2(c, FD_COUNTS) < 0) {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| format!("cannot run {qemu}: {e}"))?;
    drop((theirs, write_counts));
    Ok((child, mine, read_counts))
}

/// Runs `kernel` with `call` in `dev`'s program on this core, answering its requests until
/// it returns or ends.
pub fn run(dev: &Device, kernel: &str, call: &[Arg]) -> Ran {
    let mut ran = Ran::default();
    let (mut child, mine, read_counts) = match start_program(dev) {
        Ok(started) => started,
        Err(why) => {
            ran.ended = Some(why);
            return ran;
        }
    };
    let classes = Classes::of(&dev.program, &dev.translation);
    let stderr = child.stderr.take().expect("piped");
    let counter = counter(read_counts, stderr, classes);
    let mut s = mine;
    let mut returned = false;
    while let Some((code, p)) = read_request(&mut s) {
        let mut out = Vec::new();
        let more = state::with(|rt| {
            if code == code::START {
                out = start(rt, kernel, call);
                true
            } else {
                answer(rt, code, &p, &mut ran, &mut out)
            }
        });
        let mut reply = (out.len() as u32).to_le_bytes().to_vec();
        reply.extend(out);
        if s.write_all(&reply).is_err() {
            break;
        }
        if !more {
            returned = true;
            break;
        }
    }
    drop(s);
    let status = child.wait().ok();
    let (counts, tail) = counter.join().unwrap_or_default();
    ran.counts = counts.unwrap_or_default();
    if returned && counts.is_none() {
        ran.ended = Some(format!("the counting plugin gave no counts{tail}"));
    }
    if !returned {
        let how = status.map_or("was lost".into(), |s| format!("ended: {s}"));
        ran.ended = Some(format!("the program under qemu {how}{tail}"));
    }
    ran
}
