//! `ntx`: tells whether an object is a drop-in for the original `translation.o`, and swaps
//! it into a vendor archive.
//!
//! Exit status: 0 no break, 1 a break (or a refused relink), 2 a usage, I/O or parse error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use ntx::error::{Error, ErrorKind};
use ntx::{archive, diff, load, load_bytes, tables};

#[derive(Parser, Debug)]
#[command(name = "ntx", version, about = "neuron-translate ABI tools")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compare a candidate object's ABI against a reference (ELF, archive or manifest).
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
        format: Format,
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
    /// Build a table image from a TOML spec, refusing tables the device would misuse.
    Build {
        /// The spec (see abi-tests/README.md).
        spec: PathBuf,
        /// Where to write the 168-byte image.
        #[arg(short = 'o', long = "out")]
        out: PathBuf,
    },
    /// Replace a member of a vendor archive with an object, after checking its ABI.
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
    },
}

enum Failure {
    /// Exit 1, with a message.
    Refused(String),
    /// Exit 2.
    Input(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Input(e)
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli.command) {
        Ok(code) => ExitCode::from(code),
        Err(Failure::Refused(m)) => {
            eprintln!("ntx: {m}");
            ExitCode::from(1)
        }
        Err(Failure::Input(e)) => {
            eprintln!("ntx: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<u8, Failure> {
    match command {
        Command::AbiDiff {
            reference,
            candidate,
            member,
            format,
        } => {
            let r = load(&reference, &member)?;
            let c = load(&candidate, &member)?;
            diff::comparable(&r, &c).map_err(|m| {
                Error::new(ErrorKind::NotComparable, candidate.display().to_string(), m)
            })?;
            let report = diff::diff(&r, &c);
            match format {
                Format::Text => print!("{}", report.to_text()),
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&report).map_err(|e| Error::new(
                        ErrorKind::Write,
                        "-",
                        e.to_string()
                    ))?
                ),
            }
            Ok(if report.compatible() { 0 } else { 1 })
        }
        Command::Relink {
            archive: vendor,
            object,
            out,
            member,
            force,
        } => relink(&vendor, &object, &out, &member, force),
        Command::Explain { table, format } => {
            let data = read(&table)?;
            print!(
                "{}",
                tables::explain(
                    &data,
                    &table.display().to_string(),
                    matches!(format, Format::Json)
                )?
            );
            Ok(0)
        }
        Command::Translate { table, addrs } => {
            let src = table.display().to_string();
            let mut t = tables::parse_table(&read(&table)?, &src)?;
            let mut parsed = Vec::new();
            for a in &addrs {
                parsed.push(tables::parse_u64(a).ok_or_else(|| {
                    Error::new(
                        ErrorKind::BadArgument,
                        "command line",
                        format!("{a:?} is not an address"),
                    )
                })?);
            }
            print!("{}", tables::translate(&mut t, &parsed));
            Ok(0)
        }
        Command::Build { spec, out } => {
            let src = spec.display().to_string();
            let text = String::from_utf8(read(&spec)?)
                .map_err(|_| Error::new(ErrorKind::BadSpec, &src, "not UTF-8 text"))?;
            let image = tables::build(&text, &src)?;
            let o = out.display().to_string();
            std::fs::write(&out, image)
                .map_err(|e| Error::new(ErrorKind::Write, o, format!("cannot write: {e}")))?;
            println!("wrote {} ({} bytes)", out.display(), image.len());
            Ok(0)
        }
    }
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

fn relink(
    vendor: &Path,
    object: &Path,
    out: &Path,
    member: &str,
    force: bool,
) -> Result<u8, Failure> {
    let vsrc = vendor.display().to_string();
    if same_file(vendor, out) {
        return Err(Error::new(
            ErrorKind::BadArgument,
            out.display().to_string(),
            "--out is the vendor archive itself; it is never overwritten",
        )
        .into());
    }
    let vdata = read(vendor)?;
    let mut members = archive::read_members(&vdata, &vsrc)?;
    let index = members
        .iter()
        .position(|m| m.name == member.as_bytes())
        .ok_or_else(|| archive::member(&members, member, &vsrc).unwrap_err())?;
    let odata = read(object)?;
    let osrc = object.display().to_string();
    let reference = load_bytes(&members[index].data, &format!("{vsrc}({member})"), member)?;
    let candidate = ntx::model::from_elf(&odata, &osrc)?;
    diff::comparable(&reference, &candidate)
        .map_err(|m| Error::new(ErrorKind::NotComparable, &osrc, m))?;
    let mut report = diff::diff(&reference, &candidate);
    // The other members, as the linker will see them: what they import from the member
    // being replaced must still be there. Members that are not ELF objects are skipped.
    let others: Vec<(String, ntx::model::AbiModel)> = members
        .iter()
        .enumerate()
        .filter(|(i, m)| *i != index && m.data.starts_with(b"\x7fELF"))
        .map(|(_, m)| {
            let name = String::from_utf8_lossy(&m.name).into_owned();
            let model = ntx::model::from_elf(&m.data, &format!("{vsrc}({name})"))?;
            Ok((name, model))
        })
        .collect::<Result<_, Error>>()?;
    report.extend(diff::unresolved_consumers(&others, &reference, &candidate));
    print!("{}", report.to_text());
    if !report.compatible() && !force {
        return Err(Failure::Refused(format!(
            "refusing to relink: {} break(s) against {vsrc}({member}); --force to relink anyway",
            report.breaks
        )));
    }
    members[index].data = odata;
    members[index].date = 0;
    members[index].uid = 0;
    members[index].gid = 0;
    members[index].mode = 0o644;
    let bytes = archive::write_gnu(&members);
    // Write next to the destination, then rename: a failed write leaves nothing half-done.
    let tmp = out.with_extension("ntx-tmp");
    let osrc_out = out.display().to_string();
    std::fs::write(&tmp, &bytes)
        .map_err(|e| Error::new(ErrorKind::Write, &osrc_out, format!("cannot write: {e}")))?;
    std::fs::rename(&tmp, out).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::new(ErrorKind::Write, &osrc_out, format!("cannot write: {e}"))
    })?;
    println!(
        "wrote {} ({} members, {member} replaced)",
        out.display(),
        members.len()
    );
    Ok(if report.compatible() { 0 } else { 1 })
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
