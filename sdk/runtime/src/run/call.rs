//! The runner's program (`nt_customop_main`, which `ntx op run` links beneath the op's
//! sources): the call checked against the kernel's parameters, the inputs read from
//! `.npy` files into HBM, the shape function run on data-less tensors, the output filled
//! with a poison pattern, the kernel run on each core ([`crate::run::cores`]), the output
//! written. Usage, as `ntx op run` passes it on:
//!
//! ```text
//! OP [ARG...] [--out FILE.npy] [--cores N] [--timeout SECONDS] [--stats | --stats=json]
//! ```
//!
//! Exit status ([`ExitStatus`]): 0 run (warnings allowed), 1 a call or input refused, 2 a
//! misuse error stopped the run, 3 a kernel crashed, 4 a kernel ran past `--timeout`
//! (default 60 s).

use crate::base::cabi::{
    Arg, Meta, ARG_DOUBLE, ARG_INT, ARG_SCALAR_FLOAT, ARG_SCALAR_INT, ARG_TENSOR,
};
use crate::base::codes::ExitStatus;
use crate::base::dtype::DType;
use crate::base::limits::{within_limits, MAX_OPS};
use crate::base::npy;
use crate::percore::registry::{self, Function, Param};
use crate::percore::state;
use crate::percore::tensors::{self, POISON};
use crate::run::error::{ArgRefused, OpRefused, RunError};
use crate::run::options::{self, Options};
use crate::run::outcome::{Outcome, Produced, Stop};
use crate::run::outfile::Reserved;
use crate::run::session::Session;

/// The registered op `name`'s kernel, checked: at most ten ops, none named with 32
/// characters or more, the kernel bound,
/// the kernel's parameters the shape function's.
fn find_op(name: &str, one_library: bool) -> Result<Function, RunError> {
    registry::with(|r| {
        if r.ops.len() > MAX_OPS {
            return Err(RunError::Op(OpRefused::TooMany { count: r.ops.len() }));
        }
        let mut libraries: Vec<&str> = r.ops.iter().map(|o| o.library.as_str()).collect();
        libraries.sort_unstable();
        libraries.dedup();
        if one_library && libraries.len() > 1 {
            return Err(RunError::Op(OpRefused::Libraries {
                libraries: owned(&libraries),
            }));
        }
        if let Some(why) = r
            .ops
            .iter()
            .find_map(|o| nt_sdk_common::op_refused(&o.name, &o.kernel))
        {
            return Err(RunError::Op(OpRefused::Name(why)));
        }
        let known: Vec<&str> = r.ops.iter().map(|o| o.name.as_str()).collect();
        if let Some(d) = known
            .iter()
            .enumerate()
            .find(|(k, n)| known[..*k].contains(n))
        {
            return Err(RunError::Op(OpRefused::Twice {
                op: d.1.to_string(),
                libraries: owned(&libraries),
            }));
        }
        let op = r.ops.iter().find(|o| o.name == name).ok_or_else(|| {
            RunError::Op(OpRefused::Unknown {
                op: name.into(),
                known: owned(&known),
            })
        })?;
        let (op_name, kernel_name) = (|| name.to_string(), || op.kernel.clone());
        let kernel = match r.kernels_of(op).as_slice() {
            [k] => (*k).clone(),
            [] if r.kernels.iter().any(|k| k.0 == op.kernel) => {
                return Err(RunError::Op(OpRefused::NoOverload {
                    op: op_name(),
                    kernel: kernel_name(),
                }))
            }
            [] => {
                return Err(RunError::Op(OpRefused::NoKernel {
                    op: op_name(),
                    kernel: kernel_name(),
                }))
            }
            _ => {
                return Err(RunError::Op(OpRefused::Ambiguous {
                    kernel: kernel_name(),
                }))
            }
        };
        let schema = |p: &[Param]| p.iter().map(|p| p.schema()).collect::<Vec<_>>();
        if schema(&kernel.params) != schema(&op.shape.params) {
            let names = |p: &[Param]| p.iter().map(|p| p.name().to_string()).collect();
            return Err(RunError::Op(OpRefused::Params {
                kernel: kernel_name(),
                takes: names(&kernel.params),
                shape_takes: names(&op.shape.params),
            }));
        }
        Ok(kernel)
    })
}

