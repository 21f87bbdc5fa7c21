//! `nt-header [--check | --out PATH]`: the C headers this version generates, the library's
//! and the custom-op SDK runtime's. Without options it writes the committed copies,
//! include/neuron_translate.h and sdk/include/neuron_customop_host/runtime.h (`make
//! header`); `--check` fails when either copy is stale (`make header-check`, in `make
//! test`); `--out` writes the library's elsewhere (`make` puts it in dist/include/).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use nt_header::runtime;

/// The committed copy, relative to the repository root.
const COMMITTED: &str = "include/neuron_translate.h";

/// Writes or checks the C header.
#[derive(Parser, Debug)]
#[command(name = "nt-header")]
struct Args {
    /// Do not write: exit 1 when the committed header is stale.
    #[arg(long, conflicts_with = "out")]
    check: bool,
    /// Write the library's header here instead of the committed copies.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let root = nt_header::root();
    let generated = nt_header::generate()
        .map(|t| (COMMITTED, t))
        .and_then(|l| Ok([l, (runtime::COMMITTED, runtime::generate(&root)?)]));
    let generated = match generated {
        Ok(both) => both,
        Err(e) => {
            eprintln!("cannot generate the header: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(out) = &args.out {
        return write(out, &out.display().to_string(), &generated[0].1);
    }
    let mut status = ExitCode::SUCCESS;
    for (committed, text) in &generated {
        let path = root.join(committed);
        let done = if args.check {
            check(&path, committed, text)
        } else {
            write(&path, committed, text)
        };
        if done != ExitCode::SUCCESS {
            status = done;
        }
    }
    status
}

/// Whether the copy at `path` is `generated`.
fn check(path: &Path, shown: &str, generated: &str) -> ExitCode {
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    if committed == generated {
        println!("{shown} is current");
        return ExitCode::SUCCESS;
    }
    eprintln!("{shown} is stale: run `make header` and commit the result");
    ExitCode::from(1)
}

/// Writes `generated` to `path`.
fn write(path: &Path, shown: &str, generated: &str) -> ExitCode {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(path, generated) {
        Ok(()) => {
            println!("wrote {shown}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("cannot write {shown}: {e}");
            ExitCode::from(2)
        }
    }
}
