//! The shape function, on a worker of its own ([`crate::run::worker`]), on data-less copies of
//! the inputs: the output's element type and sizes, or how it failed (a misuse error, a
//! crash, an exception, an `exit`), reported in the runner's form with `--stats` printed.
//!
//! A result is kept per signature (the op, the cores, each tensor's element type and sizes,
//! each number) when the shape function ran clean (no report, nothing printed): a later
//! call of that signature in the same process (the Python package's server) does not run
//! it again. The device runs a shape function once, while the model compiles, so a kernel
//! can count on nothing more; docs/customop-python.md says so.

use serde::{Deserialize, Serialize};

use crate::base::cabi::Arg;
use crate::base::dtype::DType;
use crate::base::misuse::Report;
use crate::percore::registry;
use crate::percore::state::{self, Phase, Runtime};
use crate::percore::tensors;
use crate::run::child;
use crate::run::options::Options;
use crate::run::outcome::Stop;
use crate::run::worker::{self, Assignment, Workers, SHAPE_WORKER};

/// What the shape function's process reports.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ShapeReport {
    /// The output's element type code and sizes.
    result: Option<(DType, Vec<i64>)>,
    /// Why the call is refused (the shape function returned no tensor).
    refused: Option<String>,
    /// Its misuses.
    reports: Vec<Report>,
}

fn end(r: &ShapeReport, code: i32) -> ! {
    child::exit_with(&serde_json::to_vec(r).expect("a report serializes"), code)
}

fn on_shape_error(rt: &Runtime) -> ! {
    let r = ShapeReport {
        reports: rt.job.reports.clone(),
        ..ShapeReport::default()
    };
    end(&r, rt.exit_status().code())
}

/// A shape job, on the shape function's worker: data-less copies of the tensor
/// arguments, the call, the result.
fn shape_job(job: &Assignment) -> Vec<u8> {
    let (shape, _) = registry::lookup(&job.op).expect("the runner checked the op");
    let (args, held) = state::with(|rt| {
        rt.begin_job(&job.op, 0, job.cores, Phase::Shape, on_shape_error);
        let (args, held) = worker::adopt_args(rt, &job.args, true);
        for &h in &held {
            let e = rt.entry(h);
            e.label = format!("shape {}", e.label);
        }
        (args, held)
    });
    // SAFETY: the invoker and function were registered together; the arguments match the
    // parameters (checked by the runner).
    let out = unsafe { (shape.invoker)(shape.function, args.as_ptr()) };
    let mut r = ShapeReport::default();
    if out.is_null() {
        r.refused = Some("the shape function returned no tensor".into());
    } else {
        // SAFETY: the invoker returns a live tensor.
        let m = unsafe { *out };
        let dtype = state::with(|rt| rt.entry(m.handle).dtype);
        r.result = Some((dtype, m.sizes[..m.ndim as usize].to_vec()));
    }
    state::with(|rt| {
        r.reports = rt.job.reports.clone();
        child::flush_stdio();
        if !out.is_null() {
            // SAFETY: as above; the invoker's reference.
            tensors::release(rt, unsafe { (*out).handle });
        }
        for h in held {
            tensors::release(rt, h);
        }
    });
    serde_json::to_vec(&r).expect("a report serializes")
}

/// A call's signature: the op, the cores, each argument's kind, numbers and (a tensor's)
/// element type and sizes.
type Signature = (String, u32, Vec<(i32, i64, u64, i32, Vec<i64>)>);

/// An output's element type and sizes.
type OutputShape = (DType, Vec<i64>);

/// A session's clean shape results, newest last (at most [`KEPT`]): a call of the same
/// signature runs no shape process (a cache, never a call's result).
#[derive(Default)]
pub struct Kept {
    results: Vec<(Signature, OutputShape)>,
}
const KEPT: usize = 64;

fn signature(o: &Options, args: &[Arg]) -> Signature {
    let each = args
        .iter()
        .map(|a| {
            // SAFETY: a tensor argument's meta is live while the call runs.
            let (dtype, sizes) = match unsafe { a.meta.as_ref() } {
                Some(m) => (m.dtype, m.sizes[..m.ndim as usize].to_vec()),
                None => (-1, Vec::new()),
            };
            (a.kind, a.i, a.f.to_bits(), dtype, sizes)
        })
        .collect();
    (o.op.clone(), o.cores, each)
}

/// Runs the shape function of op `o.op` (or gives the result it gave clean on the same
/// signature): the output's element type code and sizes, or why it stopped after its
/// failure was reported.
pub fn run(
    kept: &mut Kept,
    workers: &mut Workers,
    o: &Options,
    args: &[Arg],
) -> Result<OutputShape, Stop> {
    let key = signature(o, args);
    if let Some((_, result)) = kept.results.iter().find(|(k, _)| *k == key) {
        return Ok(result.clone());
    }
    let (result, clean) = run_now(workers, o, args)?;
    if clean {
        if kept.results.len() == KEPT {
            kept.results.remove(0);
        }
        kept.results.push((key, result.clone()));
    }
    Ok(result)
}

/// Runs the shape function: its result and whether it ran clean, or why it stopped.
fn run_now(workers: &mut Workers, o: &Options, args: &[Arg]) -> Result<(OutputShape, bool), Stop> {
    let job = Assignment {
        op: o.op.clone(),
        core: 0,
        cores: o.cores,
        args: worker::job_args(args),
        output: None,
        poison_at_dst: false,
        sanitize: o.sanitize,
        device: None,
    };
    worker::start(workers, SHAPE_WORKER, &job, shape_job);
    let ended = worker::finish(workers, SHAPE_WORKER, o.deadline());
    o.output.kernel_text(ended.printed.as_bytes());
    let mut r =
        serde_json::from_slice::<ShapeReport>(&ended.report).unwrap_or_else(|_| ShapeReport {
            reports: vec![if ended.timed_out {
                ended.timeout(&o.op, "shape function", None, o.timeout.unwrap_or_default())
            } else {
                ended.crash(&o.op, "shape function", None)
            }],
            ..ShapeReport::default()
        });
    r.reports
        .iter_mut()
        .for_each(crate::run::place::place_report);
    if let Some(m) = r.refused {
        return Err(crate::run::report::refuse(m));
    }
    let failed = o.output.print_reports(&r.reports);
    let clean = r.reports.is_empty() && ended.printed.is_empty();
    match r.result {
        Some(result) if !failed => Ok((result, clean)),
        _ => {
            let stats = o
                .stats
                .and_then(|f| crate::run::stats::print(f, o, &[], &r.reports));
            Err(Stop::status(
                crate::base::status::of_errors(&r.reports),
                stats,
            ))
        }
    }
}
