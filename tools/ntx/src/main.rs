//! `ntx`: tells whether an object is a drop-in for the original `translation.o`, and swaps
//! it into a vendor archive.
//!
//! Exit status: [`EXIT_STATUS`], which `--help` shows.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ntx::diff::Report;
use ntx::error::{Error, ErrorKind};
use ntx::finding::Class;
use ntx::suppress::Suppressions;
use ntx::{diff, load, report, tables};

mod op_cli;
mod relink;
use op_cli::{op_build, op_run, op_schema, OpCommand};
use relink::{relink, Relink};

/// The exit codes, stated once (`ntx --help`, `ntx abi-diff --help`, `ntx relink --help`).
const EXIT_STATUS: &str = "Exit status:
  0  success: abi-diff found nothing at or above --fail-on (suppressed findings aside);
     relink wrote the archive; simulate replayed the trace; explain, translate and build
     did their work; op run ran the op (warnings allowed)
  1  abi-diff found a finding at or above --fail-on; relink refused an object with a
     break (or, with --force, wrote one); simulate reached a call the device traps on;
     op run refused the call before anything ran (a usage error, an argument or input,
     the build)
  2  abi-diff, relink, simulate, explain, translate, build: bad input (a usage error, an
     unreadable or malformed file, a bad suppression file, or two objects that cannot be
     compared; under --format json, sarif or junit the error is reported in that format
     on stdout); op run: a misuse error stopped the run
  3  op run: a kernel or shape function crashed
  4  op run: a kernel or shape function still ran after --timeout (every core ended)
op build: 0 built, 1 refused (as op run's 1).";

#[derive(Parser, Debug)]
#[command(name = "ntx", version, about = "neuron-translate ABI tools", after_help = EXIT_STATUS)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Output formats of `explain`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// Output formats of `abi-diff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum DiffFormat {
    /// For people.
    Text,
    /// The report, version 1 (abi-tests/README.md).
    Json,
    /// SARIF 2.1.0, for code-scanning views.
    Sarif,
    /// JUnit XML, for test-report views.
    Junit,
}

