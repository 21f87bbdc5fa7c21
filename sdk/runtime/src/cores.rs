//! The kernel on each core: a forked process per core over the model's shared HBM, with
//! its own globals, translation context, TCM pool and share of HBM. A core writes its
//! report (what it counted, its TCM copies, its misuses, the tensor it returned) to a
//! memory file the runner reads after it exits, and its stdout to another; nothing a core
//! does can block on the runner, and the runner reads the cores in order, so what it
//! reports does not depend on how the cores were scheduled.

use std::ffi::CString;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::cabi::Arg;
use crate::checks::{across_cores, take_result};
use crate::misuse::{Kind, Report};
use crate::options::Options;
use crate::registry::Function;
use crate::report::{cross_core, print_reports, CoreReport, Returned};
use crate::state::{self, Phase, Runtime};
use crate::status::{EXIT_CRASH, EXIT_MISUSE};
use crate::tensors;

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
