//! The kernel on each core: a job on the core's worker ([`crate::run::worker`]), a process kept
//! over the model's shared HBM, with its own globals, translation context (made anew for
//! each job), TCM pool and share of HBM. A core writes its report (what it counted, its TCM
//! copies, its misuses, the tensor it returned) to a memory file the runner reads when it
//! answers, and its stdout to another; the runner reads the cores in order, so what it
//! reports does not depend on how the cores were scheduled.

use crate::base::cabi::Arg;
use crate::base::codes::ExitStatus;
use crate::base::misuse::{At, Kind, Report};
use crate::percore::registry;
use crate::percore::state::{self, Phase, Runtime};
use crate::percore::tensors;
use crate::run::checks::{across_cores, take_result};
use crate::run::child;
use crate::run::group::grouped;
use crate::run::options::Options;
use crate::run::report::{cross_core, CoreReport, Returned};
use crate::run::worker::{self, Assignment, WorkerArg, Workers};

/// What a core reports of the job it ran.
fn core_report(rt: &Runtime, returned: Option<Returned>) -> CoreReport {
    let c = rt
        .machine
        .as_ref()
        .map(|m| m.counters())
        .unwrap_or_default();
    CoreReport {
        core: rt.job.core,
        translations: c.translates,
        hits: c.hits,
        refills: c.refills,
        counts: rt.job.counts,
        pool_high_water: rt.job.pool.high_water() as u64,
        dst_called: rt.job.dst_called,
        dst_at: rt.job.dst_at.clone(),
        fp_invalid: false,
        returned,
        accesses: rt.job.accesses.clone(),
        reports: rt.job.reports.clone(),
        device: None,
        profile: None,
        printed: String::new(),
    }
}

fn to_json(r: &CoreReport) -> Vec<u8> {
    serde_json::to_vec(r).expect("a report serializes")
}

fn on_core_error(rt: &Runtime) -> ! {
    child::exit_with(&to_json(&core_report(rt, None)), rt.exit_status().code())
}

/// A kernel job, on its core's worker: the call's tensors adopted, the kernel run, the
/// report written, the tensors let go.
fn kernel_job(job: &Assignment) -> Vec<u8> {
    let (_, kernel) = registry::lookup(&job.op).expect("the runner checked the op");
    let (call, held) = state::with(|rt| begin_kernel_job(rt, job));
    let mut ran = None;
    let out = match &job.device {
        Some(d) => {
            let name = registry::kernel_name(&job.op).unwrap_or_default();
            let r = crate::run::device::run(d, &name, &call);
            let out = state::with(|rt| device_ended(rt, &r));
            ran = Some((r, job.output.as_ref().map_or(0, WorkerArg::numel)));
            out
        }
        None => on_host(&kernel, &call),
    };
    let fp_invalid = job.device.is_none() && crate::base::fpflags::invalid_raised();
    state::with(|rt| {
        // A block's site: an address in this process, or in the device program.
        let place = |pc: u64| match &job.device {
            Some(d) => crate::run::device::symbols::place_in(&d.program, pc),
            None => crate::run::place::place(pc),
        };
        crate::percore::access::report_leaks(rt, &place);
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
        let mut report = core_report(rt, returned);
        report.fp_invalid = fp_invalid;
        if report.dst_called {
            report
                .reports
                .extend(unwritten_output(rt, &job.op, job.core));
        }
        if let Some((r, numel)) = ran {
            // On one core the output is the core's; on several, what its copies wrote.
            let elements = if job.cores == 1 {
                numel
            } else {
                written_by_core(rt, numel)
            };
            report.device = Some(crate::run::report::DeviceReport {
                counts: r.counts,
                elements,
            });
            (report.translations, report.hits, report.refills) =
                (r.translations, r.hits, r.refills);
            report.profile = r.profile;
        }
        let answer = to_json(&report);
        child::flush_stdio();
        if !out.is_null() {
            // SAFETY: as above; the invoker's reference.
            tensors::release(rt, unsafe { (*out).handle });
        }
        for h in held {
            tensors::release(rt, h);
        }
        rt.job.dst = None;
        answer
    })
}

/// A kernel job's start on this core: its runtime state, its share of HBM, its tensors
/// adopted: the call's arguments and the handles to release after it.
fn begin_kernel_job(rt: &mut Runtime, job: &Assignment) -> (Vec<crate::base::cabi::Arg>, Vec<u32>) {
    rt.begin_job(&job.op, job.core, job.cores, Phase::Kernel, on_core_error);
    rt.job.sanitize = job.sanitize;
    if job.device.is_some() {
        tensors::use_device_core_share(rt, job.core);
        rt.share = None;
    } else if rt.share != Some(job.core) {
        tensors::use_core_share(rt, job.core);
        rt.share = Some(job.core);
    }
    let (call, mut held) = worker::adopt_args(rt, &job.args, false);
    if let Some(out) = &job.output {
        held.extend(adopt_output(rt, job, out));
    }
    if let Some(m) = &rt.machine {
        m.reset_counters();
    }
    (call, held)
}

