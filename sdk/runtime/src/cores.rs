//! The kernel on each core: a forked process per core over the model's shared HBM, with
//! its own globals, translation context, TCM pool and share of HBM. A core writes its
//! report (what it counted, its TCM copies, its misuses, the tensor it returned) to a
//! memory file the runner reads after it exits, and its stdout to another; nothing a core
//! does can block on the runner, and the runner reads the cores in order, so what it
//! reports does not depend on how the cores were scheduled.

use std::ffi::CString;
use std::sync::atomic::{AtomicI32, Ordering};

use serde::{Deserialize, Serialize};

use crate::dtype::DType;
use crate::ffi::Arg;
use crate::misuse::{Kind, Report};
use crate::registry::Function;
use crate::run::{self, Options, EXIT_CRASH, EXIT_MISUSE};
use crate::state::{self, Access, Counts, Phase, Runtime};
use crate::tensors;

/// The tensor a kernel returned.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Returned {
    /// Its element type's code.
    pub dtype: i32,
    /// Its sizes.
    pub sizes: Vec<i64>,
    /// Its HBM address.
    pub hbm_addr: u64,
    /// Its bytes.
    pub bytes: u64,
}

/// What a core reports to the runner.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CoreReport {
    /// The core.
    pub core: u32,
    /// Calls of neuron_translate (and _span).
    pub translations: u64,
    /// Hits by window slot.
    pub hits: [u64; 5],
    /// Refills by window slot.
    pub refills: [u64; 5],
    /// What the runtime counted.
    pub counts: Counts,
    /// The TCM pool's high-water mark in bytes.
    pub pool_high_water: u64,
    /// Whether it called get_dst_tensor().
    pub dst_called: bool,
    /// What the kernel returned (none if it stopped on an error).
    pub returned: Option<Returned>,
    /// Its TCM copies.
    pub accesses: Vec<Access>,
    /// Its misuses.
    pub reports: Vec<Report>,
    /// What it printed.
    #[serde(skip)]
    pub printed: String,
}

static REPORT_FD: AtomicI32 = AtomicI32::new(-1);

fn memfd(name: &str) -> i32 {
    let n = CString::new(name).expect("no NUL");
    // SAFETY: a valid name.
    let fd = unsafe { libc::memfd_create(n.as_ptr(), 0) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    fd
}

fn read_fd(fd: i32) -> Vec<u8> {
    use std::io::{Read, Seek};
    // SAFETY: the runner owns fd; the File takes it over and closes it.
    let mut f = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let mut v = Vec::new();
    let ok = f
        .seek(std::io::SeekFrom::Start(0))
        .and_then(|_| f.read_to_end(&mut v));
    ok.expect("reading a core's memory file");
    v
}

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
    let text = serde_json::to_vec(&report).expect("a report serializes");
    let fd = REPORT_FD.load(Ordering::Relaxed);
    // SAFETY: fd is the core's report file; text is valid for its length.
    unsafe {
        libc::write(fd, text.as_ptr().cast(), text.len());
        libc::fflush(core::ptr::null_mut());
        libc::_exit(code)
    }
}

fn on_core_error(rt: &Runtime) -> ! {
    finish(rt, None, EXIT_MISUSE)
}

/// A core's process: runs the kernel and never returns.
fn core_main(core: u32, cores: u32, kernel: &Function, call: &[Arg], out_fd: i32) -> ! {
    // SAFETY: the core's stdout becomes its memory file.
    unsafe { libc::dup2(out_fd, 1) };
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

/// Forks the cores, waits for them in order and returns their reports, or the exit status
/// of a crash.
fn run_cores(o: &Options, kernel: &Function, call: &[Arg]) -> Result<Vec<CoreReport>, i32> {
    let mut children = Vec::new();
    for core in 0..o.cores {
        let (rfd, ofd) = (memfd("core-report"), memfd("core-stdout"));
        // Nothing buffered in stdio is written twice.
        // SAFETY: flushing all streams.
        unsafe { libc::fflush(core::ptr::null_mut()) };
        // SAFETY: the runner is single-threaded; the child only runs core_main.
        match unsafe { libc::fork() } {
            0 => {
                REPORT_FD.store(rfd, Ordering::Relaxed);
                core_main(core, o.cores, kernel, call, ofd)
            }
            -1 => panic!("fork: {}", std::io::Error::last_os_error()),
            pid => children.push((core, pid, rfd, ofd)),
        }
    }
    let mut reports = Vec::new();
    let mut crashed = false;
    for (core, pid, rfd, ofd) in children {
        let mut status = 0;
        // SAFETY: our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        let text = read_fd(rfd);
        let printed = String::from_utf8_lossy(&read_fd(ofd)).into_owned();
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            // SAFETY: strsignal returns a static string.
            let name = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) }.to_string_lossy();
            eprintln!("error[kernel-crashed] op {}, core {core}: the kernel died of signal {sig} ({name})", o.op);
            print!("{printed}");
            crashed = true;
            continue;
        }
        let mut r: CoreReport = serde_json::from_slice(&text).map_err(|e| {
            eprintln!("error: core {core} exited ({status:#x}) without its report: {e}");
            EXIT_CRASH
        })?;
        r.printed = printed;
        reports.push(r);
    }
    if crashed {
        return Err(EXIT_CRASH);
    }
    Ok(reports)
}

