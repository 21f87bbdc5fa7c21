//! `--profile DIR`: the op's profile over its cores (each core's from
//! [`crate::run::device::profile`]) written to DIR: `profile.json` (instructions by source
//! line, by function, by call stack; the lines sum to `--stats`'s `instructions`),
//! `profile.txt` (the source files with each line's instructions beside it) and
//! `profile.svg` (a flame graph of the call stacks, by the `inferno` crate).

use std::fmt::Write as _;
use std::path::Path;

use crate::base::codes::ExitStatus;
use crate::run::device::profile::Profile;
use crate::run::error::{ProfileError, ProfileFolder, RunError};
use crate::run::options::Options;
use crate::run::report::CoreReport;

/// Writes the profile `--profile` asked for (nothing without it): [`ExitStatus::Ran`], or
/// [`ExitStatus::Refused`] with the reason on stderr when a core's profile is not known or
/// DIR cannot take it.
pub fn write(o: &Options, cores: &[CoreReport]) -> ExitStatus {
    let Some(dir) = &o.profile else {
        return ExitStatus::Ran;
    };
    let mut each = Vec::new();
    for r in cores {
        match &r.profile {
            Some(Ok(p)) => each.push(p.clone()),
            Some(Err(why)) => return refused(dir, &format!("core {}: {why}", r.core)),
            None => return refused(dir, &format!("core {} ran without a profile", r.core)),
        }
    }
    let p = Profile::merged(&each);
    match write_files(dir, &o.op, &p) {
        Ok(()) => ExitStatus::Ran,
        Err(why) => refused(dir, &why.to_string()),
    }
}

/// Checks, before anything runs, that `--profile DIR` can take the profile: DIR is a
/// folder (made if missing, its parents too) in which a file can be made. A file, a device
/// such as `/dev/null`, a link to nothing or a folder that cannot be written is refused,
/// with the reason.
pub fn check_folder(dir: &Path) -> Result<(), RunError> {
    let d = || dir.to_path_buf();
    let refuse = RunError::ProfileFolder;
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(refuse(ProfileFolder::NotAFolder { dir: d() })),
        // Something is there that cannot be followed: a link to nothing, most often.
        Err(e) if std::fs::symlink_metadata(dir).is_ok() => {
            return Err(refuse(if e.kind() == std::io::ErrorKind::NotFound {
                ProfileFolder::Dangling { dir: d() }
            } else {
                ProfileFolder::Unreadable {
                    dir: d(),
                    why: e.to_string(),
                }
            }));
        }
        Err(_) => std::fs::create_dir_all(dir).map_err(|e| {
            refuse(ProfileFolder::CannotMake {
                dir: d(),
                why: e.to_string(),
            })
        })?,
    }
    crate::base::limits::try_write_beside(&dir.join("profile.json"))
        .ok_or_else(|| refuse(ProfileFolder::NoName { dir: d() }))?
        .map_err(|e| {
            refuse(ProfileFolder::Unwritable {
                dir: d(),
                why: e.to_string(),
            })
        })
}

fn refused(dir: &Path, why: &str) -> ExitStatus {
    eprintln!("error: --profile {}: {why}", dir.display());
    ExitStatus::Refused
}

fn write_files(dir: &Path, op: &str, p: &Profile) -> Result<(), RunError> {
    let at = |name: &str| dir.join(name);
    let io = |name: &str, e: std::io::Error| {
        RunError::Profile(ProfileError::Write {
            file: name.into(),
            why: e.to_string(),
        })
    };
    std::fs::create_dir_all(dir).map_err(|e| io("the folder", e))?;
    let doc = serde_json::json!({
        "schema": "neuron-customop-host-profile/2",
        "op": op,
        "instructions": p.instructions,
        "sdk": p.sdk,
        "functions": p.functions,
        "lines": p.lines,
        "stacks": p.stacks.iter().map(|(s, n)| serde_json::json!({"stack": s, "instructions": n})).collect::<Vec<_>>(),
    });
    let json = serde_json::to_string_pretty(&doc).expect("a profile serializes");
    std::fs::write(at("profile.json"), json + "\n").map_err(|e| io("profile.json", e))?;
    std::fs::write(at("profile.txt"), listing(op, p)).map_err(|e| io("profile.txt", e))?;
    let svg = flame_graph(op, p)?;
    std::fs::write(at("profile.svg"), svg).map_err(|e| io("profile.svg", e))
}

/// The files of `p`'s lines that are (or are not) the author's, most attributed (or
/// most instructions on them) first.
fn files(p: &Profile, author: bool) -> Vec<(&str, u64)> {
    let mut files: Vec<(&str, u64)> = Vec::new();
    for l in p.lines.iter().filter(|l| l.author == author) {
        let n = if author { l.attributed } else { l.own };
        match files.iter_mut().find(|f| f.0 == l.file) {
            Some(f) => f.1 += n,
            None => files.push((&l.file, n)),
        }
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.1));
    files
}