/// The output's elements (of `numel`) this core's TCM and stream copies wrote.
fn written_by_core(rt: &mut Runtime, numel: u64) -> u64 {
    let Some(dst) = rt.job.dst else {
        return 0;
    };
    let addr = rt.entry(dst).meta.hbm_addr;
    let mut ranges: Vec<(u64, u64)> = rt
        .job
        .accesses
        .iter()
        .filter(|a| a.write && a.tensor == addr)
        .map(|a| (a.first, a.first.saturating_add(a.count).min(numel)))
        .collect();
    ranges.sort_unstable();
    crate::run::checks::covered(&ranges, numel)
}

/// The kernel called here, on the host, its stack watched ([`crate::base::stack`]): the tensor
/// it returned.
fn on_host(
    kernel: &registry::Function,
    call: &[crate::base::cabi::Arg],
) -> *const crate::base::cabi::Meta {
    neuron_translate::abi::_init_translate_ctx();
    let limit = registry::with(|r| r.stack_bytes);
    let top = 0u8;
    let top = std::hint::black_box(&top) as *const u8 as usize;
    state::with(|rt| rt.stack = crate::base::stack::Watch::start(limit, top));
    crate::base::fpflags::clear();
    // SAFETY: registered together; arguments checked against the parameters.
    let out = unsafe { (kernel.invoker)(kernel.function, call.as_ptr()) };
    state::with(|rt| rt.stack = crate::base::stack::Watch::default());
    out
}

/// After the kernel's program ran on the emulated Q7: the tensor it returned (as a kernel
/// returns it: a meta with a reference), or a crash report if it ended without returning.
fn device_ended(
    rt: &mut Runtime,
    ran: &crate::run::device::answer::ProgramRun,
) -> *const crate::base::cabi::Meta {
    if let Some(s) = ran.stray_store {
        rt.job.device_site = Some(s.pc);
        crate::percore::access::device_store(rt, s.addr, s.offset, s.bytes);
    }
    if let Some(why) = &ran.ended {
        rt.job.reports.push(Report {
            crash: Some(crate::base::misuse::Crash {
                phase: "kernel".into(),
                signal: None,
                exit_code: None,
                exception: None,
            }),
            ..Report::of_run(&rt.job.op, Kind::Crashed, Some(rt.job.core), why.clone())
        });
        (rt.job.on_error)(rt)
    }
    if rt.job.tcm_mallocs > 0 && !ran.watched {
        let d = format!(
            "{} tcm_malloc block(s) on the emulated Q7 without the counting plugin's store watch \
             (NT_QEMU_COUNT_PLUGIN unset): a store past a block's end is not checked; the host \
             run (without --device) checks it",
            rt.job.tcm_mallocs
        );
        rt.misuse(Kind::DeviceTcmUnchecked, None, None, d);
    }
    match ran.returned {
        Some(h) => &*rt.entry(h).meta,
        None => core::ptr::null(),
    }
}

/// The output as a job argument.
fn output_arg(output: u32) -> WorkerArg {
    state::with(|rt| {
        let e = rt.entry(output);
        let sizes = e.meta.sizes[..e.meta.ndim as usize].to_vec();
        WorkerArg::Tensor(e.dtype, sizes, e.meta.hbm_addr, e.label.clone())
    })
}

/// Gives each core its job and waits for them in order: the reports of the cores that
/// wrote one, and a crash report for each that died before it could.
fn run_cores(
    workers: &mut Workers,
    o: &Options,
    call: &[Arg],
    output: u32,
    lazy: bool,
) -> (Vec<CoreReport>, Vec<Report>) {
    let job = Assignment {
        op: o.op.clone(),
        core: 0,
        cores: o.cores,
        args: worker::job_args(call),
        output: Some(output_arg(output)),
        poison_at_dst: lazy,
        sanitize: o.sanitize,
        device: o.device.clone(),
    };
    for core in 0..o.cores {
        let j = Assignment {
            core,
            ..job.clone()
        };
        worker::start(workers, core as usize, &j, kernel_job);
    }
    let mut reports = Vec::new();
    let mut crashes = Vec::new();
    let deadline = o.deadline();
    for core in 0..o.cores {
        let ended = worker::finish(workers, core as usize, deadline);
        match serde_json::from_slice::<CoreReport>(&ended.report) {
            Ok(mut r) => {
                r.printed = ended.printed;
                let device = o.device.as_ref();
                r.reports
                    .iter_mut()
                    .for_each(|r| place_core_report(r, device));
                reports.push(r);
            }
            Err(_) => {
                let limit = o.timeout.unwrap_or_default();
                crashes.push(match (ended.timed_out, &o.device) {
                    (true, Some(_)) => ended.device_timeout(&o.op, core, limit),
                    (true, None) => ended.timeout(&o.op, "kernel", Some(core), limit),
                    (false, _) => ended.crash(&o.op, "kernel", Some(core)),
                });
                if core == 0 {
                    o.output.kernel_text(ended.printed.as_bytes());
                }
            }
        }
    }
    (reports, crashes)
}

