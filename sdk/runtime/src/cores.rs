//! The kernel on each core: a forked process per core over the model's shared HBM, with
//! its own globals, translation context, TCM pool and share of HBM. A core writes its
//! report (what it counted, its TCM copies, its misuses, the tensor it returned) to a
//! memory file the runner reads after it exits, and its stdout to another; nothing a core
//! does can block on the runner, and the runner reads the cores in order, so what it
//! reports does not depend on how the cores were scheduled.

use crate::cabi::Arg;
use crate::checks::{across_cores, take_result};
use crate::child::{self, Child};
use crate::misuse::{Kind, Report};
use crate::options::Options;
use crate::registry::Function;
use crate::report::{cross_core, print_reports, CoreReport, Returned};
use crate::state::{self, Phase, Runtime};
use crate::status::{EXIT_CRASH, EXIT_MISUSE};
use crate::tensors;

/// Ends a core: its report into the memory file, stdout flushed, `_exit(code)`.
fn finish(rt: &Runtime, returned: Option<Returned>, code: i32) -> ! {
    let c = rt
        .machine
        .as_ref()
        .map(|m| m.counters())
        .unwrap_or_default();
    let report = CoreReport {
        core: rt.core,
        translations: c.translates,
        hits: c.hits,
        refills: c.refills,
        counts: rt.counts,
        pool_high_water: rt.pool.high_water() as u64,
        dst_called: rt.dst_called,
        returned,
        accesses: rt.accesses.clone(),
        reports: rt.reports.clone(),
        printed: String::new(),
    };
    child::exit_with(
        &serde_json::to_vec(&report).expect("a report serializes"),
        code,
    )
}

fn on_core_error(rt: &Runtime) -> ! {
    finish(rt, None, rt.exit_status())
}

/// A core's process: runs the kernel and never returns.
fn core_main(core: u32, cores: u32, kernel: &Function, call: &[Arg]) -> ! {
    state::with(|rt| {
        rt.core = core;
        rt.cores = cores;
        rt.phase = Phase::Kernel;
        rt.on_error = on_core_error;
        tensors::use_core_share(rt, core);
        if let Some(m) = &rt.machine {
            m.reset_counters();
        }
    });
    neuron_translate::abi::_init_translate_ctx();
    // SAFETY: registered together; arguments checked against the parameters.
    let out = unsafe { (kernel.invoker)(kernel.function, call.as_ptr()) };
    state::with(|rt| {
        let returned = (!out.is_null()).then(|| {
            // SAFETY: the invoker returns a live tensor.
            let m = unsafe { *out };
            Returned {
                dtype: m.dtype,
                sizes: m.sizes[..m.ndim as usize].to_vec(),
                hbm_addr: m.hbm_addr,
                bytes: rt.entry(m.handle).bytes,
            }
        });
        finish(rt, returned, 0)
    })
}

/// Forks the cores and waits for them in order: the reports of the cores that wrote one,
/// and a crash report for each that died before it could.
fn run_cores(o: &Options, kernel: &Function, call: &[Arg]) -> (Vec<CoreReport>, Vec<Report>) {
    let children: Vec<(u32, Child)> = (0..o.cores)
        .map(|core| {
            let c = child::spawn(|| core_main(core, o.cores, kernel, call));
            (core, c)
        })
        .collect();
    let mut reports = Vec::new();
    let mut crashes = Vec::new();
    for (core, c) in children {
        let ended = child::wait(c);
        match serde_json::from_slice::<CoreReport>(&ended.report) {
            Ok(mut r) => {
                r.printed = ended.printed;
                reports.push(r);
            }
            Err(_) => {
                crashes.push(ended.crash(&o.op, "kernel", Some(core)));
                if core == 0 {
                    print!("{}", ended.printed);
                }
            }
        }
    }
    (reports, crashes)
}

/// Runs the kernel on the cores, reports and prints the stats: the exit status (the output
/// is in `output` when it is 0).
pub fn run(o: &Options, kernel: &Function, call: &[Arg], output: u32) -> i32 {
    let (mut reports, crashes) = run_cores(o, kernel, call);
    if !crashes.is_empty() {
        print_output(&reports);
        let all: Vec<Report> = reports
            .iter()
            .flat_map(|r| r.reports.iter().cloned())
            .chain(crashes)
            .collect();
        print_reports(&all);
        if let Some(f) = o.stats {
            crate::stats::print(f, o, &reports, &all);
        }
        return EXIT_CRASH;
    }
    let (addr, numel) = state::with(|rt| {
        let e = rt.entry(output);
        (e.meta.hbm_addr, e.meta.numel)
    });
    let mut found = across_cores(o, &reports, (addr, numel));
    state::with(|rt| {
        for r in &reports {
            take_result(rt, o, r, output, &mut found);
        }
    });
    for r in &mut reports {
        if r.core != 0 && !r.printed.is_empty() {
            let d = format!(
                "core {} printed {} bytes, which the device drops",
                r.core,
                r.printed.len()
            );
            r.reports.push(Report {
                core: Some(r.core),
                index: None,
                tensor: None,
                ..cross_core(&o.op, Kind::PrintfOffCore0, "", String::new(), d)
            });
        }
    }
    print_output(&reports);
    let all: Vec<Report> = reports
        .iter()
        .flat_map(|r| r.reports.iter().cloned())
        .chain(found)
        .collect();
    let failed = print_reports(&all);
    if let Some(f) = o.stats {
        crate::stats::print(f, o, &reports, &all);
    }
    if all.iter().any(|r| r.kind == Kind::Crashed) {
        return EXIT_CRASH;
    }
    if failed {
        return EXIT_MISUSE;
    }
    0
}

fn print_output(reports: &[CoreReport]) {
    for r in reports {
        if r.core == 0 {
            print!("{}", r.printed);
        } else {
            for line in r.printed.lines() {
                eprintln!("[core {} printed, dropped on the device] {line}", r.core);
            }
        }
    }
}