/// Sorted, merged ranges of one tensor's elements that `core` wrote (or read).
fn ranges(r: &CoreReport, tensor: u64, write: bool) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = r
        .accesses
        .iter()
        .filter(|a| a.tensor == tensor && a.write == write && a.count > 0)
        .map(|a| (a.first, a.first + a.count))
        .collect();
    v.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (s, e) in v {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> Option<(u64, u64)> {
    a.iter()
        .flat_map(|x| b.iter().map(move |y| (x.0.max(y.0), x.1.min(y.1))))
        .find(|(s, e)| s < e)
}

/// The checks across cores: shared writes, reads of another core's writes, every output
/// element written by a core that called get_dst_tensor().
fn across_cores(o: &Options, reports: &[CoreReport], output: (u64, u64)) -> Vec<Report> {
    let mut found = Vec::new();
    let mut tensors: Vec<u64> = reports
        .iter()
        .flat_map(|r| r.accesses.iter().map(|a| a.tensor))
        .collect();
    tensors.sort_unstable();
    tensors.dedup();
    let name = |t: u64| {
        if t == output.0 {
            "output".to_string()
        } else {
            format!("tensor at HBM {t:#x}")
        }
    };
    for &t in &tensors {
        for a in reports {
            for b in reports.iter().filter(|b| b.core > a.core) {
                if let Some((s, e)) = overlap(&ranges(a, t, true), &ranges(b, t, true)) {
                    let d = format!(
                        "cores {} and {} both wrote elements {s}..{e}",
                        a.core, b.core
                    );
                    found.push(run::cross_core(
                        &o.op,
                        Kind::SharedWrite,
                        &name(t),
                        format!("{s}..{e}"),
                        d,
                    ));
                }
            }
            for b in reports.iter().filter(|b| b.core != a.core) {
                if let Some((s, e)) = overlap(&ranges(a, t, false), &ranges(b, t, true)) {
                    let d = format!(
                        "core {} read elements {s}..{e}, which core {} wrote",
                        a.core, b.core
                    );
                    found.push(run::cross_core(
                        &o.op,
                        Kind::CrossRead,
                        &name(t),
                        format!("{s}..{e}"),
                        d,
                    ));
                }
            }
        }
    }
    if o.cores > 1 {
        let mut written: Vec<(u64, u64)> = reports
            .iter()
            .flat_map(|r| ranges(r, output.0, true))
            .collect();
        written.sort_unstable();
        let mut next = 0;
        for (s, e) in written.into_iter().chain([(output.1, output.1)]) {
            if s > next {
                let d = format!("no core wrote output elements {next}..{s} of {}", output.1);
                found.push(run::cross_core(
                    &o.op,
                    Kind::Unwritten,
                    "output",
                    format!("{next}..{s}"),
                    d,
                ));
            }
            next = next.max(e);
        }
    }
    found
}

/// The result a core leaves: `get_dst_tensor()` (nothing to copy) or the tensor it
/// returned, checked against the shape function's. Reports what is wrong.
fn take_result(
    rt: &mut Runtime,
    o: &Options,
    r: &CoreReport,
    output: u32,
    found: &mut Vec<Report>,
) {
    let (dtype, sizes, addr) = {
        let e = rt.entry(output);
        (
            e.meta.dtype,
            e.meta.sizes[..e.meta.ndim as usize].to_vec(),
            e.meta.hbm_addr,
        )
    };
    let mut report = |kind: Kind, detail: String| {
        found.push(Report {
            core: Some(r.core),
            ..run::cross_core(&o.op, kind, "output", String::new(), detail)
        })
    };
    if r.dst_called {
        return;
    }
    if o.cores > 1 {
        report(
            Kind::NoDstTensor,
            "the kernel returned without calling get_dst_tensor()".into(),
        );
        return;
    }
    let Some(ret) = &r.returned else { return };
    if ret.dtype != dtype || ret.sizes != sizes {
        let name = |c: i32| DType::from_code(c).map_or("?", DType::name);
        let d = format!(
            "returned {:?} {} where the shape function gave {sizes:?} {}",
            ret.sizes,
            name(ret.dtype),
            name(dtype)
        );
        report(Kind::ReturnMismatch, d);
        return;
    }
    if ret.hbm_addr != addr {
        let m = rt.machine.as_ref().expect("the model runs");
        let mut buf = vec![0u8; ret.bytes as usize];
        m.read(ret.hbm_addr, &mut buf)
            .expect("the returned tensor is in HBM");
        m.write(addr, &buf).expect("the output is in HBM");
    }
}

/// Runs the kernel on the cores, reports and prints the stats: the exit status (the output
/// is in `output` when it is 0).
pub fn run(o: &Options, kernel: &Function, call: &[Arg], output: u32) -> i32 {
    let mut reports = match run_cores(o, kernel, call) {
        Ok(r) => r,
        Err(code) => return code,
    };
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
                ..run::cross_core(&o.op, Kind::PrintfOffCore0, "", String::new(), d)
            });
        }
    }
    print_output(&reports);
    let all: Vec<Report> = reports
        .iter()
        .flat_map(|r| r.reports.iter().cloned())
        .chain(found)
        .collect();
    let failed = run::print_reports(&all);
    if let Some(f) = o.stats {
        crate::stats::print(f, o, &reports, &all);
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
