//! The op's program as a server, for the Python front end (sdk/python): `PROGRAM --serve FD`
//! takes requests on the Unix socket FD and keeps its model, its HBM and its workers
//! ([`crate::run::worker`]) between calls. `PROGRAM --describe` prints what the program registers.
//!
//! Messages both ways are JSON, each after its length (4 bytes, little-endian). The server
//! speaks first: the description ([`describe`]) with the HBM's memory file attached
//! (`SCM_RIGHTS`), which the caller maps to read and write tensors in place. Then, per
//! request, one answer:
//!
//! * `{"Alloc": {"dtype": CODE, "shape": [...], "free"?: [H...]}}`: a tensor in HBM,
//!   `{"handle", "offset"}` (its bytes at that offset of the memory file), or `{"error"}`
//!   (with `"kind": "hbm-full"` when the HBM left has no room for it);
//! * `{"Free": {"handles": [H...]}}`: `{}`;
//! * `{"Shape": {"op", "args": [... | {"Meta": {"dtype", "shape"}}], "timeout"?: SECONDS}}`:
//!   the op's shape function alone, `{"status", "dtype"?, "shape"?, "error"?, "reports"?}`;
//! * `{"Call": {"op", "args": [{"Tensor": H} | {"Bytes": {"dtype", "shape", "hex"}} | {"Int": I}
//!   | {"Double": BITS} | {"ScalarInt": I} | {"ScalarFloat": BITS}], "cores": N, "timeout"?: SECONDS,
//!   "free"?: [H...], "sanitize"?: BOOL}}`:
//!   `{"status", "output"?: {"handle", "offset", "dtype", "shape"}, "error"?, "stats"?}`,
//!   `stats` being the `--stats=json` document. A double travels as its IEEE-754 bit
//!   pattern (an unsigned integer), so NaN and the infinities, which JSON lacks, arrive as
//!   the device would pass them. A `Bytes` argument is a small input sent with the call (at
//!   most [`INLINE_BYTES`], its bytes in C order as hexadecimal): the server makes it a
//!   tensor for the call alone, which saves the caller an `Alloc` round trip.
//!
//! The server ends when the caller's end of the socket closes, however the caller ended (a
//! thread watches for it and kills the server's process group, workers included, even in
//! the middle of a call).

use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::net::UnixStream;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::base::cabi::{Arg, ARG_DOUBLE, ARG_INT, ARG_SCALAR_FLOAT, ARG_SCALAR_INT, ARG_TENSOR};
use crate::base::codes::ExitStatus;
use crate::base::dtype::DType;
use crate::base::limits::{within_limits, MAX_CORES};
use crate::edges::error::EdgeError;
use crate::percore::registry::{self, Param};
use crate::percore::state;
use crate::percore::tensors::{self, HBM_BASE, HOST_SHARE};
use crate::run::options::{Options, StatsFormat};
use crate::run::outcome::{Refusal, Stop};
use crate::run::report::Output;
use crate::run::Session;

/// A request.
#[derive(Debug, Deserialize)]
enum ServerRequest {
    Alloc {
        dtype: i32,
        shape: Vec<i64>,
        /// Tensors to free first (so a call's frees ride on the next request).
        #[serde(default)]
        free: Vec<u32>,
    },
    Free {
        handles: Vec<u32>,
    },
    /// The op's shape function alone, on data-less tensors (`{"Meta": ...}` arguments):
    /// `{"status", "dtype"?, "shape"?, "error"?, "reports"?}`.
    Shape {
        op: String,
        args: Vec<ArgIn>,
        /// Seconds the shape function may run (0: no limit; none: the default).
        #[serde(default)]
        timeout: Option<f64>,
    },
    Call {
        op: String,
        args: Vec<ArgIn>,
        cores: u32,
        /// Seconds the kernels may run (0: no limit; none: the default).
        #[serde(default)]
        timeout: Option<f64>,
        /// Tensors to free first.
        #[serde(default)]
        free: Vec<u32>,
        /// `--sanitize`.
        #[serde(default)]
        sanitize: bool,
    },
}