/// Runs the kernel on the cores, reports and prints the stats: the exit status (the output
/// is in `output` when it is 0), and whether a core called `get_dst_tensor()`. With
/// `lazy`, the output is poisoned only when a kernel asks for it.
pub fn run(workers: &mut Workers, o: &Options, call: &[Arg], output: u32, lazy: bool) -> Concluded {
    let (reports, crashes) = run_cores(workers, o, call, output, lazy);
    let dst_called = reports.iter().any(|r| r.dst_called);
    let (status, stats) = conclude(o, reports, crashes, output);
    Concluded {
        status,
        dst_called,
        stats,
    }
}

/// What the cores' run came to.
pub struct Concluded {
    /// The exit status.
    pub status: ExitStatus,
    /// Whether a kernel called `get_dst_tensor()`.
    pub dst_called: bool,
    /// The stats document ([`crate::run::options::StatsFormat::Return`]).
    pub stats: Option<serde_json::Value>,
}

/// The op's output in a kernel's job: `get_dst_tensor()`'s tensor, tracked on one core
/// (which of its elements the kernel reads before it writes them, and which it never
/// writes, is known there; several cores write it side by side). The handles to release.
fn adopt_output(
    rt: &mut crate::percore::state::Runtime,
    job: &Assignment,
    out: &WorkerArg,
) -> Vec<u32> {
    let (_, h) = worker::adopt_args(rt, std::slice::from_ref(out), false);
    rt.job.dst = h.first().copied();
    rt.job.dst_poison = job.poison_at_dst;
    if let (1, Some(d)) = (job.cores, rt.job.dst) {
        tensors::track(rt, d);
    }
    h
}

/// On one core, the output elements the kernel never wrote, as `output-unwritten` (the
/// first stretch): known while the runtime still tracks the output's written elements
/// (every TCM and stream copy and operation, and each standard accessor's element under
/// `--sanitize`; without it, a standard accessor ends the tracking and nothing is said).
fn unwritten_output(
    rt: &mut crate::percore::state::Runtime,
    op: &str,
    core: u32,
) -> Option<crate::base::misuse::Report> {
    let d = rt.job.dst?;
    let e = rt.entry(d);
    if e.meta.track == 0 {
        return None;
    }
    let n = e.meta.numel;
    let &(s, end) = crate::run::checks::gaps(&e.written, n).first()?;
    let mut detail = format!("the kernel never wrote output elements {s}..{end} of {n}");
    if rt.job.cores == 1 && rt.job.asked_cpu_count {
        detail += &format!(
            "; it asked get_cpu_count(), which says {} on one core, as the device's does: a \
             kernel that divides its work by it covers a part of the output on one core \
             (multicore=True runs it on {0})",
            crate::base::limits::DEVICE_CPU_COUNT
        );
    }
    detail += "; the output is what get_dst_tensor() gave";
    Some(crate::base::misuse::Report {
        core: Some(core),
        at: rt.job.dst_at.clone(),
        ..cross_core(op, Kind::Unwritten, "output", format!("{s}..{end}"), detail)
    })
}

/// A warning for the C functions the kernels call that the device runtime lacks (ntx
/// compares the compute objects' undefined symbols with the device runtime's).
fn device_lacks(o: &Options) -> Option<Report> {
    let lacks = crate::percore::registry::with(|r| r.device_lacks.clone());
    (!lacks.is_empty()).then(|| {
        let d = format!(
            "the kernels call {}, which the device runtime does not have: it runs here, not on the device",
            lacks.join(", ")
        );
        Report::of_run(&o.op, Kind::DeviceLacks, None, d)
    })
}

/// A warning on every run on cores the device does not build an op for (2 to 7).
fn device_cores(o: &Options) -> Option<Report> {
    (!crate::base::limits::device_builds(o.cores)).then(|| {
        let d = format!(
            "{} cores run here; the device builds an op for 1 core (multicore=False) or {} \
             (multicore=True), where get_cpu_count() says {1} on either",
            o.cores,
            crate::base::limits::DEVICE_CPU_COUNT
        );
        Report::of_run(&o.op, Kind::DeviceCores, None, d)
    })
}

