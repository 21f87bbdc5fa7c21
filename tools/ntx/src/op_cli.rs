//! `ntx op run`'s command line: the call checked before anything is built (the library's
//! name, the cores, the output's folder), the build and the run held by the process guard
//! (`ntx::guard`: nothing outlives ntx, the temporary build folder goes with it), and the
//! runner's exit status passed on.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use ntx::guard::{self, Guard};

use super::{Failure, Format};
use ntx::op_error::{FileAction, OpError, OutProblem};

#[derive(Subcommand, Debug)]
pub enum OpCommand {
    /// Build the sources (as custom_op.load does) and run OP on each core: its tensors
    /// from .npy files, its int64_t, double and Scalar arguments as typed. Exit status:
    /// 0 ran, 1 refused before anything ran, 2 a misuse error, 3 a kernel or shape
    /// function crashed, 4 one ran past --timeout.
    Run(OpRun),
    /// Build the sources into the op's program, OUT (as custom_op.load writes
    /// lib<name>.so; the Python front end runs it): exit 0 built, 1 refused.
    Build(OpBuild),
    /// Print each op's schema as PyTorch sees it (`relu_ops::relu_forward(Tensor input)
    /// -> Tensor`): of the sources, built as op build builds them, or of a program already
    /// built (--library). Exit 0, or 1 refused.
    #[command(
        override_usage = "ntx op schema (--compute FILE --shape FILE [OPTIONS] | --library PROGRAM)"
    )]
    Schema(OpSchema),
}

/// `ntx op schema`'s arguments: the sources, or a built program.
#[derive(Args, Debug)]
pub struct OpSchema {
    #[command(flatten)]
    sources: Option<Sources>,
    /// A program op build (or custom_op.load) wrote: its schema, without building.
    #[arg(long, conflicts_with_all = ["compute", "shape"], required_unless_present = "compute")]
    library: Option<PathBuf>,
    /// Seconds the program may take to describe itself (its static constructors run
    /// first) before it is ended and the command fails (0: no limit).
    #[arg(long, default_value_t = nt_sdk_common::DEFAULT_TIMEOUT.as_secs().to_string(), value_parser = timeout_arg, allow_hyphen_values = true)]
    timeout: String,
}

/// What `op build` and `op run` both take: the sources and how they compile.
#[derive(Args, Debug)]
pub struct Sources {
    /// Compute sources (the kernels).
    #[arg(long, required = true)]
    compute: Vec<PathBuf>,
    /// Shape sources (shape functions and NEURON_LIBRARY).
    #[arg(long, required = true)]
    shape: Vec<PathBuf>,
    /// The C++ standard the sources compile as.
    #[arg(long = "std", default_value = "c++14")]
    standard: String,
    /// A compiler flag (extra_cflags), repeatable: --cflag=-DN=4.
    #[arg(long = "cflag", allow_hyphen_values = true)]
    cflags: Vec<String>,
    /// The library's name (custom_op.load's `name`); `builtin` is refused, as there.
    #[arg(long)]
    name: Option<String>,
    /// Build what the device's own compile refuses (-std=c++14 -Wall -Werror, the proxy
    /// elements aside), for exploring: every run of the program warns that the device
    /// would not build it.
    #[arg(long)]
    no_device_parity: bool,
}

impl Sources {
    /// The build of these sources in folder `dir`, the library's name checked first.
    fn build_in(&self, dir: PathBuf) -> Result<ntx::op::Build, Failure> {
        if self.name.as_deref() == Some("builtin") {
            return Err(Failure::Refused(
                "a library may not be named `builtin`".into(),
            ));
        }
        // A source is a regular file (a link to one): a folder is no source, and a FIFO or
        // a device would block the compiler or feed it without end.
        for (flag, src) in (self.compute.iter().map(|s| ("--compute", s)))
            .chain(self.shape.iter().map(|s| ("--shape", s)))
        {
            match std::fs::metadata(src) {
                Ok(m) if m.is_file() => {}
                Ok(_) => {
                    return Err(Failure::Refused(format!(
                        "{flag} {}: not a regular file (a source file is read by the compiler)",
                        src.display()
                    )))
                }
                Err(e) => return Err(Failure::Refused(format!("{flag} {}: {e}", src.display()))),
            }
        }
        Ok(ntx::op::Build {
            compute: self.compute.clone(),
            shape: self.shape.clone(),
            std: self.standard.clone(),
            cflags: self.cflags.clone(),
            dir,
            parity: !self.no_device_parity,
        })
    }
}

