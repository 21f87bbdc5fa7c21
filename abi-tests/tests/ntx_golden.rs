//! Every output format of `ntx`, whole, against files checked in under `abi-tests/golden/`:
//! `abi-diff` as text, JSON, SARIF and JUnit; `explain` as text and JSON; `translate`;
//! `simulate` as text and JSON; `build`'s refusal. A change in any output shows in review as
//! a change to one of those files.
//!
//! The inputs are committed: the seed-shaped fixture (`abi-tests/fixtures/original.S`) and a
//! mutant of it, the manifest, the table specs and the trace in `abi-tests/golden/`. Each
//! `ntx` runs in a scratch directory on relative paths, so no path of the machine shows.
//!
//! After an intended change, `make golden` rewrites the files (`NT_BLESS=1`); review the diff.

use std::path::{Path, PathBuf};
use std::process::Command;

use nt_support::tools::{product, scratch};

mod common;
use common::{assemble, FIXTURE};

/// The golden files' directory.
fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("golden")
}

/// The fixture with several differences at once: a missing export, a weak one, a new
/// import, an added global and `_sbuf_window` moved.
fn broken_fixture() -> String {
    let edits: &[(&str, &str)] = &[
        ("@MUTATE-TRANSLATE-BINDING", ""),
        (
            "@MUTATE-LOOKUP-BINDING",
            "\t.weak _Z31neuron_translate_mapping_lookupPvyPyS0_",
        ),
        (
            "@MUTATE-EXTRA-TEXT",
            "\t.byte 0,0,0\n\t.reloc .-3, R_XTENSA_SLOT0_OP, memcpy\n\t.global extra\n\t.type extra, @function\nextra:\n\t.byte 0x36,0x41,0\n\t.size extra, 3",
        ),
        ("@MUTATE-SBUF-PAD", "\t.space 12"),
    ];
    let mut lines: Vec<String> = FIXTURE.lines().map(str::to_string).collect();
    for (marker, replacement) in edits {
        let line = lines
            .iter_mut()
            .find(|l| l.contains(marker))
            .unwrap_or_else(|| panic!("no line marked {marker}"));
        *line = replacement.to_string();
    }
    lines.join("\n") + "\n"
}

/// `windows.toml`'s image with problems `explain` reports: slot 3's local base misaligned,
/// slot 2's register zero (a refill there would trap), slot 4 overlapping slot 3.
fn problem_table(dir: &Path) -> PathBuf {
    use neuron_translate::layout::offsets as o;
    let mut image = std::fs::read(dir.join("windows.bin")).unwrap();
    let mut put = |slot: usize, field: usize, value: u64| {
        let at = o::RECORD_ARRAY + slot * o::RECORD_SIZE + field;
        image[at..at + 8].copy_from_slice(&value.to_le_bytes());
    };
    put(3, o::WINDOW, 0x0a00_0100);
    put(2, o::REG_LOCATION, 0);
    put(4, o::PTR, 0x28_0100_0000);
    let path = dir.join("problems.bin");
    std::fs::write(&path, image).unwrap();
    path
}

/// One run of `ntx`: its arguments, the exit status it must give, and the golden file its
/// standard output must equal (its standard error must be empty unless `stderr` names a
/// golden file for it).
struct Case {
    args: Vec<&'static str>,
    code: i32,
    stdout: &'static str,
    stderr: Option<&'static str>,
}