/// An argument of a call.
#[derive(Debug, Deserialize)]
enum ArgIn {
    Tensor(u32),
    Int(i64),
    Double(u64),
    ScalarInt(i64),
    ScalarFloat(u64),
    /// A data-less tensor (a shape request's): its element type code and sizes.
    Meta {
        dtype: i32,
        shape: Vec<i64>,
    },
    /// A small input tensor sent with the call: its element type, sizes and bytes (hex).
    Bytes {
        dtype: i32,
        shape: Vec<i64>,
        hex: String,
    },
}

pub use crate::base::codes::{INLINE_BYTES, PROTOCOL};

/// What the program registers and how its HBM is laid out: the libraries, each op with its
/// parameters' kinds, the element types (code, `.npy` descr, size), the HBM's first SoC
/// address and the size of the share tensors are allocated in.
pub fn describe() -> Value {
    let (libraries, mut ops, kernels, params) = registry::with(|r| {
        let mut libs: Vec<String> = r.ops.iter().map(|o| o.library.clone()).collect();
        libs.sort();
        libs.dedup();
        let ops: Vec<Value> = r
            .ops
            .iter()
            .map(|o| {
                let params: Vec<&str> = o.shape.params.iter().map(|p| p.word()).collect();
                json!({"name": o.name, "library": o.library, "kernel": o.kernel, "params": params})
            })
            .collect();
        // Each op's kernel function and its parameter count (0, 0: not bound).
        let kernels: Vec<(usize, usize)> = r
            .ops
            .iter()
            .map(|o| {
                let k = r.kernels_of(o).first().copied();
                k.map_or((0, 0), |k| (k.function as usize, k.params.len()))
            })
            .collect();
        let params: Vec<Vec<Param>> = r.ops.iter().map(|o| o.shape.params.clone()).collect();
        (libs, ops, kernels, params)
    });
    // The kernels' parameter names where the program's debug information has them.
    for ((op, names), params) in ops
        .iter_mut()
        .zip(crate::run::param_names::of_functions(&kernels))
        .zip(&params)
    {
        op["schema"] = json!(crate::run::schema::schema(
            op["name"].as_str().unwrap_or_default(),
            params,
            names.as_deref()
        ));
        op["names"] = json!(names);
    }
    let dtypes: Vec<Value> = DType::ALL
        .iter()
        .map(|d| json!({"code": *d as i32, "name": d.name(), "descr": crate::base::npy::descr_of(*d), "size": d.size()}))
        .collect();
    json!({
        "protocol": PROTOCOL,
        "libraries": libraries,
        "ops": ops,
        "dtypes": dtypes,
        "hbm_base": HBM_BASE,
        "host_share": HOST_SHARE,
        "max_cores": MAX_CORES,
        "shape_limits": crate::base::limits::SHAPE_LIMITS,
        "exit": {
            "usage": ExitStatus::Refused.code(),
            "misuse": ExitStatus::Misuse.code(),
            "crash": ExitStatus::Crashed.code(),
            "timeout": ExitStatus::Timeout.code(),
        },
        "max_timeout": crate::base::limits::MAX_TIMEOUT_SECS,
        "inline_bytes": INLINE_BYTES,
    })
}

fn send(sock: &mut UnixStream, v: &Value) -> std::io::Result<()> {
    crate::run::worker::send(sock, &serde_json::to_vec(v).expect("a value serializes"))
}

/// Sends `v` with descriptor `fd` attached.
fn send_with_fd(sock: &UnixStream, v: &Value, fd: i32) -> std::io::Result<()> {
    let body = serde_json::to_vec(v).expect("a value serializes");
    let mut bytes = (body.len() as u32).to_le_bytes().to_vec();
    bytes.extend(body);
    let mut iov = libc::iovec {
        iov_base: bytes.as_mut_ptr().cast(),
        iov_len: bytes.len(),
    };
    // SAFETY: CMSG_SPACE is a size computation.
    let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<i32>() as u32) } as usize;
    let mut control = vec![0u8; space];
    // SAFETY: a zeroed msghdr is valid; every pointer set below outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    // SAFETY: the control buffer holds one header and one descriptor.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<i32>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<i32>(), fd);
    }
    // SAFETY: msg is valid for the call.
    let n = unsafe { libc::sendmsg(sock.as_raw_fd(), &msg, 0) };
    if n as usize != bytes.len() {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// A thread that kills this server's process group (workers included) once the caller's
/// end of `fd` closes.
fn watch_caller(fd: i32) {
    std::thread::spawn(move || loop {
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLRDHUP,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, -1) };
        if n > 0 && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0 {
            // SAFETY: this server's own process group.
            unsafe { libc::kill(0, libc::SIGKILL) };
        }
    });
}