/// Names as the refusals keep them.
fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// Integer `i`, argument `k`, as parameter `p` takes it: a kernel's `int` (32 bits, as the
/// device's build declares it) refuses what does not fit.
fn fits(p: Param, k: usize, i: i64) -> Result<i64, RunError> {
    if p == Param::Int32 && i32::try_from(i).is_err() {
        return Err(RunError::Argument(ArgRefused::IntTooWide { k, i }));
    }
    Ok(i)
}

/// One argument from the command line, as parameter `p` takes it.
fn argument(p: Param, k: usize, text: &str) -> Result<Arg, RunError> {
    let scalar = |kind, i, f| {
        Ok(Arg {
            kind,
            meta: core::ptr::null(),
            i,
            f,
        })
    };
    match p {
        Param::Tensor => {
            let path = std::path::Path::new(text);
            if !path.exists() {
                return Err(RunError::Argument(ArgRefused::NoFile {
                    k,
                    text: text.into(),
                }));
            }
            let a = npy::read_file(path).map_err(|e| {
                RunError::Argument(ArgRefused::Npy {
                    k,
                    text: text.into(),
                    why: e.to_string(),
                })
            })?;
            if !within_limits(&a.shape) {
                return Err(RunError::Argument(ArgRefused::PastLimits {
                    k,
                    text: text.into(),
                    shape: a.shape.clone(),
                }));
            }
            let meta = state::with(|rt| {
                let h = tensors::from_array(rt, &a);
                rt.entry(h).source = Some(text.to_string());
                &*rt.entry(h).meta as *const Meta
            });
            Ok(Arg {
                kind: ARG_TENSOR,
                meta,
                i: 0,
                f: 0.0,
            })
        }
        Param::Int | Param::Int32 => match text.parse::<i64>() {
            Ok(i) => fits(p, k, i).and_then(|i| scalar(ARG_INT, i, 0.0)),
            Err(_) => Err(RunError::Argument(ArgRefused::NotInt {
                k,
                text: text.into(),
                param: p.name().into(),
            })),
        },
        Param::Double | Param::Float32 => match double(text) {
            Some(f) => scalar(ARG_DOUBLE, 0, f),
            None => Err(RunError::Argument(ArgRefused::NotDouble {
                k,
                text: text.into(),
            })),
        },
        Param::Scalar => match (text.parse::<i64>(), double(text)) {
            (Ok(i), _) => scalar(ARG_SCALAR_INT, i, 0.0),
            (_, Some(f)) => scalar(ARG_SCALAR_FLOAT, 0, f),
            _ => Err(RunError::Argument(ArgRefused::NotScalar {
                k,
                text: text.into(),
            })),
        },
    }
}

/// A double from the command line: a number within a double's range (a literal past it,
/// `1e400`, is refused rather than taken as infinity), or `nan`, `inf`, `-inf`.
fn double(text: &str) -> Option<f64> {
    let f = text.parse::<f64>().ok()?;
    let named = text.trim_start_matches(['+', '-']).to_ascii_lowercase();
    (f.is_finite() || matches!(named.as_str(), "nan" | "inf" | "infinity")).then_some(f)
}

/// The runner: see the module's documentation. Returns the exit status.
pub fn main(args: &[String]) -> i32 {
    crate::run::report::panics_as_bugs();
    let mut session = Session::default();
    match from_command_line(&mut session, args) {
        Ok((out, place)) => write_output(out, place).code(),
        Err(stop) => {
            crate::run::report::print_refusal(&stop);
            stop.status.code()
        }
    }
}