#[derive(Args, Debug)]
pub struct OpBuild {
    #[command(flatten)]
    sources: Sources,
    /// The program to write (replaced whole once it is built).
    #[arg(long, required = true)]
    out: PathBuf,
    /// Also write, one a line, what a cache of the build must watch: every file the build
    /// read (the sources, each header the compiler opened, the compiler), then every folder
    /// it searched for headers, each ending in '/' (a new header there may shadow another).
    #[arg(long)]
    deps: Option<PathBuf>,
}

/// `--timeout` checked as the runner checks it (sdk/common), passed on as typed.
fn timeout_arg(s: &str) -> Result<String, nt_sdk_common::LimitError> {
    nt_sdk_common::timeout_of(s).map(|_| s.to_string())
}

#[derive(Args, Debug)]
pub struct OpRun {
    #[command(flatten)]
    sources: Sources,
    /// Cores the kernel runs on (1 to 8), as multicore=True.
    #[arg(long, default_value = "1", value_parser = nt_sdk_common::cores_of, allow_hyphen_values = true)]
    cores: u32,
    /// Where the objects and the program go (default: a fresh temporary folder, removed
    /// when ntx ends).
    #[arg(long)]
    build_dir: Option<PathBuf>,
    /// Where the output tensor goes (.npy); its folder must exist and be writable.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Seconds the kernels (and the shape function) may run before every core is ended
    /// and the run fails with exit status 4 (0: no limit).
    #[arg(long, default_value_t = nt_sdk_common::DEFAULT_TIMEOUT.as_secs().to_string(), value_parser = timeout_arg, allow_hyphen_values = true)]
    timeout: String,
    /// Add the one check that costs a fault per TCM page: loads and copies of tcm_malloc
    /// bytes nothing wrote. Every other check (TCM bounds to the byte, unwritten and
    /// shared elements, leaks, the accessors' rules) is always on; docs/customop-host.md,
    /// "Which checks run when", tables them.
    #[arg(long)]
    sanitize: bool,
    /// Per core: translations, refills per window, bytes through TCM, the TCM pool's
    /// high-water mark and every warning; --stats=json as one JSON document, alone on
    /// stdout (what the kernels print goes to stderr then).
    #[arg(long, num_args = 0..=1, require_equals = true, default_missing_value = "text")]
    stats: Option<Format>,
    /// The kernel built for the Q7 and run on an emulated core (qemu-xtensa), with what it
    /// executed in --stats (docs/customop-device.md).
    #[arg(long)]
    device: bool,
    /// With --device: the translation object to link instead of the SDK's (the original's,
    /// extracted from a vendor archive, say).
    #[arg(long, requires = "device")]
    translation: Option<PathBuf>,
    /// With --device: where the counted instructions went, written to this folder:
    /// profile.json (by source line, function and call stack), profile.txt (the sources
    /// with each line's instructions) and profile.svg (a flame graph).
    #[arg(long, requires = "device", value_name = "DIR")]
    profile: Option<PathBuf>,
    /// The op (its registered name).
    op: String,
    /// Its arguments, in order (numbers, nan, inf and -inf as values).
    #[arg(allow_negative_numbers = true)]
    args: Vec<String>,
}

/// A mark ntx puts before `-inf`, `-infinity` and `-nan` on `op run`'s command line, so
/// that the parser takes them as values, as it takes other negative numbers; removed
/// before the op's program sees them.
const NAMED_NUMBER: char = '\u{1}';

