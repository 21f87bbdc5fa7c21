//! `--profile DIR`: the op's profile over its cores (each core's from
//! [`crate::run::device::profile`]) written to DIR: `profile.json` (instructions by source
//! line, by function, by call stack; the lines sum to `--stats`'s `instructions`),
//! `profile.txt` (the source files with each line's instructions beside it) and
//! `profile.svg` (a flame graph of the call stacks, by the `inferno` crate).

use std::fmt::Write as _;
use std::path::Path;

use crate::run::device::profile::Profile;
use crate::run::error::RunError;
use crate::run::options::Options;
use crate::run::report::CoreReport;

/// Writes the profile `--profile` asked for (nothing without it): 0, or
/// [`crate::base::status::EXIT_USAGE`] with the reason on stderr when a core's profile is
/// not known or DIR cannot take it.
pub fn write(o: &Options, cores: &[CoreReport]) -> i32 {
    let Some(dir) = &o.profile else {
        return 0;
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
        Ok(()) => 0,
        Err(why) => refused(dir, &why.to_string()),
    }
}

fn refused(dir: &Path, why: &str) -> i32 {
    eprintln!("error: --profile {}: {why}", dir.display());
    crate::base::status::EXIT_USAGE
}

fn write_files(dir: &Path, op: &str, p: &Profile) -> Result<(), RunError> {
    let at = |name: &str| dir.join(name);
    let io = |name: &str, e: std::io::Error| RunError::Profile(format!("cannot write {name}: {e}"));
    std::fs::create_dir_all(dir).map_err(|e| io("the folder", e))?;
    let doc = serde_json::json!({
        "schema": "neuron-customop-host-profile/1",
        "op": op,
        "instructions": p.instructions,
        "functions": p.functions.iter().map(|(f, n)| serde_json::json!({"function": f, "instructions": n})).collect::<Vec<_>>(),
        "lines": p.lines,
        "stacks": p.stacks.iter().map(|(s, n)| serde_json::json!({"stack": s, "instructions": n})).collect::<Vec<_>>(),
    });
    let json = serde_json::to_string_pretty(&doc).expect("a profile serializes");
    std::fs::write(at("profile.json"), json + "\n").map_err(|e| io("profile.json", e))?;
    std::fs::write(at("profile.txt"), listing(op, p)).map_err(|e| io("profile.txt", e))?;
    let svg = flame_graph(op, p)?;
    std::fs::write(at("profile.svg"), svg).map_err(|e| io("profile.svg", e))
}

/// Each source file with counted lines, hottest first: every line of it (a file that
/// cannot be read, only its counted lines), each with its instructions.
fn listing(op: &str, p: &Profile) -> String {
    let mut files: Vec<(&str, u64)> = Vec::new();
    for l in &p.lines {
        match files.iter_mut().find(|f| f.0 == l.file) {
            Some(f) => f.1 += l.instructions,
            None => files.push((&l.file, l.instructions)),
        }
    }
    files.sort_by_key(|f| std::cmp::Reverse(f.1));
    let mut out = format!(
        "op {op}: {} instructions on the emulated Q7, by source line\n",
        p.instructions
    );
    for (file, total) in files {
        let share = 100.0 * total as f64 / p.instructions.max(1) as f64;
        let _ = writeln!(out, "\n== {file}: {total} instructions ({share:.1}%)");
        let mut counts: Vec<(u64, u64)> = p
            .lines
            .iter()
            .filter(|l| l.file == file)
            .map(|l| (l.line, l.instructions))
            .collect();
        counts.sort_unstable();
        counts.dedup_by(|b, a| {
            let same = a.0 == b.0;
            if same {
                a.1 += b.1;
            }
            same
        });
        let count_of = |line: u64| counts.iter().find(|c| c.0 == line).map(|c| c.1);
        if let Some(n) = count_of(0) {
            let _ = writeln!(
                out,
                "{n:>12}     0  (code the compiler made for no one line)"
            );
        }
        match std::fs::read_to_string(file) {
            Ok(text) => {
                for (k, src) in text.lines().enumerate() {
                    let n = count_of(k as u64 + 1).map_or(String::new(), |n| n.to_string());
                    let _ = writeln!(out, "{n:>12} {:>5}  {src}", k + 1);
                }
            }
            Err(_) => {
                for (line, n) in counts.iter().filter(|c| c.0 > 0) {
                    let _ = writeln!(out, "{n:>12} {line:>5}");
                }
            }
        }
    }
    out
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
    options.count_name = "instructions".into();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| RunError::Profile(format!("the flame graph: {e}")))?;
    Ok(svg)
}