/// The listing: the author's files first, every line of each with its counts; then the
/// SDK's share in one line, and its files' counted lines below it.
fn listing(op: &str, p: &Profile) -> String {
    let total = p.instructions.max(1) as f64;
    let mut out = format!(
        "op {op}: {} instructions on the emulated Q7, by source line. Columns: attributed \
         (the line is the innermost of the author's the instruction ran under), inclusive \
         (the line ran it, itself or through its calls), self (on the line), line.\n",
        p.instructions
    );
    out.push_str(crate::run::stats::COUNTS_ARE);
    out.push('\n');
    top_lines(&mut out, p, total);
    for (file, n) in files(p, true) {
        let _ = writeln!(
            out,
            "\n== {file}: {n} instructions ({:.1}%)",
            100.0 * n as f64 / total
        );
        file_lines(&mut out, p, file, true);
    }
    let _ = writeln!(
        out,
        "\n== the SDK, the C library and the compiler runtime, under no author line: {} \
         instructions ({:.1}%); their lines follow",
        p.sdk,
        100.0 * p.sdk as f64 / total
    );
    for (file, n) in files(p, false) {
        // The main ntx writes for the program sits in its temporary build folder.
        let shown = if file.ends_with("ntx-op-main.cpp") {
            "the main ntx writes for the op's program"
        } else {
            file
        };
        let _ = writeln!(out, "\n-- {shown}: {n} instructions on its lines");
        file_lines(&mut out, p, file, false);
    }
    out
}

/// How many of the author's lines the listing's summary names.
const TOP_LINES: usize = 10;

/// The summary the listing opens with: the author's lines that ran the most instructions,
/// themselves or through their calls, most first (ties in file and line order), at most
/// [`TOP_LINES`].
fn top_lines(out: &mut String, p: &Profile, total: f64) {
    let mut lines: Vec<&crate::run::device::profile::Line> = p
        .lines
        .iter()
        .filter(|l| l.author && l.line > 0 && l.inclusive > 0)
        .collect();
    lines.sort_by(|a, b| {
        (std::cmp::Reverse(a.inclusive), &a.file, a.line).cmp(&(
            std::cmp::Reverse(b.inclusive),
            &b.file,
            b.line,
        ))
    });
    let _ = writeln!(
        out,
        "\nThe author's lines that ran the most (inclusive, at most {TOP_LINES}):"
    );
    for l in lines.iter().take(TOP_LINES) {
        // The line's source, where the file can be read; else its function.
        let text = std::fs::read_to_string(&l.file)
            .ok()
            .and_then(|t| Some(t.lines().nth(l.line as usize - 1)?.trim().to_string()))
            .unwrap_or_else(|| l.function.clone());
        let _ = writeln!(
            out,
            "{:>10} {:>5.1}%  {}:{}  {text}",
            l.inclusive,
            100.0 * l.inclusive as f64 / total,
            l.file,
            l.line,
        );
    }
}

/// `file`'s lines: each line of the source (`whole`, when it can be read) or the counted
/// ones, with their counts.
fn file_lines(out: &mut String, p: &Profile, file: &str, whole: bool) {
    let here: Vec<&crate::run::device::profile::Line> =
        p.lines.iter().filter(|l| l.file == file).collect();
    let row = |l: &crate::run::device::profile::Line| {
        format!("{:>10} {:>10} {:>10}", l.attributed, l.inclusive, l.own)
    };
    for l in here.iter().filter(|l| l.line == 0) {
        let _ = writeln!(
            out,
            "{}      0  (code no line was given: {})",
            row(l),
            l.function
        );
    }
    let text = whole.then(|| std::fs::read_to_string(file).ok()).flatten();
    match text {
        Some(text) => {
            for (k, src) in text.lines().enumerate() {
                let n = k as u64 + 1;
                let counts = here
                    .iter()
                    .find(|l| l.line == n)
                    .map_or_else(|| " ".repeat(32), |l| row(l));
                let _ = writeln!(out, "{counts} {n:>6}  {src}");
            }
        }
        None => {
            let mut counted: Vec<&&crate::run::device::profile::Line> =
                here.iter().filter(|l| l.line > 0).collect();
            counted.sort_by_key(|l| l.line);
            for l in counted {
                let _ = writeln!(out, "{} {:>6}  {}", row(l), l.line, l.function);
            }
        }
    }
}

fn flame_graph(op: &str, p: &Profile) -> Result<Vec<u8>, RunError> {
    let lines: Vec<String> = p
        .stacks
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(s, n)| format!("{s} {n}"))
        .collect();
    let mut options = inferno::flamegraph::Options::default();
    options.title = format!("op {op}: instructions on the emulated Q7");
    options.subtitle =
        Some("instructions retired on the Q7's scalar ISA, not cycles (docs/q7-isa.md)".into());
    options.count_name = "instructions".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| RunError::Profile(ProfileError::FlameGraph(e.to_string())))?;
    Ok(svg)
}