fn usage(m: impl std::fmt::Display) -> Stop {
    crate::run::report::refuse(m.to_string())
}

/// Runs the call the command line describes: its output tensor.
fn from_command_line(
    session: &mut Session,
    args: &[String],
) -> Result<(u32, Option<Reserved>), Stop> {
    let o = options::parse(args).map_err(usage)?;
    let kernel = find_op(&o.op, true).map_err(usage)?;
    let place = o
        .out
        .as_deref()
        .map(Reserved::new)
        .transpose()
        .map_err(usage)?;
    if o.values.len() != kernel.params.len() {
        let kinds: Vec<&str> = kernel.params.iter().map(|p| p.name()).collect();
        return Err(usage(format!(
            "op '{}' takes {} arguments ({}); {} given",
            o.op,
            kinds.len(),
            kinds.join(", "),
            o.values.len()
        )));
    }
    state::with(|rt| {
        tensors::ensure_machine(rt);
        if o.device.is_some() {
            tensors::use_device_host_share(rt);
        }
    });
    let mut call = Vec::new();
    for (k, (p, v)) in kernel.params.iter().zip(&o.values).enumerate() {
        call.push(argument(*p, k, v).map_err(usage)?);
    }
    let out = run_op(session, &o, &call)?;
    Ok((out.output, place))
}

/// Calls op `o.op` with arguments already made (the runner API, the server): the output
/// tensor (one reference), or why the call stopped, with the exit status the runner would
/// give.
pub fn call(session: &mut Session, o: &Options, args: &[Arg]) -> Outcome<u32> {
    o.validate().map_err(usage)?;
    let args = converted(o, args)?;
    run_op(session, o, &args)
}

/// Op `o.op`'s shape function alone on arguments already made (its tensors may be
/// data-less): the output's element type and sizes, or why it stopped.
pub fn shape_of(
    session: &mut Session,
    o: &Options,
    args: &[Arg],
) -> Result<(DType, Vec<i64>), Stop> {
    o.validate().map_err(usage)?;
    let args = converted(o, args)?;
    crate::run::shape::run(&mut session.shapes, &mut session.workers, o, &args)
}

/// The arguments of a call of `o.op` as its kernel's parameters take them, or the refusal.
fn converted(o: &Options, args: &[Arg]) -> Result<Vec<Arg>, Stop> {
    let kernel = find_op(&o.op, false).map_err(usage)?;
    for (k, (p, a)) in kernel.params.iter().zip(args).enumerate() {
        if matches!(a.kind, ARG_INT | ARG_SCALAR_INT) {
            fits(*p, k, a.i).map_err(usage)?;
        }
    }
    let converted: Option<Vec<Arg>> = (args.len() == kernel.params.len())
        .then(|| {
            kernel
                .params
                .iter()
                .zip(args)
                .map(|(p, a)| convert(*p, a))
                .collect()
        })
        .flatten();
    converted.ok_or_else(|| {
        let want: Vec<&str> = kernel.params.iter().map(|p| p.name()).collect();
        usage(format!(
            "op '{}' takes ({}): the call's arguments do not convert",
            o.op,
            want.join(", ")
        ))
    })
}

/// An argument of the C++ API as parameter `p` takes it: a number converts to a `Scalar`,
/// an integer to a `double`; a tensor is only a tensor.
fn convert(p: Param, a: &Arg) -> Option<Arg> {
    let kind = match (p, a.kind) {
        (Param::Tensor, ARG_TENSOR)
        | (Param::Int | Param::Int32, ARG_INT | ARG_SCALAR_INT)
        | (Param::Double | Param::Float32, ARG_DOUBLE | ARG_SCALAR_FLOAT) => a.kind,
        (Param::Double | Param::Float32, ARG_INT | ARG_SCALAR_INT) => {
            return Some(Arg {
                kind: ARG_DOUBLE,
                f: a.i as f64,
                ..*a
            })
        }
        (Param::Scalar, ARG_INT | ARG_SCALAR_INT) => ARG_SCALAR_INT,
        (Param::Scalar, ARG_DOUBLE | ARG_SCALAR_FLOAT) => ARG_SCALAR_FLOAT,
        _ => return None,
    };
    Some(Arg { kind, ..*a })
}