/// A warning on every run of a program built with `--no-device-parity`.
fn parity_off(o: &Options) -> Option<Report> {
    crate::percore::registry::with(|r| r.parity_off).then(|| {
        let d =
            "built with --no-device-parity: the device's own compile (-std=c++14 -Wall -Werror) \
                 was not run, and may refuse this kernel"
                .to_string();
        Report::of_run(&o.op, Kind::DeviceParityOff, None, d)
    })
}

/// What the cores printed against what the device shows: core 0's text through its output
/// ring (`printf-lost`), the other cores' not at all (`printf-off-core-0`).
fn printed_checks(o: &Options, reports: &mut [CoreReport]) {
    for r in reports {
        let d = if r.core == 0 {
            let ring = std::env::var(crate::base::stdout_ring::QUEUE_ENV).ok();
            crate::base::stdout_ring::loss(r.printed.len(), ring.as_deref())
                .map(|d| (Kind::PrintfLost, d))
        } else {
            (!r.printed.is_empty()).then(|| {
                let d = format!(
                    "core {} printed {} bytes, which the device drops",
                    r.core,
                    r.printed.len()
                );
                (Kind::PrintfOffCore0, d)
            })
        };
        if let Some((kind, d)) = d {
            r.reports.push(Report::of_run(&o.op, kind, Some(r.core), d));
        }
    }
}

/// The places the checks across cores use, taken out of the cores' reports: addresses in
/// a core's process, not for the stats document (the same from the runner and the server).
fn unplaced(reports: &mut [CoreReport]) {
    for r in reports {
        r.dst_at = None;
        r.accesses.iter_mut().for_each(|a| a.at = None);
    }
}

/// The reports of a run, checked across cores, printed: the exit status and the stats
/// document asked back.
fn conclude(
    o: &Options,
    mut reports: Vec<CoreReport>,
    crashes: Vec<Report>,
    output: u32,
) -> (ExitStatus, Option<serde_json::Value>) {
    if !crashes.is_empty() {
        unplaced(&mut reports);
        print_output(o, &reports);
        let all = all_reports(&reports, crashes);
        o.output.print_reports(&all);
        let stats = o
            .stats
            .and_then(|f| crate::run::stats::print(f, o, &reports, &all));
        return (crate::base::status::of_errors(&all), stats);
    }
    let (addr, numel) = state::with(|rt| {
        let e = rt.entry(output);
        (e.meta.hbm_addr, e.meta.numel)
    });
    let mut found = across_cores(o, &reports, (addr, numel));
    let device = o.device.as_ref();
    found.iter_mut().for_each(|r| place_core_report(r, device));
    unplaced(&mut reports);
    if o.device.is_none() {
        found.extend(device_lacks(o));
    }
    found.extend(parity_off(o));
    found.extend(device_cores(o));
    state::with(|rt| {
        for r in &reports {
            take_result(rt, o, r, output, &mut found);
        }
        if reports.iter().any(|r| r.fp_invalid) {
            found.extend(crate::run::checks::x86_default_nan(rt, &o.op, output));
        }
    });
    printed_checks(o, &mut reports);
    print_output(o, &reports);
    let all = all_reports(&reports, found);
    let failed = o.output.print_reports(&all);
    let stats = o
        .stats
        .and_then(|f| crate::run::stats::print(f, o, &reports, &all));
    let status = if failed {
        crate::base::status::of_errors(&all)
    } else {
        crate::run::profile::write(o, &reports)
    };
    (status, stats)
}

/// The cores' reports and `more`, a finding several cores made alike given once.
fn all_reports(reports: &[CoreReport], more: Vec<Report>) -> Vec<Report> {
    grouped(
        reports
            .iter()
            .flat_map(|r| r.reports.iter().cloned())
            .chain(more)
            .collect(),
    )
}

fn print_output(o: &Options, reports: &[CoreReport]) {
    for r in reports {
        if r.core == 0 {
            o.output.kernel_text(r.printed.as_bytes());
        } else {
            for line in r.printed.lines() {
                eprintln!("[core {} printed, dropped on the device] {line}", r.core);
            }
        }
    }
}

/// A core's report with its place put into its words: a place in the emulated Q7's
/// program by its DWARF, else by the host's stack ([`crate::run::place::place_report`]).
fn place_core_report(r: &mut Report, device: Option<&crate::run::device::Program>) {
    if let (Some(At::Device(pc)), Some(d)) = (&r.at, device) {
        r.detail += &format!(
            ", at {}",
            crate::run::device::symbols::place_in(&d.program, *pc)
        );
        r.at = None;
        return;
    }
    crate::run::place::place_report(r)
}
