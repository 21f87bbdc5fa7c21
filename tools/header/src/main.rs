//! `nt-header [--check | --out PATH]`: the C header this version of the library generates.
//! Without options it writes the committed copy, include/neuron_translate.h (`make
//! header`); `--check` fails when that copy is stale (`make header-check`, in `make test`);
//! `--out` writes it elsewhere (`make` puts it in dist/include/).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// The committed copy, relative to the repository root.
const COMMITTED: &str = "include/neuron_translate.h";

/// Writes or checks the C header.
#[derive(Parser, Debug)]
#[command(name = "nt-header")]
struct Args {
    /// Do not write: exit 1 when the committed header is stale.
    #[arg(long, conflicts_with = "out")]
    check: bool,
    /// Write the header here instead of the committed copy.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let generated = match nt_header::generate() {
        Ok(text) => text,
        Err(e) => {
            eprintln!("cannot generate the header: {e}");
            return ExitCode::from(2);
        }
    };
    let (path, shown) = match &args.out {
        Some(p) => (p.clone(), p.display().to_string()),
        None => (nt_header::root().join(COMMITTED), COMMITTED.to_string()),
    };
    if args.check {
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed == generated {
            println!("{shown} is current");
            return ExitCode::SUCCESS;
        }
        eprintln!("{shown} is stale: run `make header` and commit the result");
        return ExitCode::from(1);
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    match std::fs::write(&path, generated) {
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
