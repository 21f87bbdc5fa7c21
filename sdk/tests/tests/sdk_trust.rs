//! `ntx op run` and the op's program destroy nothing of the user's and leave nothing behind
//! (#45; docs/customop-host.md, "What a run writes and leaves"), from an installed tree,
//! with sdk/tests/customops/trust.cpp:
//!
//! * `--out` on a character device or a FIFO writes into it, never replaces it;
//! * an input that is not a regular file, or whose size is not what its header promises,
//!   is refused at once, read no further (`/dev/zero`);
//! * a process a kernel forks (even in a session of its own) does not outlive the run;
//! * killed by a signal (SIGKILL included), nothing is left beside `--out`;
//! * `--timeout` past a year is refused, in every spelling, with exit 1;
//! * `--stats=json` is the whole of stdout, whatever the kernel prints;
//! * a timeout names the kernel's own line; `--stats=json` keeps the frames below it;
//! * nan, inf and -inf are doubles, `1e400` is refused;
//! * builds into one `--build-dir` take turns.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nt_support::install::{f32_npy, make, within};
use nt_support::tools::scratch;

/// Installs into a fresh prefix under `dir`, builds trust.cpp's program there and writes
/// `x.npy` (1 x 2 float32): (folder, ntx, program).
fn setup(name: &str) -> (PathBuf, PathBuf, PathBuf) {
    let dir = scratch(name);
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    let ntx = prefix.join("bin/ntx");
    let x = f32_npy("(1, 2)", &[1.5, -2.0]);
    std::fs::write(dir.join("x.npy"), x).unwrap();
    let program = dir.join("prog");
    let built = Command::new(&ntx)
        .args(["op", "build", "--out"])
        .arg(&program)
        .args(sources())
        .env_remove("PKG_CONFIG_PATH")
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", text(&built.stderr));
    (dir, ntx, program)
}

/// `trust.cpp:N`, N the line of `naps`'s sleep: where a timeout finds the kernel.
fn naps_sleep() -> String {
    let source = std::fs::read_to_string(nt_sdk_tests::kernels().join("trust.cpp")).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    let naps = lines.iter().position(|l| l.contains("naps(")).unwrap();
    let sleep = naps
        + lines[naps..]
            .iter()
            .position(|l| l.contains("usleep"))
            .unwrap();
    format!("trust.cpp:{}", sleep + 1)
}