/// The element type of a tensor the caller describes (`Alloc`, a `Meta` argument), its
/// shape checked against a tensor's limits: the reason when either is wrong.
fn tensor_type(dtype: i32, shape: &[i64]) -> Result<DType, EdgeError> {
    let d = DType::from_code(dtype).ok_or(EdgeError::NoDType(dtype))?;
    let dims: Option<Vec<u64>> = shape.iter().map(|s| u64::try_from(*s).ok()).collect();
    if !dims.is_some_and(|d| within_limits(&d)) {
        return Err(EdgeError::PastLimits {
            shape: shape.to_vec(),
        });
    }
    Ok(d)
}

fn alloc(dtype: i32, shape: &[i64]) -> Value {
    let d = match tensor_type(dtype, shape) {
        Ok(d) => d,
        Err(m) => return json!({"error": m.to_string()}),
    };
    state::with(|rt| {
        if let Err(m) = tensors::room_for(rt, d, shape) {
            return json!({"error": m.to_string(), "kind": crate::base::codes::SERVER_HBM_FULL});
        }
        let h = tensors::create(rt, d, shape, false);
        let e = rt.entry(h);
        e.label = format!("tensor {h}");
        json!({"handle": h, "offset": e.meta.hbm_addr - HBM_BASE})
    })
}

fn argument(a: &ArgIn, k: usize) -> Result<Arg, Refusal> {
    let value = |kind, i, f| Arg {
        kind,
        meta: core::ptr::null(),
        i,
        f,
    };
    Ok(match *a {
        ArgIn::Int(i) => value(ARG_INT, i, 0.0),
        ArgIn::Double(bits) => value(ARG_DOUBLE, 0, f64::from_bits(bits)),
        ArgIn::ScalarInt(i) => value(ARG_SCALAR_INT, i, 0.0),
        ArgIn::ScalarFloat(bits) => value(ARG_SCALAR_FLOAT, 0, f64::from_bits(bits)),
        ArgIn::Meta { dtype, ref shape } => {
            let d = tensor_type(dtype, shape)
                .map_err(|m| Refusal::because(format!("argument {k}: {m}")))?;
            let meta = state::with(|rt| {
                let h = tensors::create(rt, d, shape, true);
                let e = rt.entry(h);
                e.label = format!("input {k}");
                &*e.meta as *const crate::base::cabi::Meta
            });
            Arg {
                kind: ARG_TENSOR,
                meta,
                i: 0,
                f: 0.0,
            }
        }
        ArgIn::Bytes {
            dtype,
            ref shape,
            ref hex,
        } => inline_tensor(dtype, shape, hex, k).map_err(|r| Refusal {
            reason: format!("argument {k}: {}", r.reason),
            ..r
        })?,
        ArgIn::Tensor(h) => state::with(|rt| {
            if !rt.is_live(h) {
                let m = format!("argument {k}: tensor {h} is not live");
                return Err(Refusal::because(m));
            }
            Ok(input(rt, h, k))
        })?,
    })
}

/// Tensor `h` as argument `k` (so labelled in reports).
fn input(rt: &mut state::Runtime, h: u32, k: usize) -> Arg {
    let e = rt.entry(h);
    e.label = format!("input {k}");
    Arg {
        kind: ARG_TENSOR,
        meta: &*e.meta,
        i: 0,
        f: 0.0,
    }
}

