//! `ntx op run` held to what docs/customop-host.md promises when things go wrong, from an
//! installed tree (sdk/tests/customops/failures.cpp and its shape files):
//!
//! * killed with SIGINT, SIGTERM, SIGHUP or SIGKILL during an 8-core run (and its whole
//!   process group killed), nothing it started is left running and its build folder is
//!   gone;
//! * a shape function or kernel that throws, crashes or calls `exit` gives exit 3, a
//!   `kernel-crashed` report naming the op, the phase, the core and the signal or exit
//!   status, and the `--stats=json` document; nothing is written;
//! * what can be checked before anything runs is refused with exit 1 and nothing run: an op
//!   registered twice, two libraries, an `--out` that cannot be written, `--cores` outside
//!   1 to 8 in any spelling, a number where a tensor goes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use nt_support::install::{f32_npy, make, within};
use nt_support::tools::{run_ok, scratch};

/// Installs into a fresh prefix under `dir`; writes the input `x.npy` (2 x 4 float32).
fn setup(name: &str) -> (PathBuf, PathBuf) {
    let dir = scratch(name);
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    let values: Vec<f32> = (-4..4).map(|v| v as f32).collect();
    let x = f32_npy("(2, 4)", &values);
    std::fs::write(dir.join("x.npy"), x).unwrap();
    (dir, prefix.join("bin/ntx"))
}

fn source(name: &str) -> PathBuf {
    nt_sdk_tests::kernels().join(name)
}

/// `ntx op run` of failures.cpp with shape file `shape`, in `dir`, with `args` after them.
/// A host-only test of the runner's failure handling (it throws and exits, which the device
/// runtime lacks): built with `--no-device-parity`.
fn ntx_op(ntx: &Path, dir: &Path, shape: &str, args: &[&str]) -> Command {
    let mut c = Command::new(ntx);
    c.current_dir(dir)
        .args(["op", "run", "--no-device-parity", "--compute"])
        .arg(source("failures.cpp"))
        .arg("--shape")
        .arg(source(shape))
        .args(args)
        .env_remove("PKG_CONFIG_PATH");
    c
}

/// The processes whose environment holds `marker` (every process a run started inherits
/// it): their pids.
fn marked(marker: &str) -> Vec<u32> {
    let needle = marker.as_bytes();
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(e.path().join("environ")) else {
            continue;
        };
        if env.split(|b| *b == 0).any(|v| v == needle) {
            found.push(pid);
        }
    }
    found
}

/// Starts an 8-core run of `spin` (which never returns) with its own temporary folder,
/// and waits until ntx, its watchdog, the runner and the eight cores all run.
fn spinning(ntx: &Path, dir: &Path, case: &str, own_group: bool) -> (Child, String, PathBuf) {
    let tmp = dir.join(format!("tmp-{case}"));
    std::fs::create_dir_all(&tmp).unwrap();
    let marker = format!("NT_SIGNAL_TEST={case}");
    let mut c = ntx_op(
        ntx,
        dir,
        "failures_shape.cpp",
        &["spin", "x.npy", "--cores", "8"],
    );
    c.env("TMPDIR", &tmp)
        .env("NT_SIGNAL_TEST", case)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if own_group {
        std::os::unix::process::CommandExt::process_group(&mut c, 0);
    }
    let child = c.spawn().unwrap();
    let all_up = within(Duration::from_secs(120), || marked(&marker).len() >= 11);
    assert!(
        all_up,
        "{case}: the 8-core run did not start: {:?}",
        marked(&marker)
    );
    (child, marker, tmp)
}

fn assert_nothing_left(case: &str, marker: &str, tmp: &Path) {
    let gone = within(Duration::from_secs(10), || {
        marked(marker).is_empty() && std::fs::read_dir(tmp).unwrap().next().is_none()
    });
    let left: Vec<_> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        gone,
        "{case}: left running {:?}, left on disk {left:?}",
        marked(marker)
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn killing_ntx_leaves_no_process_and_no_folder() {
    let (dir, ntx) = setup("sdk_signals");
    for (name, sig) in [
        ("SIGINT", libc::SIGINT),
        ("SIGTERM", libc::SIGTERM),
        ("SIGHUP", libc::SIGHUP),
        ("SIGKILL", libc::SIGKILL),
    ] {
        let (mut child, marker, tmp) = spinning(&ntx, &dir, name, false);
        // SAFETY: a process this test started.
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(sig),
            "{name}: ntx ended with {status}"
        );
        assert_nothing_left(name, &marker, &tmp);
    }
    // The whole process group at once, SIGKILL: no handler runs; the watchdog cleans up.
    let (mut child, marker, tmp) = spinning(&ntx, &dir, "group", true);
    // SAFETY: the process group this test started.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    child.wait().unwrap();
    assert_nothing_left("group SIGKILL", &marker, &tmp);
}

/// The op's program, built once by ntx with failures_shape.cpp into `dir/build`.
fn built(ntx: &Path, dir: &Path) -> PathBuf {
    let build = dir.join("build");
    let c = ntx_op(ntx, dir, "failures_shape.cpp", &["passes", "x.npy"])
        .arg("--build-dir")
        .arg(&build)
        .output()
        .unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    build.join("op")
}

fn text(o: &Output) -> (String, String) {
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (s(&o.stdout), s(&o.stderr))
}