fn case(args: &[&'static str], code: i32, stdout: &'static str) -> Case {
    Case {
        args: args.to_vec(),
        code,
        stdout,
        stderr: None,
    }
}

/// Every format, on the committed inputs.
fn cases() -> Vec<Case> {
    let manifest = [
        "abi-diff",
        "--reference",
        "translation.toml",
        "--candidate",
        "original.o",
    ];
    let broken = [
        "abi-diff",
        "--reference",
        "original.o",
        "--candidate",
        "broken.o",
    ];
    let mut cases = vec![
        case(&manifest, 0, "abi-diff-manifest.txt"),
        case(&broken, 1, "abi-diff-broken.txt"),
    ];
    for (format, golden) in [
        ("json", "abi-diff-broken.json"),
        ("sarif", "abi-diff-broken.sarif"),
        ("junit", "abi-diff-broken.xml"),
    ] {
        cases.push(case(
            &[&broken[..], &["--format", format]].concat(),
            1,
            golden,
        ));
    }
    cases.extend(table_cases());
    cases
}

/// The table commands' cases: explain, translate, simulate, build.
fn table_cases() -> Vec<Case> {
    let translate = ["translate", "windows.bin", "0x4000000010", "0x5000000000"];
    vec![
        case(&["explain", "windows.bin"], 0, "explain-windows.txt"),
        case(
            &["explain", "windows.bin", "--format", "json"],
            0,
            "explain-windows.json",
        ),
        case(&["explain", "original.bin"], 0, "explain-original.txt"),
        case(&["explain", "problems.bin"], 0, "explain-problems.txt"),
        case(
            &["explain", "problems.bin", "--format", "json"],
            0,
            "explain-problems.json",
        ),
        case(
            &[
                &translate[..],
                &["0x6000000000", "0x7000000000", "0x2801000008"],
            ]
            .concat(),
            0,
            "translate-windows.txt",
        ),
        case(
            &["simulate", "stream.trace", "--table", "windows.bin"],
            0,
            "simulate-windows.txt",
        ),
        case(
            &[
                "simulate",
                "stream.trace",
                "--table",
                "windows.bin",
                "--format",
                "json",
            ],
            0,
            "simulate-windows.json",
        ),
        case(&["simulate", "stream.trace"], 0, "simulate-original.txt"),
        Case {
            stderr: Some("build-refused.stderr"),
            ..case(
                &["build", "problems.toml", "-o", "refused.bin"],
                2,
                "build-refused.txt",
            )
        },
    ]
}

/// A spec `build` refuses, for its error output.
const REFUSED_SPEC: &str = "next_alloc = 7\n[[window]]\nslot = 0\nkind = \"pinned\"\nlocal_base = 0x7000001\nsize = 0x1000000\nreg_location = 0x100219\n";

/// The scratch directory with every input under the name the cases use.
fn inputs() -> PathBuf {
    let dir = scratch("ntx_golden");
    let golden = golden_dir();
    for f in ["windows.toml", "original.toml", "stream.trace"] {
        std::fs::copy(golden.join(f), dir.join(f)).unwrap();
    }
    std::fs::copy(product("NT_MANIFEST"), dir.join("translation.toml")).unwrap();
    std::fs::write(dir.join("problems.toml"), REFUSED_SPEC).unwrap();
    assemble(&dir, "original", FIXTURE);
    assemble(&dir, "broken", &broken_fixture());
    for spec in ["windows", "original"] {
        let out = ntx_in(
            &dir,
            &[
                "build",
                &format!("{spec}.toml"),
                "-o",
                &format!("{spec}.bin"),
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    problem_table(&dir);
    dir
}

fn ntx_in(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(product("NT_NTX"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run ntx")
}

/// `text` against the golden file `name`: equal, or (with `NT_BLESS` set) written. Returns
/// a description of the difference.
fn check(name: &str, text: &str) -> Option<String> {
    let path = golden_dir().join(name);
    if std::env::var_os("NT_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return None;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    if want == text {
        return None;
    }
    let line = want
        .lines()
        .zip(text.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(want.lines().count().min(text.lines().count()));
    Some(format!(
        "{name} differs from line {}:\n--- golden\n{}\n--- now\n{}",
        line + 1,
        want.lines()
            .skip(line)
            .take(5)
            .collect::<Vec<_>>()
            .join("\n"),
        text.lines()
            .skip(line)
            .take(5)
            .collect::<Vec<_>>()
            .join("\n"),
    ))
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn every_output_format_equals_its_golden_file() {
    let dir = inputs();
    let mut problems = Vec::new();
    let cases = cases();
    for c in &cases {
        let out = ntx_in(&dir, &c.args);
        let stdout = String::from_utf8(out.stdout).unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        if out.status.code() != Some(c.code) {
            problems.push(format!(
                "ntx {:?}: exit {:?}, not {}\n{stderr}",
                c.args,
                out.status.code(),
                c.code
            ));
        }
        problems.extend(check(c.stdout, &stdout));
        match c.stderr {
            Some(name) => problems.extend(check(name, &stderr)),
            None if !stderr.is_empty() => {
                problems.push(format!("ntx {:?} wrote to stderr:\n{stderr}", c.args))
            }
            None => {}
        }
    }
    // Every golden file is some case's: none is left behind when a case goes.
    let mut named: Vec<&str> = cases
        .iter()
        .flat_map(|c| [Some(c.stdout), c.stderr])
        .flatten()
        .collect();
    named.extend(["windows.toml", "original.toml", "stream.trace"]);
    for entry in std::fs::read_dir(golden_dir()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !named.contains(&name.as_str()) {
            problems.push(format!("abi-tests/golden/{name} belongs to no case"));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n\nIf the change is intended: `make golden`, then review the diff.",
        problems.join("\n\n")
    );
}