/// How a diff's findings decide the exit status.
#[derive(Args, Debug)]
struct Policy {
    /// A TOML file of accepted differences (finding kind, symbol glob, reason); the
    /// findings it covers are listed as suppressed and do not count.
    #[arg(long, value_name = "FILE")]
    suppressions: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compare a candidate object's ABI against a reference (ELF, archive or manifest).
    #[command(after_help = EXIT_STATUS)]
    AbiDiff {
        /// The reference: an ELF relocatable, an ar archive, or an ABI manifest (TOML).
        #[arg(long)]
        reference: PathBuf,
        /// The candidate: same kinds.
        #[arg(long)]
        candidate: PathBuf,
        /// The member to take from an archive.
        #[arg(long, default_value = "translation.o")]
        member: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: DiffFormat,
        /// The least severe class that fails the run (exit 1).
        #[arg(long, value_enum, default_value = "break")]
        fail_on: Class,
        #[command(flatten)]
        policy: Policy,
    },
    /// Describe a 168-byte window table for a person: each window's SoC and local range,
    /// its register, and everything wrong with the table.
    Explain {
        /// The table image (exactly 168 bytes).
        table: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Translate addresses through a table: the matching slot and local address, or the
    /// refill that would happen (addresses in order; each refill changes the table).
    Translate {
        /// The table image (exactly 168 bytes).
        table: PathBuf,
        /// Addresses, decimal or 0x-hex.
        #[arg(required = true)]
        addrs: Vec<String>,
    },
    /// Replay a trace of translate calls (the host model writes them) through a table:
    /// hits and refills per slot, register writes, and a warning when the pattern thrashes
    /// the three reusable windows.
    Simulate {
        /// The trace (`translate ADDR` / `span ADDR LEN` lines).
        trace: PathBuf,
        /// `original` (the table `_init_translate_ctx` builds, from --engine-base and
        /// --hbm-scratch) or a 168-byte table image.
        #[arg(long, default_value = "original")]
        table: String,
        /// ENGINE_BASE_ADDR for the original table (default: the host model's).
        #[arg(long, value_parser = parse_addr)]
        engine_base: Option<u64>,
        /// hbm_scratch for the original table (default: the host model's).
        #[arg(long, value_parser = parse_addr)]
        hbm_scratch: Option<u64>,
        /// Bytes of views the host model keeps (default: its default, 1 GiB).
        #[arg(long, value_parser = parse_addr)]
        keep: Option<u64>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Build a table image from a TOML spec, refusing tables the device would misuse.
    Build {
        /// The spec (see abi-tests/README.md).
        spec: PathBuf,
        /// Where to write the 168-byte image.
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
    },
    /// Custom operators on a workstation: build an op library's sources with the
    /// installed custom-op SDK and run one op on NumPy inputs (docs/customop-host.md).
    #[command(subcommand)]
    Op(OpCommand),
    /// Replace a member of a vendor archive with an object, after checking its ABI.
    #[command(after_help = EXIT_STATUS)]
    Relink {
        /// The vendor archive (read, never written).
        #[arg(long)]
        archive: PathBuf,
        /// The object to put in.
        #[arg(long)]
        object: PathBuf,
        /// Where to write the patched archive.
        #[arg(long)]
        out: PathBuf,
        /// The member to replace.
        #[arg(long, default_value = "translation.o")]
        member: String,
        /// Relink even when the diff finds a break.
        #[arg(long)]
        force: bool,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        #[command(flatten)]
        policy: Policy,
    },
}

enum Failure {
    /// Exit 1, with a message (already reported when the format is not text).
    Refused(String),
    /// Exit 2.
    Input(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Input(e)
    }
}

/// The op commands' refusals: exit 1, in their words.
impl From<ntx::op_error::OpError> for Failure {
    fn from(e: ntx::op_error::OpError) -> Self {
        Failure::Refused(e.to_string())
    }
}

/// How an input error is reported: in the format the run's output was asked in.
#[derive(Clone, Copy, Debug)]
enum ErrorFormat {
    Text,
    Json,
    Sarif(Class),
    Junit(Class),
}

impl ErrorFormat {
    fn of(command: &Command) -> Self {
        match command {
            Command::AbiDiff {
                format, fail_on, ..
            } => Self::from_diff(*format, *fail_on),
            Command::Explain { format, .. }
            | Command::Relink { format, .. }
            | Command::Simulate { format, .. } => {
                Self::from_diff(Self::plain(*format), Class::Break)
            }
            _ => ErrorFormat::Text,
        }
    }

    fn plain(f: Format) -> DiffFormat {
        match f {
            Format::Text => DiffFormat::Text,
            Format::Json => DiffFormat::Json,
        }
    }

    fn from_diff(f: DiffFormat, fail_on: Class) -> Self {
        match f {
            DiffFormat::Text => ErrorFormat::Text,
            DiffFormat::Json => ErrorFormat::Json,
            DiffFormat::Sarif => ErrorFormat::Sarif(fail_on),
            DiffFormat::Junit => ErrorFormat::Junit(fail_on),
        }
    }

    /// The format a command line that did not parse asked for, as far as it can be read.
    fn from_raw_args(args: &[std::ffi::OsString]) -> Self {
        let args: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let value = args.iter().enumerate().find_map(|(i, a)| {
            a.strip_prefix("--format=").map(String::from).or_else(|| {
                (a == "--format")
                    .then(|| args.get(i + 1).cloned())
                    .flatten()
            })
        });
        match value.and_then(|v| DiffFormat::from_str(&v, false).ok()) {
            Some(f) => Self::from_diff(f, Class::Break),
            None => ErrorFormat::Text,
        }
    }

    fn report(self, e: &Error) {
        eprintln!("ntx: error: {e}");
        match self {
            ErrorFormat::Text => {}
            ErrorFormat::Json => println!("{}", pretty(&report::json_error(e))),
            ErrorFormat::Sarif(fail_on) => {
                println!("{}", pretty(&report::sarif(Err(e), fail_on, 2)))
            }
            ErrorFormat::Junit(fail_on) => print!("{}", report::junit(Err(e), fail_on)),
        }
    }
}

fn pretty(v: &impl serde::Serialize) -> String {
    // Serialising a value built of strings, numbers and maps cannot fail.
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(op_cli::protect_named_numbers(&args)) {
        Ok(c) => c,
        Err(e) if !e.use_stderr() => {
            // --help, --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            match ErrorFormat::from_raw_args(&args) {
                ErrorFormat::Text => {
                    let _ = e.print();
                }
                f => {
                    // clap's message, up to its usage block, on one line.
                    let text = e.render().to_string();
                    let message = text
                        .lines()
                        .take_while(|l| !l.starts_with("Usage:"))
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ");
                    let message = message.trim_start_matches("error: ");
                    f.report(&Error::new(ErrorKind::Usage, "command line", message));
                }
            }
            return ExitCode::from(usage_status(&args));
        }
    };
    let errors = ErrorFormat::of(&cli.command);
    match run(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(Failure::Refused(m)) => {
            eprintln!("ntx: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Input(e)) => {
            errors.report(&e);
            ExitCode::from(2)
        }
    }
}

impl Policy {
    fn load(&self) -> Result<Option<Suppressions>, Error> {
        self.suppressions
            .as_deref()
            .map(Suppressions::load)
            .transpose()
    }

    fn apply(&self, report: &mut Report) -> Result<(), Error> {
        if let Some(rules) = self.load()? {
            report.suppress(&rules);
        }
        Ok(())
    }
}

/// The exit status of a usage error: `op run`'s "refused" (the runner's, 1), every other
/// command's "bad input" (2).
fn usage_status(args: &[std::ffi::OsString]) -> u8 {
    let words: Vec<&str> = args
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .take(2)
        .collect();
    if words == ["op", "run"] {
        nt_sdk_common::exit::REFUSED
    } else {
        2
    }
}

fn run(command: Command) -> Result<u8, Failure> {
    match command {
        Command::AbiDiff {
            reference,
            candidate,
            member,
            format,
            fail_on,
            policy,
        } => abi_diff(&reference, &candidate, &member, format, fail_on, &policy),
        Command::Relink {
            archive: vendor,
            object,
            out,
            member,
            force,
            format,
            policy,
        } => relink(
            &Relink {
                vendor: &vendor,
                object: &object,
                out: &out,
                member: &member,
                force,
            },
            format,
            &policy,
        ),
        Command::Explain { table, format } => explain(&table, format),
        Command::Translate { table, addrs } => translate(&table, &addrs),
        Command::Simulate {
            trace,
            table,
            engine_base,
            hbm_scratch,
            keep,
            format,
        } => simulate(&trace, &table, (engine_base, hbm_scratch), keep, format),
        Command::Build { spec, out } => build(&spec, &out),
        Command::Op(OpCommand::Run(r)) => op_run(r),
        Command::Op(OpCommand::Build(b)) => op_build(b),
        Command::Op(OpCommand::Schema(s)) => op_schema(s),
    }
}

/// `ntx abi-diff`: the report in `format`; 1 when a finding at or above `fail_on` is left.
fn abi_diff(
    reference: &Path,
    candidate: &Path,
    member: &str,
    format: DiffFormat,
    fail_on: Class,
    policy: &Policy,
) -> Result<u8, Failure> {
    // The suppression file first: a bad one is an error before any work.
    let rules = policy.load()?;
    let r = load(reference, member)?;
    let c = load(candidate, member)?;
    diff::comparable(&r, &c)?;
    let mut report = diff::diff(&r, &c);
    if let Some(rules) = &rules {
        report.suppress(rules);
    }
    let code = u8::from(report.fails(fail_on));
    match format {
        DiffFormat::Text => {
            print!("{}", report.to_text());
            if code != 0 && report.compatible() {
                println!(
                    "FAIL: {} finding(s) at or above --fail-on {fail_on}",
                    report.failing(fail_on).count()
                );
            }
        }
        DiffFormat::Json => println!("{}", pretty(&report)),
        DiffFormat::Sarif => println!("{}", pretty(&report::sarif(Ok(&report), fail_on, code))),
        DiffFormat::Junit => print!("{}", report::junit(Ok(&report), fail_on)),
    }
    Ok(code)
}

/// `ntx explain`: the table for a person, or as JSON.
fn explain(table: &Path, format: Format) -> Result<u8, Failure> {
    let data = read(table)?;
    let source = table.display().to_string();
    print!(
        "{}",
        tables::explain(&data, &source, matches!(format, Format::Json))?
    );
    Ok(0)
}

/// `ntx translate`: each address in order through the table, refills applied.
fn translate(table: &Path, addrs: &[String]) -> Result<u8, Failure> {
    let src = table.display().to_string();
    let mut t = tables::parse_table(&read(table)?, &src)?;
    let parsed = addrs
        .iter()
        .map(|a| {
            tables::parse_u64(a).ok_or_else(|| {
                Error::new(
                    ErrorKind::BadArgument,
                    "command line",
                    format!("{a:?} is not an address"),
                )
            })
        })
        .collect::<Result<Vec<u64>, Error>>()?;
    print!("{}", tables::translate(&mut t, &parsed));
    Ok(0)
}

/// `ntx build`: the spec's image written to `out`, or every reason it cannot be built.
fn build(spec: &Path, out: &Path) -> Result<u8, Failure> {
    let src = spec.display().to_string();
    let text = String::from_utf8(read(spec)?)
        .map_err(|_| Error::new(ErrorKind::BadSpec, &src, "not UTF-8 text"))?;
    let image = tables::build(&text, &src)?;
    let o = out.display().to_string();
    std::fs::write(out, image)
        .map_err(|e| Error::new(ErrorKind::Write, o, format!("cannot write: {e}")))?;
    println!("wrote {} ({} bytes)", out.display(), image.len());
    Ok(0)
}

/// An address on the command line that is not a number.
#[derive(Debug, thiserror::Error)]
#[error("{0:?} is not an address")]
struct NotAnAddress(String);

fn parse_addr(s: &str) -> Result<u64, NotAnAddress> {
    tables::parse_u64(s).ok_or_else(|| NotAnAddress(s.to_string()))
}

/// `ntx simulate`: the trace through the table (the original's from `(engine_base,
/// hbm_scratch)`, or a file), the host model keeping `keep` bytes of views.
fn simulate(
    trace: &Path,
    table: &str,
    (engine_base, hbm_scratch): (Option<u64>, Option<u64>),
    keep: Option<u64>,
    format: Format,
) -> Result<u8, Failure> {
    use neuron_translate::model::defaults as d;
    use neuron_translate::model::keep::{views_for, KEEP_DEFAULT};
    let src = trace.display().to_string();
    let text = String::from_utf8(read(trace)?)
        .map_err(|_| Error::new(ErrorKind::MalformedTrace, &src, "not UTF-8 text"))?;
    let events = neuron_translate::model::trace::parse(&text).map_err(|(line, m)| {
        Error::new(ErrorKind::MalformedTrace, &src, format!("line {line}: {m}"))
    })?;
    let (mut t, described) = if table == "original" {
        let inputs = neuron_translate::InitInputs {
            engine_base: engine_base.unwrap_or(d::ENGINE_BASE),
            hbm_scratch: hbm_scratch.unwrap_or(d::HBM_SCRATCH),
        };
        (
            neuron_translate::initial_table(&inputs),
            format!(
                "the original table (ENGINE_BASE_ADDR {:#x}, hbm_scratch {:#x})",
                inputs.engine_base, inputs.hbm_scratch
            ),
        )
    } else {
        if engine_base.is_some() || hbm_scratch.is_some() {
            return Err(Error::new(
                ErrorKind::BadArgument,
                "command line",
                "--engine-base and --hbm-scratch apply to --table original only",
            )
            .into());
        }
        let t = tables::parse_table(&read(Path::new(table))?, table)?;
        (t, table.to_string())
    };
    let views = views_for(keep.unwrap_or(KEEP_DEFAULT));
    let sim = ntx::simulate::replay(&mut t, &events, &src, &described, views);
    match format {
        Format::Text => print!("{}", sim.to_text()),
        Format::Json => println!("{}", pretty(&sim)),
    }
    Ok(u8::from(sim.trapped_at.is_some()))
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| {
        Error::new(
            ErrorKind::Read,
            path.display().to_string(),
            format!("cannot read: {e}"),
        )
    })
}