/// `args` with `op run`'s named negative numbers marked ([`NAMED_NUMBER`]).
pub fn protect_named_numbers(args: &[std::ffi::OsString]) -> Vec<std::ffi::OsString> {
    let op_run = args.windows(2).any(|w| w[0] == "op" && w[1] == "run");
    args.iter()
        .map(|a| {
            let named = a.to_str().is_some_and(|t| {
                ["-inf", "-infinity", "-nan"].contains(&t.to_ascii_lowercase().as_str())
            });
            if op_run && named {
                format!("{NAMED_NUMBER}{}", a.to_string_lossy()).into()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// Whether a file can be written at `out`: the reason it cannot. A character device or a
/// FIFO is written as it is (the runner opens it), anything else not a regular file refused.
fn check_out(out: &Path) -> Result<(), OpError> {
    use std::os::unix::fs::FileTypeExt;
    let refused = |problem| OpError::Out {
        path: out.into(),
        problem,
    };
    if let Ok(m) = std::fs::metadata(out) {
        let t = m.file_type();
        if t.is_char_device() || t.is_fifo() {
            return Ok(());
        }
        if t.is_dir() {
            return Err(refused(OutProblem::Folder));
        }
        if !t.is_file() {
            return Err(refused(OutProblem::NotAFile));
        }
    }
    nt_sdk_common::try_write_beside(out)
        .ok_or_else(|| refused(OutProblem::NoName))?
        .map_err(|e| refused(OutProblem::Unwritable(e)))?;
    Ok(())
}

/// `ntx op build`: 0 when the program is at `--out`.
pub fn op_build(b: OpBuild) -> Result<u8, Failure> {
    let temp = std::env::temp_dir().join(format!("ntx-op-{}", std::process::id()));
    let build = b.sources.build_in(temp.clone())?;
    if std::fs::metadata(&b.out).is_ok_and(|m| !m.is_file()) {
        return Err(OpError::Out {
            path: b.out,
            problem: OutProblem::NotAProgramFile,
        }
        .into());
    }
    check_out(&b.out)?;
    let guard = Guard::start(Some(temp.as_path()), None);
    let placed = ntx::op::lock_dir(&build.dir).and_then(|_lock| {
        let exe = ntx::op_device::build_held(&build)?;
        let name = b.out.file_name().map(|n| n.to_string_lossy().into_owned());
        let tmp = b.out.with_file_name(format!(
            ".{}.ntx-{}",
            name.unwrap_or_default(),
            std::process::id()
        ));
        let copied = std::fs::copy(&exe, &tmp).and_then(|_| std::fs::rename(&tmp, &b.out));
        copied.map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            OpError::file(FileAction::Write, &b.out)(e)
        })?;
        let Some(deps) = &b.deps else {
            return Ok(());
        };
        // A file a line; a folder (watched by its listing) a line ending in '/'.
        let (files, dirs) = ntx::op_deps::dependencies(&build)?;
        let mut text = String::new();
        for (p, tail) in files
            .iter()
            .map(|p| (p, ""))
            .chain(dirs.iter().map(|p| (p, "/")))
        {
            let line = p
                .to_str()
                .filter(|l| !l.contains('\n'))
                .ok_or_else(|| OpError::Unlistable { path: p.clone() })?;
            text += line.trim_end_matches('/');
            text += tail;
            text.push('\n');
        }
        std::fs::write(deps, text).map_err(OpError::file(FileAction::Write, deps))
    });
    guard.finish();
    placed?;
    Ok(0)
}

/// `ntx op schema`: each op's schema, one a line, from the program's own description.
pub fn op_schema(s: OpSchema) -> Result<u8, Failure> {
    let limit =
        nt_sdk_common::timeout_of(&s.timeout).map_err(|e| Failure::Refused(e.to_string()))?;
    let describe = |exe: &Path| -> Result<String, OpError> {
        let program = || exe.to_path_buf();
        let out =
            ntx::guard::output_within(std::process::Command::new(exe).arg("--describe"), limit)
                .map_err(|source| OpError::Unrun {
                    program: program(),
                    source,
                })?;
        if !out.status.success() {
            return Err(OpError::NotOpProgram { program: program() });
        }
        let doc: serde_json::Value =
            serde_json::from_slice(&out.stdout).map_err(|source| OpError::DescriptionUnread {
                program: program(),
                source,
            })?;
        let lines: Vec<String> = doc["ops"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|op| {
                format!(
                    "{}::{}",
                    op["library"].as_str().unwrap_or("?"),
                    op["schema"].as_str().unwrap_or("?")
                )
            })
            .collect();
        Ok(lines.join("\n"))
    };
    let text = match (&s.library, &s.sources) {
        // A bare name is the file in this folder, not a program on PATH.
        (Some(lib), _) if lib.components().count() == 1 => describe(&Path::new(".").join(lib)),
        (Some(lib), _) => describe(lib),
        (None, Some(sources)) => {
            let temp = std::env::temp_dir().join(format!("ntx-op-{}", std::process::id()));
            let build = sources.build_in(temp.clone())?;
            let guard = Guard::start(Some(temp.as_path()), None);
            let text = ntx::op::lock_dir(&build.dir)
                .and_then(|_lock| describe(&ntx::op_device::build_held(&build)?));
            guard.finish();
            text
        }
        (None, None) => Err(OpError::NoSources),
    };
    println!("{}", text?);
    Ok(0)
}

/// `ntx op run`: the runner's exit status.
pub fn op_run(r: OpRun) -> Result<u8, Failure> {
    let temp = std::env::temp_dir().join(format!("ntx-op-{}", std::process::id()));
    let build = r
        .sources
        .build_in(r.build_dir.clone().unwrap_or_else(|| temp.clone()))?;
    if let Some(out) = &r.out {
        check_out(out)?;
    }
    let guard = Guard::start(
        r.build_dir.is_none().then_some(temp.as_path()),
        r.out.as_deref(),
    );
    let status = ntx::op::lock_dir(&build.dir).and_then(|_lock| {
        let exe = ntx::op_device::build_held(&build)?;
        let device = r.device.then(|| device_program(&build, &r)).transpose()?;
        run_program(&exe, &r, device.as_ref())
    });
    guard.finish();
    let status = status?;
    if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&status) {
        eprintln!("{}", program_killed(&r.op, sig));
    }
    Ok(status.code().map_or(3, |c| c as u8))
}

/// What ntx says when the op's program itself was killed by signal `sig`: it wrote no
/// report, so nothing else says it (exit status 3, as for a crash).
fn program_killed(op: &str, sig: i32) -> String {
    // SAFETY: strsignal returns a static or thread-local string for any number.
    let name = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(sig)) }.to_string_lossy();
    format!(
        "error[kernel-crashed] op {op}: the op's program (the runner, which starts each core's \
         process) died of signal {sig} ({name}) before it reported: a kernel that signals its \
         parent process or its process group (kill(getppid(), ...), kill(0, ...)) ends it so, \
         and so does a signal from outside"
    )
}