/// A `Bytes` argument as a tensor of its own (released after the call).
fn inline_tensor(dtype: i32, shape: &[i64], hex: &str, k: usize) -> Result<Arg, Refusal> {
    let refused = Refusal::because;
    let d = tensor_type(dtype, shape).map_err(|e| refused(e.to_string()))?;
    let data = from_hex(hex).ok_or_else(|| refused("its bytes are not hexadecimal".into()))?;
    if data.len() > INLINE_BYTES {
        let m = format!(
            "{} bytes sent with the call: at most {INLINE_BYTES}",
            data.len()
        );
        return Err(refused(m));
    }
    state::with(|rt| {
        let want = shape.iter().product::<i64>() as u64 * d.size() as u64;
        if data.len() as u64 != want {
            let m = format!("{} bytes for a {shape:?} tensor of {want}", data.len());
            return Err(refused(m));
        }
        tensors::room_for(rt, d, shape).map_err(|e| Refusal::hbm_full(e.to_string()))?;
        let h = tensors::create(rt, d, shape, false);
        tensors::write_all(rt, h, &data);
        Ok(input(rt, h, k))
    })
}

/// Bytes from hexadecimal text: `None` for an odd length or a character not a digit.
fn from_hex(hex: &str) -> Option<Vec<u8>> {
    let b = hex.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|v| v as u8);
    b.chunks(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

/// A request's timeout (none given: the default), or the refusal to answer.
fn timeout_of(timeout: Option<f64>) -> Result<Option<std::time::Duration>, Value> {
    match timeout.map(crate::base::limits::timeout_of_secs) {
        None => Ok(Some(crate::base::limits::DEFAULT_TIMEOUT)),
        Some(Ok(t)) => Ok(t),
        Some(Err(m)) => Err(json!({"status": ExitStatus::Refused.code(), "error": m.to_string()})),
    }
}

/// The server's settings of every call: reports come back in the answer, not on stderr.
const QUIET: Output = Output {
    quiet: true,
    kernel_text_to_stderr: false,
};

fn call(
    session: &mut Session,
    op: String,
    args: &[ArgIn],
    cores: u32,
    timeout: Option<f64>,
    sanitize: bool,
) -> Value {
    let timeout = match timeout_of(timeout) {
        Ok(t) => t,
        Err(refused) => return refused,
    };
    let o = Options {
        op,
        cores,
        timeout,
        sanitize,
        stats: Some(StatsFormat::Return),
        output: QUIET,
        ..Options::default()
    };
    let (call, made) = match arguments(args) {
        Ok(c) => c,
        Err(refused) => return refusal(refused),
    };
    let outcome = crate::run::call(session, &o, &call);
    release(&made);
    match outcome {
        Ok(ran) => state::with(|rt| {
            let e = rt.entry(ran.output);
            let shape = &e.meta.sizes[..e.meta.ndim as usize];
            let output = json!({"handle": ran.output, "offset": e.meta.hbm_addr - HBM_BASE, "dtype": e.meta.dtype, "shape": shape});
            json!({"status": ExitStatus::Ran.code(), "output": output, "stats": ran.stats})
        }),
        Err(stop) => stopped(stop),
    }
}

/// The answer to a call that stopped: its status, the refusal's reason (and
/// `"kind": "hbm-full"` for want of HBM), the stats document.
fn stopped(stop: Stop) -> Value {
    let reason = stop.refused.as_ref().map(|r| r.reason.clone());
    let mut v = json!({"status": stop.status.code(), "error": reason, "stats": stop.stats});
    if stop.refused.is_some_and(|r| r.hbm_full) {
        v["kind"] = crate::base::codes::SERVER_HBM_FULL.into();
    }
    v
}

fn answer(session: &mut Session, request: &[u8]) -> Value {
    match serde_json::from_slice::<ServerRequest>(request) {
        Err(e) => json!({"error": format!("a request the server does not know: {e}")}),
        Ok(ServerRequest::Alloc { dtype, shape, free }) => {
            free_all(&free);
            alloc(dtype, &shape)
        }
        Ok(ServerRequest::Free { handles }) => {
            free_all(&handles);
            json!({})
        }
        Ok(ServerRequest::Shape { op, args, timeout }) => shape(session, op, &args, timeout),
        Ok(ServerRequest::Call {
            op,
            args,
            cores,
            timeout,
            free,
            sanitize,
        }) => {
            free_all(&free);
            call(session, op, &args, cores, timeout, sanitize)
        }
    }
}

/// Op `op`'s shape function on data-less tensors (what PyTorch's fake implementation asks).
fn shape(session: &mut Session, op: String, args: &[ArgIn], timeout: Option<f64>) -> Value {
    let timeout = match timeout_of(timeout) {
        Ok(t) => t,
        Err(refused) => return refused,
    };
    let o = Options {
        op,
        cores: 1,
        timeout,
        stats: Some(StatsFormat::Return),
        output: QUIET,
        ..Options::default()
    };
    let (call, made) = match arguments(args) {
        Ok(c) => c,
        Err(refused) => return refusal(refused),
    };
    let answer = match crate::run::shape_of(session, &o, &call) {
        Ok((dtype, sizes)) => {
            json!({"status": ExitStatus::Ran.code(), "dtype": dtype.code(), "shape": sizes})
        }
        Err(stop) => stopped(stop),
    };
    release(&made);
    answer
}

/// A request's arguments converted, with the tensors made for `Meta` and `Bytes` ones
/// (the caller releases them after the run); those already made are released when an
/// argument is refused.
fn arguments(args: &[ArgIn]) -> Result<(Vec<Arg>, Vec<u32>), Refusal> {
    let (mut call, mut made) = (Vec::new(), Vec::new());
    for (k, a) in args.iter().enumerate() {
        match argument(a, k) {
            Ok(c) => {
                if matches!(a, ArgIn::Meta { .. } | ArgIn::Bytes { .. }) {
                    // SAFETY: a tensor argument() just made.
                    made.push(unsafe { (*c.meta).handle });
                }
                call.push(c);
            }
            Err(m) => {
                release(&made);
                return Err(m);
            }
        }
    }
    Ok((call, made))
}

/// The answer to a request whose arguments are refused.
fn refusal(refused: Refusal) -> Value {
    stopped(Stop {
        status: ExitStatus::Refused,
        refused: Some(refused),
        stats: None,
    })
}

/// Lets go of the tensors a request's arguments made.
fn release(made: &[u32]) {
    state::with(|rt| made.iter().for_each(|h| tensors::release(rt, *h)));
}

/// Lets go of the caller's reference to each live tensor of `handles`.
fn free_all(handles: &[u32]) {
    state::with(|rt| {
        for &h in handles {
            if rt.is_live(h) {
                tensors::release(rt, h);
            }
        }
    });
}

/// Serves on socket `fd` until the caller's end closes: the exit status.
pub fn main(fd: i32) -> i32 {
    crate::run::report::panics_as_bugs();
    // SAFETY: the caller passed this descriptor for the server's use alone.
    let mut sock = unsafe { UnixStream::from_raw_fd(fd) };
    // A group of its own, which the watch thread kills whole.
    // SAFETY: plain system calls on this process.
    unsafe { libc::setpgid(0, 0) };
    watch_caller(fd);
    let mut session = Session::default();
    let hbm = state::with(|rt| {
        tensors::ensure_machine(rt);
        rt.machine.as_ref().expect("started").hbm_fd()
    });
    if send_with_fd(&sock, &describe(), hbm).is_err() {
        return 1;
    }
    while let Ok(request) = crate::run::worker::receive(&mut sock) {
        if send(&mut sock, &answer(&mut session, &request)).is_err() {
            break;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::{ArgIn, ServerRequest};
    use crate::base::codes::{SERVER_ARGS, SERVER_REQUESTS};

    /// The tags serde takes for `T`, from its refusal of one it does not.
    fn tags<T: serde::de::DeserializeOwned + std::fmt::Debug>() -> String {
        let e = serde_json::from_str::<T>(r#"{"NoSuchTag": 0}"#).unwrap_err();
        e.to_string()
    }

    #[test]
    fn the_tags_the_package_is_generated_with_are_the_servers() {
        let listed = |names: &[&str]| {
            let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            format!("expected one of {}", quoted.join(", "))
        };
        let requests = tags::<ServerRequest>();
        assert!(requests.contains(&listed(&SERVER_REQUESTS)), "{requests}");
        let args = tags::<ArgIn>();
        assert!(args.contains(&listed(&SERVER_ARGS)), "{args}");
    }
}
