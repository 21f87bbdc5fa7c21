//! `nt-header [--check | --out PATH]`: the files this version generates: the library's C
//! header, and the custom-op SDK's runtime.h, the device's protocol.h and the Python
//! package's `_abi.py`. Without options it writes the committed copies (`make header`);
//! `--check` fails when a copy is stale (`make header-check`, in `make test`); `--out`
//! writes the library's header elsewhere (`make` puts it in dist/include/).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use nt_header::{codes, runtime};

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
    let generated = nt_header::generate().and_then(|library| {
        Ok([
            (COMMITTED, library),
            (runtime::COMMITTED, runtime::generate(&root)?),
            (codes::PROTOCOL_H, codes::protocol_h()),
            (codes::PYTHON, codes::python()),
        ])
    });
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