/// An input tensor's name in reports: its parameter's name in the kernel, when the
/// program's debug information gives it, its position, and the file it came from:
/// "input 0 `t_in` (x.npy)".
pub fn input_label(k: usize, name: Option<&str>, source: Option<&str>) -> String {
    let mut label = format!("input {k}");
    if let Some(n) = name {
        label += &format!(" `{n}`");
    }
    if let Some(s) = source {
        label += &format!(" ({s})");
    }
    label
}

/// The shape function, the output, the cores: the output tensor, or why it stopped.
fn run_op(session: &mut Session, o: &Options, call: &[Arg]) -> Outcome<u32> {
    if let Some(dir) = &o.profile {
        crate::run::profile::check_folder(dir).map_err(usage)?;
    }
    let names = session.param_names(&o.op);
    state::with(|rt| {
        tensors::ensure_machine(rt);
        rt.job.op = o.op.clone();
        for (k, a) in call
            .iter()
            .enumerate()
            .filter(|(_, a)| a.kind == ARG_TENSOR)
        {
            // SAFETY: a live tensor the caller holds.
            let e = rt.entry(unsafe { (*a.meta).handle });
            let name = names.as_ref().and_then(|n| n.get(k));
            e.label = input_label(k, name.map(String::as_str), e.source.as_deref());
        }
    });
    let (d, sizes) = crate::run::shape::run(&mut session.shapes, &mut session.workers, o, call)?;
    let shape_dims: Vec<u64> = sizes.iter().map(|s| *s as u64).collect();
    if !within_limits(&shape_dims) {
        return Err(usage(format!(
            "the shape function's output {sizes:?} is {}",
            crate::base::limits::past_limits()
        )));
    }
    state::with(|rt| tensors::room_for(rt, d, &sizes))
        .map_err(|m| crate::run::report::refuse_hbm_full(format!("the output: {m}")))?;
    let lazy = o.cores == 1 && session.returners.contains(&o.op);
    let output = state::with(|rt| {
        let h = tensors::create(rt, d, &sizes, false);
        rt.entry(h).label = "output".into();
        if !lazy {
            tensors::fill_bytes(rt, h, &[POISON]);
        }
        rt.job.dst = Some(h);
        h
    });
    let ran = crate::run::cores::run(&mut session.workers, o, call, output, lazy);
    let status = ran.status;
    session.returners.retain(|op| *op != o.op);
    if o.cores == 1 && status == ExitStatus::Ran && !ran.dst_called {
        session.returners.push(o.op.clone());
    }
    state::with(|rt| {
        rt.job.dst = None;
        if status != ExitStatus::Ran {
            tensors::release(rt, output);
        }
    });
    if status == ExitStatus::Ran {
        Ok(Produced {
            output,
            stats: ran.stats,
        })
    } else {
        Err(Stop::status(status, ran.stats))
    }
}

/// Writes the output to its reserved place (if `--out` gave one) and lets it go: the exit
/// status.
fn write_output(output: u32, place: Option<Reserved>) -> ExitStatus {
    let array = state::with(|rt| {
        let a = place.as_ref().map(|_| tensors::to_array(rt, output));
        tensors::release(rt, output);
        a
    });
    let (Some(place), Some(array)) = (place, array) else {
        return ExitStatus::Ran;
    };
    match place.commit(&npy::to_bytes(&array)) {
        Ok(()) => ExitStatus::Ran,
        Err(e) => {
            eprintln!("error: {e}");
            ExitStatus::Refused
        }
    }
}
