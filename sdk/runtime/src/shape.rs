//! The shape function, in a process of its own ([`crate::child`]) on data-less copies of
//! the inputs: the output's element type and sizes, or how it failed (a misuse error, a
//! crash, an exception, an `exit`), reported in the runner's form with `--stats` printed.

use serde::{Deserialize, Serialize};

use crate::cabi::{Arg, ARG_TENSOR};
use crate::child;
use crate::misuse::{Kind, Report};
use crate::options::Options;
use crate::registry::Function;
use crate::report::print_reports;
use crate::state::{self, Phase, Runtime};
use crate::status::{EXIT_CRASH, EXIT_MISUSE, EXIT_USAGE};
use crate::tensors;

/// What the shape function's process reports.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ShapeReport {
    /// The output's element type code and sizes.
    result: Option<(i32, Vec<i64>)>,
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
        reports: rt.reports.clone(),
        ..ShapeReport::default()
    };
    end(&r, rt.exit_status())
}

/// The shape function's process: data-less copies of the tensor arguments, the call, the
/// result.
fn shape_main(shape: &Function, args: &[Arg]) -> ! {
    let shape_args: Vec<Arg> = state::with(|rt| {
        rt.phase = Phase::Shape;
        rt.on_error = on_shape_error;
        args.iter()
            .map(|a| {
                if a.kind != ARG_TENSOR {
                    return *a;
                }
                // SAFETY: the runtime made it, and it lives.
                let m = unsafe { *a.meta };
                let sizes = &m.sizes[..m.ndim as usize];
                let d = crate::dtype::DType::from_code(m.dtype).expect("a tensor's own type");
                let h = tensors::create(rt, d, sizes, true);
                let e = rt.entry(h);
                e.label = format!("shape input {}", e.label);
                Arg {
                    meta: &*e.meta,
                    ..*a
                }
            })
            .collect()
    });
    // SAFETY: the invoker and function were registered together; the arguments match the
    // parameters (checked by the caller).
    let out = unsafe { (shape.invoker)(shape.function, shape_args.as_ptr()) };
    let mut r = ShapeReport::default();
    if out.is_null() {
        r.refused = Some("the shape function returned no tensor".into());
        end(&r, EXIT_USAGE)
    }
    // SAFETY: the invoker returns a live tensor.
    let m = unsafe { *out };
    r.result = Some((m.dtype, m.sizes[..m.ndim as usize].to_vec()));
    r.reports = state::with(|rt| rt.reports.clone());
    end(&r, 0)
}

/// Runs the shape function of op `o.op`: the output's element type code and sizes, or the
/// exit status after its failure was reported.
pub fn run(o: &Options, shape: &Function, args: &[Arg]) -> Result<(i32, Vec<i64>), i32> {
    let ended = child::wait(child::spawn(|| shape_main(shape, args)));
    print!("{}", ended.printed);
    let r = serde_json::from_slice::<ShapeReport>(&ended.report).unwrap_or_else(|_| ShapeReport {
        reports: vec![ended.crash(&o.op, "shape function", None)],
        ..ShapeReport::default()
    });
    if let Some(m) = &r.refused {
        eprintln!("error: {m}");
        return Err(EXIT_USAGE);
    }
    let failed = print_reports(&r.reports);
    match r.result {
        Some(result) if !failed => Ok(result),
        _ => {
            if let Some(f) = o.stats {
                crate::stats::print(f, o, &[], &r.reports);
            }
            let crashed = r.reports.iter().any(|r| r.kind == Kind::Crashed);
            Err(if crashed { EXIT_CRASH } else { EXIT_MISUSE })
        }
    }
}