/// trust.cpp and its shape file, built with `--no-device-parity`: it sleeps with usleep,
/// which the device's headers lack, and takes a double.
fn sources() -> Vec<String> {
    let k = nt_sdk_tests::kernels();
    let f = |n: &str| k.join(n).display().to_string();
    vec![
        "--no-device-parity".into(),
        "--compute".into(),
        f("trust.cpp"),
        "--shape".into(),
        f("trust_shape.cpp"),
    ]
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run(program: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn ntx_run(ntx: &Path, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(ntx);
    c.current_dir(dir)
        .args(["op", "run"])
        .args(sources())
        .args(args)
        .env_remove("PKG_CONFIG_PATH");
    c
}

/// A FIFO at `path`, made by mkfifo(1).
fn mkfifo(path: &std::path::Path) {
    let made = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}: {made}", path.display());
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_runner_destroys_nothing_and_reads_no_more_than_promised() {
    let (dir, _, program) = setup("sdk_trust_files");
    // A FIFO as --out: written into, still a FIFO.
    let fifo = dir.join("out.fifo");
    mkfifo(&fifo);
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::read(fifo).unwrap()
    });
    let o = run(
        &program,
        &dir,
        &["chatty_scale", "x.npy", "2", "--out", "out.fifo"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let got = reader.join().unwrap();
    assert!(got.starts_with(b"\x93NUMPY") && got.ends_with(&[0, 0, 0x40, 0x40, 0, 0, 0x80, 0xc0]));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // A character device: /dev/null stays /dev/null.
    let o = run(
        &program,
        &dir,
        &["chatty_scale", "x.npy", "2", "--out", "/dev/null"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
    // A folder is refused.
    let o = run(
        &program,
        &dir,
        &["chatty_scale", "x.npy", "2", "--out", "."],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    // Endless, special or mis-sized inputs: refused at once.
    let started = Instant::now();
    let o = run(&program, &dir, &["chatty_scale", "/dev/zero", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("not a regular file"),
        "{}",
        text(&o.stderr)
    );
    let mut long = std::fs::read(dir.join("x.npy")).unwrap();
    long.extend([0u8; 4]);
    std::fs::write(dir.join("long.npy"), &long).unwrap();
    let o = run(&program, &dir, &["chatty_scale", "long.npy", "2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("where its header promises"),
        "{}",
        text(&o.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    profile_targets_refused_first(&program, &dir);
}

/// `--profile` on a file, `/dev/null` or a link to nothing is refused before anything runs
/// (exit 1, nothing printed by the kernel; the emulator named is never started), saying
/// what it is; a missing folder is made.
fn profile_targets_refused_first(program: &Path, dir: &Path) {
    std::fs::write(dir.join("a-file"), "kept").unwrap();
    std::os::unix::fs::symlink(dir.join("nowhere/at/all"), dir.join("dangling")).unwrap();
    let device = ["--device", "no-such-emulator", "--translation", "none"];
    for (target, says) in [
        ("a-file", "is not a folder"),
        ("/dev/null", "is not a folder"),
        ("dangling", "is a link to nothing"),
    ] {
        let args = [
            &["chatty_scale", "x.npy", "2", "--profile", target][..],
            &device,
        ]
        .concat();
        let o = run(program, dir, &args);
        assert_eq!(o.status.code(), Some(1), "{target}: {}", text(&o.stderr));
        let said = text(&o.stderr);
        assert!(
            said.contains(&format!("--profile {target}: {says}")),
            "{said}"
        );
        assert!(o.stdout.is_empty(), "{target}: the kernel ran");
    }
    assert_eq!(std::fs::read_to_string(dir.join("a-file")).unwrap(), "kept");
    let args = [
        &["chatty_scale", "x.npy", "2", "--profile", "made/here"][..],
        &device,
    ]
    .concat();
    let o = run(program, dir, &args);
    assert!(dir.join("made/here").is_dir(), "{}", text(&o.stderr));
    assert!(std::fs::read_dir(dir.join("made/here"))
        .unwrap()
        .next()
        .is_none());
}

/// A folder or a FIFO named as a source is refused before the compiler runs (a FIFO would
/// block it), saying what it is; a program that never describes itself is ended at
/// `op schema --timeout`.
#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_source_that_is_no_regular_file_is_refused_at_once() {
    let (dir, ntx, _) = setup("sdk_trust_sources");
    let fifo = dir.join("kernel.fifo");
    mkfifo(&fifo);
    let shape = nt_sdk_tests::kernels().join("trust_shape.cpp");
    for source in [dir.clone(), fifo] {
        let started = Instant::now();
        let o = Command::new(&ntx)
            .current_dir(&dir)
            .args(["op", "run", "--compute"])
            .arg(&source)
            .arg("--shape")
            .arg(&shape)
            .args(["naps", "x.npy"])
            .env_remove("PKG_CONFIG_PATH")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("not a regular file"),
            "{}",
            text(&o.stderr)
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    // A program that never describes itself: ended at --timeout, with nothing left running.
    let silent = dir.join("silent");
    std::fs::write(&silent, "#!/bin/sh\nexec sleep 297.5\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&silent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = Instant::now();
    let o = Command::new(&ntx)
        .current_dir(&dir)
        .args(["op", "schema", "--library", "silent", "--timeout", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("silent: cannot run it: it had not ended after 1 s"),
        "{}",
        text(&o.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let left = Command::new("pgrep")
        .args(["-f", "sleep 297.5"])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left running: {}",
        text(&left.stdout)
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn numbers_timeouts_and_the_json_document_are_read_as_documented() {
    let (dir, ntx, program) = setup("sdk_trust_numbers");
    for (value, want) in [
        ("nan", "nan"),
        ("inf", "inf"),
        ("-inf", "-inf"),
        ("-0.5", "-0.5"),
    ] {
        let o = run(
            &program,
            &dir,
            &["chatty_scale", "x.npy", value, "--stats=json"],
        );
        assert!(o.status.success(), "{value}: {}", text(&o.stderr));
        let doc: serde_json::Value =
            serde_json::from_slice(&o.stdout).expect("stdout is the document alone");
        assert_eq!(doc["op"], "chatty_scale");
        assert!(
            text(&o.stderr).contains(&format!("{{\"factor\": {want}}}")),
            "{}",
            text(&o.stderr)
        );
    }
    for bad in ["1e400", "-1e400"] {
        let o = run(&program, &dir, &["chatty_scale", "x.npy", bad]);
        assert_eq!(o.status.code(), Some(1), "{bad}");
        assert!(
            text(&o.stderr).contains("double's range"),
            "{}",
            text(&o.stderr)
        );
    }
    for bad in ["1e30", "18446744073709551616", "1e19", "inf", "nan", "-1"] {
        let o = run(
            &program,
            &dir,
            &["chatty_scale", "x.npy", "1", "--timeout", bad],
        );
        assert_eq!(
            o.status.code(),
            Some(1),
            "runner --timeout {bad}: {}",
            text(&o.stderr)
        );
        assert!(
            text(&o.stderr).contains("give seconds"),
            "{}",
            text(&o.stderr)
        );
        let o = ntx_run(
            &ntx,
            &dir,
            &["chatty_scale", "x.npy", "1", "--timeout", bad],
        )
        .output()
        .unwrap();
        assert_eq!(
            o.status.code(),
            Some(1),
            "ntx --timeout {bad}: {}",
            text(&o.stderr)
        );
    }
    // Through ntx, -inf is a value too, and --stats=json's stdout is the document alone.
    let o = ntx_run(
        &ntx,
        &dir,
        &["chatty_scale", "x.npy", "-inf", "--stats=json"],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    serde_json::from_slice::<serde_json::Value>(&o.stdout).expect("stdout is the document alone");
}

/// A timeout's whole chain is in --stats=json: the C library's frames, then the kernel's
/// line; a kernel that stopped itself is said to have been stopped.
fn timeouts_say_where(ntx: &Path, dir: &Path) {
    let o = ntx_run(ntx, dir, &["stops_itself", "x.npy", "--timeout", "0.5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4));
    let err = text(&o.stderr);
    assert!(err.contains("it was stopped (SIGSTOP"), "{err}");
    // A kernel that execs a five-minute sleep: ended at its deadline, the sleep with it.
    let o = ntx_run(ntx, dir, &["execs", "x.npy", "--timeout", "0.5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains("as a kernel that calls exec does"), "{err}");
    // A kernel that prints without end: 16 MiB of it shown, then how much there was.
    let o = ntx_run(ntx, dir, &["prints_forever", "x.npy", "--timeout", "1"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let (shown, note) = out.rsplit_once("\n[the kernel printed ").expect("the note");
    assert_eq!(shown.len(), 16 << 20, "{note}");
    assert!(
        note.ends_with("bytes in this call; the first 16777216 are shown]\n"),
        "{note}"
    );
    let o = ntx_run(
        ntx,
        dir,
        &["naps", "x.npy", "--timeout", "0.5", "--stats=json"],
    )
    .output()
    .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let stack: Vec<&str> = doc["reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "timeout")
        .and_then(|r| r["stack"].as_array())
        .map(|s| s.iter().filter_map(|f| f.as_str()).collect())
        .unwrap_or_default();
    let kernel = stack.iter().position(|f| f.contains(&naps_sleep()));
    let libc = stack.iter().position(|f| f.contains("sleep"));
    assert!(
        matches!((libc, kernel), (Some(l), Some(k)) if l < k),
        "{stack:#?}"
    );
}

/// The files named `prefix*` in `dir` three seconds from now: what a kernel's child that
/// outlived its run wrote (trust.cpp's children write theirs after two seconds).
fn written_later(dir: &Path, prefix: &str) -> Vec<std::fs::DirEntry> {
    std::thread::sleep(Duration::from_secs(3));
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .collect()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_kernel_that_kills_the_runner_is_said_to() {
    let (dir, ntx, _) = setup("sdk_trust_kills");
    let o = ntx_run(&ntx, &dir, &["ends_badly", "x.npy", "2"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr)
            .contains("error[kernel-crashed] op ends_badly: the op's program (the runner")
            && text(&o.stderr).contains("died of signal 9"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn nothing_a_run_starts_outlives_it_and_a_timeout_names_the_kernels_line() {
    let (dir, ntx, _) = setup("sdk_trust_processes");
    let o = ntx_run(&ntx, &dir, &["leaves_a_child", "x.npy", "--out", "y.npy"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let strays = written_later(&dir, "stray-");
    assert!(
        strays.is_empty(),
        "a kernel's child outlived ntx: {strays:?}"
    );
    let o = ntx_run(&ntx, &dir, &["naps", "x.npy", "--timeout", "0.5"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(4));
    let err = text(&o.stderr);
    assert!(err.contains("at naps(at::Tensor const&) ("), "{err}");
    assert!(err.contains(&naps_sleep()), "{err}");
    assert!(
        !err.contains("nanosleep"),
        "the C library's frame named: {err}"
    );
    timeouts_say_where(&ntx, &dir);
    // Killed while compiling: nothing left in its TMPDIR (the build folder and the
    // compilers' temporaries go with it).
    let tmp = dir.join("tmp-compile");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = ntx_run(&ntx, &dir, &["naps", "x.npy"])
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let compiling = within(Duration::from_secs(20), || {
        std::fs::read_dir(&tmp).unwrap().next().is_some()
    });
    assert!(compiling, "the build never started");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: a child of this test.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let empty = within(Duration::from_secs(10), || {
        std::fs::read_dir(&tmp).unwrap().next().is_none()
    });
    assert!(
        empty,
        "left in TMPDIR: {:?}",
        std::fs::read_dir(&tmp).unwrap().collect::<Vec<_>>()
    );
    // Killed mid-run by any signal: nothing beside --out.
    for sig in [libc::SIGTERM, libc::SIGKILL] {
        let mut child = ntx_run(
            &ntx,
            &dir,
            &["naps", "x.npy", "--out", "z.npy", "--timeout", "0"],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        std::thread::sleep(Duration::from_secs(2));
        // SAFETY: a child of this test.
        unsafe { libc::kill(child.id() as i32, sig) };
        child.wait().unwrap();
        let clean = within(Duration::from_secs(10), || {
            std::fs::read_dir(&dir)
                .unwrap()
                .flatten()
                .all(|e| !e.file_name().to_string_lossy().contains(".tmp"))
        });
        assert!(clean, "signal {sig}: a temporary file is left beside --out");
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn builds_into_one_folder_take_turns() {
    let (dir, ntx, _) = setup("sdk_trust_build_dir");
    let runs: Vec<_> = (0..3)
        .map(|_| {
            ntx_run(
                &ntx,
                &dir,
                &["chatty_scale", "x.npy", "3", "--build-dir", "shared"],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for r in runs {
        let o = r.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_kernels_child_that_escapes_dies_when_ntx_is_killed() {
    let (dir, ntx, _) = setup("sdk_trust_escape");
    let mut child = ntx_run(&ntx, &dir, &["escapes", "x.npy"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = within(Duration::from_secs(60), || dir.join("escaping").exists());
    assert!(started, "the kernel never ran");
    // SAFETY: a child of this test.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let escaped = written_later(&dir, "escaped-");
    assert!(
        escaped.is_empty(),
        "a kernel's child that left the session outlived ntx's SIGKILL: {escaped:?}"
    );
}

/// A kernel that crashes leaves no core file in the caller's folder, however the caller's
/// shell set its limit (`ulimit -c unlimited`): the op's program sets its own to 0, which
/// its cores and qemu inherit.
#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_crash_leaves_no_core_file() {
    let (dir, _ntx, program) = setup("sdk_trust_core");
    let unlimited = |args: &str| {
        Command::new("sh")
            .current_dir(&dir)
            .arg("-c")
            .arg(format!("ulimit -c unlimited && exec \"$0\" {args}"))
            .arg(&program)
            .output()
            .unwrap()
    };
    let o = unlimited("aborts x.npy");
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("error[kernel-crashed] op aborts"),
        "{}",
        text(&o.stderr)
    );
    let cores: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("core"))
        .collect();
    assert!(cores.is_empty(), "{cores:?}");
    // A stack overflow is a crash that says so.
    let o = unlimited("ends_badly x.npy 1");
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("died of signal 11 (Segmentation fault): its stack overflowed,"),
        "{}",
        text(&o.stderr)
    );
    let o = unlimited("core_limit x.npy --out limit.npy");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let written = std::fs::read(dir.join("limit.npy")).unwrap();
    assert_eq!(
        &written[written.len() - 8..],
        &[0, 0, 0x80, 0x3f, 0, 0, 0x80, 0x3f],
        "both 1.0"
    );
}