/// A crash case: the op, its phase, and the signal, exit status or exception that ends it.
type Case = (
    &'static str,
    &'static str,
    Option<i64>,
    Option<i64>,
    Option<&'static str>,
);

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn every_crash_is_reported_in_the_documented_form() {
    let (dir, ntx) = setup("sdk_crashes");
    let program = built(&ntx, &dir);
    // (op, phase, signal, exit status, exception)
    let cases: [Case; 5] = [
        (
            "shape_throws",
            "shape function",
            None,
            None,
            Some("no shape for this input"),
        ),
        ("shape_crashes", "shape function", Some(11), None, None),
        ("shape_exits", "shape function", None, Some(0), None),
        ("kernel_exits", "kernel", None, Some(0), None),
        (
            "kernel_throws",
            "kernel",
            None,
            None,
            Some("the kernel gave up"),
        ),
    ];
    for (op, phase, signal, exit_code, exception) in cases {
        let out = Command::new(&program)
            .current_dir(&dir)
            .args([op, "x.npy", "--out", "y.npy", "--stats=json"])
            .output()
            .unwrap();
        let (stdout, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(3), "{op}: {stderr}");
        let core = if phase == "kernel" { ", core 0" } else { "" };
        let line = format!("error[kernel-crashed] op {op}, {phase}{core}: ");
        assert!(stderr.contains(&line), "{op}: {stderr}");
        let doc: serde_json::Value =
            serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{op}: {e}: {stdout}"));
        let crash = &doc["reports"][0]["crash"];
        assert_eq!(doc["reports"][0]["kind"], "kernel-crashed", "{op}");
        assert_eq!(crash["phase"], phase, "{op}");
        assert_eq!(crash["signal"].as_i64(), signal, "{op}");
        assert_eq!(crash["exit_code"].as_i64(), exit_code, "{op}");
        assert_eq!(crash["exception"].as_str(), exception, "{op}");
        assert!(!dir.join("y.npy").exists(), "{op} wrote its output");
    }
    // Through ntx, the same status and report.
    let out = ntx_op(&ntx, &dir, "failures_shape.cpp", &["kernel_exits", "x.npy"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out).1);
}

/// `ntx op run` with `args` (after failures.cpp and shape file `shape`) must be refused:
/// exit 1, `why` in its message, nothing written, and quickly (`spin` never returns, so a
/// run that started would not end).
fn refused(ntx: &Path, dir: &Path, shape: &str, args: &[&str], why: &str) {
    let mut c = ntx_op(ntx, dir, shape, args);
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ended = within(Duration::from_secs(120), || {
        child.try_wait().unwrap().is_some()
    });
    if !ended {
        child.kill().unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let (_, stderr) = text(&out);
    assert!(ended, "{args:?} ran instead of being refused");
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(stderr.contains(why), "{args:?}: {stderr}");
    assert!(!dir.join("y.npy").exists(), "{args:?} wrote an output");
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn what_can_be_checked_first_is_refused_before_anything_runs() {
    let (dir, ntx) = setup("sdk_refusals");
    let f = "failures_shape.cpp";
    refused(
        &ntx,
        &dir,
        "twice_shape.cpp",
        &["passes", "x.npy"],
        "op 'passes' is registered twice",
    );
    refused(
        &ntx,
        &dir,
        "two_libraries_shape.cpp",
        &["passes", "x.npy"],
        "first_library, second_library",
    );
    refused(
        &ntx,
        &dir,
        f,
        &["spin", "x.npy", "--out", "missing/y.npy"],
        "--out missing/y.npy: cannot write there",
    );
    std::fs::create_dir_all(dir.join("folder.npy")).unwrap();
    refused(
        &ntx,
        &dir,
        f,
        &["spin", "x.npy", "--out", "folder.npy"],
        "--out folder.npy: is a folder",
    );
    for n in ["0", "9", "-1", "abc"] {
        let why = format!("--cores {n}: give a number from 1 to 8");
        refused(&ntx, &dir, f, &["spin", "x.npy", "--cores", n], &why);
    }
    refused(
        &ntx,
        &dir,
        f,
        &["spin", "3.5"],
        "argument 0 is a tensor: '3.5' is no file",
    );
    let help = run_ok(Command::new(&ntx).arg("--help"));
    let help = String::from_utf8_lossy(&help.stdout);
    for line in [
        "  1  abi-diff found",
        "     op run refused the call before anything ran",
        "on stdout); op run: a misuse error stopped the run",
        "  3  op run: a kernel or shape function crashed",
    ] {
        assert!(help.contains(line), "--help lacks {line:?}:\n{help}");
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_kernel_past_its_timeout_is_ended_and_reported_where_it_was() {
    let (dir, ntx) = setup("sdk_timeout");
    let args = [
        "spin",
        "x.npy",
        "--cores",
        "8",
        "--timeout",
        "1",
        "--out",
        "y.npy",
    ];
    let started = Instant::now();
    let out = ntx_op(&ntx, &dir, "failures_shape.cpp", &args)
        .arg("--stats=json")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    // The build, one second of running, and the reports: never the 60 s default.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let timeouts: Vec<&serde_json::Value> = doc["reports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["kind"] == "timeout")
        .collect();
    assert_eq!(timeouts.len(), 8, "{stdout}");
    for (core, r) in timeouts.iter().enumerate() {
        assert_eq!(r["core"].as_u64(), Some(core as u64));
        let detail = r["detail"].as_str().unwrap();
        assert!(
            detail.contains("still ran after 1 s, at spin(") && detail.contains("failures.cpp:"),
            "{detail}"
        );
    }
    assert!(
        stderr.contains("error[timeout] op spin, core 0:"),
        "{stderr}"
    );
    assert!(!dir.join("y.npy").exists());
}