/// The kernels' program for the device and what the runner needs to run it.
struct DeviceProgram {
    elf: PathBuf,
    translation: PathBuf,
    /// The emulator.
    qemu: String,
    /// The qemu plugin that counts the instructions.
    count_plugin: String,
}

fn device_program(build: &ntx::op::Build, r: &OpRun) -> Result<DeviceProgram, OpError> {
    let sdk = ntx::op_device::device_sdk()?;
    let translation = r
        .translation
        .clone()
        .unwrap_or_else(|| sdk.translation.clone());
    if !translation.is_file() {
        return Err(OpError::Translation {
            path: translation,
            said: "no such file".into(),
        });
    }
    let elf = ntx::op_device::build(build, &sdk, &translation)?;
    Ok(DeviceProgram {
        elf,
        translation,
        qemu: sdk.qemu,
        count_plugin: sdk.count_plugin,
    })
}

/// Runs the op's program, guarded: its exit status.
fn run_program(
    exe: &Path,
    r: &OpRun,
    device: Option<&DeviceProgram>,
) -> Result<std::process::ExitStatus, OpError> {
    let mut cmd = std::process::Command::new(exe);
    if let Some(d) = device {
        cmd.arg("--device")
            .arg(&d.elf)
            .arg("--translation")
            .arg(&d.translation);
        cmd.env("NT_QEMU_XTENSA", &d.qemu);
        cmd.env("NT_QEMU_COUNT_PLUGIN", &d.count_plugin);
    }
    cmd.arg(&r.op)
        .args(r.args.iter().map(|a| a.trim_start_matches(NAMED_NUMBER)))
        .args(["--cores", &r.cores.to_string()])
        .args(["--timeout", &r.timeout]);
    if r.sanitize {
        cmd.arg("--sanitize");
    }
    if let Some(dir) = &r.profile {
        cmd.arg("--profile").arg(dir);
    }
    if let Some(out) = &r.out {
        cmd.arg("--out").arg(out);
    }
    match r.stats {
        Some(Format::Json) => cmd.arg("--stats=json"),
        Some(Format::Text) => cmd.arg("--stats"),
        None => &mut cmd,
    };
    guard::status(&mut cmd).map_err(OpError::start("the op"))
}
