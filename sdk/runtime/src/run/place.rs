//! Where in the author's sources a report happened. A core sees a program counter or a
//! stack (innermost first); the runner maps each address to its file and line with
//! addr2line (the runner and its children share the program's mapping), inlined calls
//! included, and walks past the C library's, the compiler runtime's, the C++ library's
//! and the SDK's own frames to the innermost line of the author's sources. The report's
//! words name that line; its `stack` (in `--stats=json`) keeps the whole chain.

use std::collections::HashMap;

use crate::base::misuse::{At, Report};

/// The SDK's own sources, as a place names them (besides the runtime's Rust, any `.rs`
/// file): the headers a kernel includes (sdk/include) and the library's (include/), which
/// a kernel's call into the SDK passes through; on the device, its C runtime (sdk/device),
/// its C++ library's headers and the `main` ntx writes for the program; the runtime's own
/// C (its weak handlers).
const SDK_SOURCES: &[&str] = &[
    "neuron_translate.h",
    "neuron_customop_device/",
    "/sdk/device/",
    "/sdk/runtime/src/",
    "ntx-op-main.cpp",
    "neuron_customop_host/",
    "torchneuron/register.h",
    "torch/torch.h",
    "neuron/neuron-utils.hpp",
    "c10/",
];

/// The system's sources: the C and C++ libraries' headers and the C library's own files
/// (its line table names them from its build folder, `./string/...`).
const SYSTEM_SOURCES: &[&str] = &["/usr/include/", "/usr/lib/", "/usr/local/include/", "./"];

/// Whether `file` is one of the author's sources: in no file of the SDK's or the system's,
/// and a file (not `??` or `(no line table)`).
pub fn authors_file(file: &str) -> bool {
    let named = !file.is_empty() && file != "??" && !file.starts_with('(');
    named
        && !file.ends_with(".rs")
        && !SDK_SOURCES.iter().any(|s| file.contains(s))
        && !SYSTEM_SOURCES.iter().any(|s| file.starts_with(s))
}

/// One frame of a stack, an inlined call counting as a frame of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The function (demangled), `??` where nothing names it.
    pub function: String,
    /// `file:line`, `??:0` where the line table has none.
    pub at: String,
    /// Whether it is in the program itself (not a shared library).
    pub in_program: bool,
}

impl Frame {
    /// Whether the line table knew its line: `file:N` (`N (discriminator D)` too).
    fn known(&self) -> bool {
        self.at.rsplit_once(':').is_some_and(|(file, line)| {
            let n = line.split(' ').next().and_then(|n| n.parse::<u32>().ok());
            !file.is_empty() && file != "??" && n.is_some_and(|n| n > 0)
        })
    }

    /// Whether it is a line of the author's sources: the program's, with a line, in one
    /// of [`authors_file`]'s files.
    pub fn authors(&self) -> bool {
        let file = self.at.rsplit_once(':').map_or("", |(f, _)| f);
        self.in_program && self.known() && authors_file(file)
    }

    /// `function (file:line)`, or what is known of it.
    pub fn shown(&self) -> String {
        if self.known() {
            format!("{} ({})", self.function, self.at)
        } else {
            format!("{} (no line)", self.function)
        }
    }
}

/// This process's memory map (`/proc/self/maps`).
fn maps() -> String {
    std::fs::read_to_string("/proc/self/maps").unwrap_or_default()
}

/// The file `maps` shows mapped at `pc`, and `pc`'s offset in it.
fn mapping_in(maps: &str, pc: u64) -> Option<(u64, String)> {
    maps.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        let (lo, hi) = f.first()?.split_once('-')?;
        let (lo, hi) = (
            u64::from_str_radix(lo, 16).ok()?,
            u64::from_str_radix(hi, 16).ok()?,
        );
        let offset = u64::from_str_radix(f.get(2)?, 16).ok()?;
        let path = f.get(5).filter(|p| p.starts_with('/'))?;
        (lo..hi)
            .contains(&pc)
            .then(|| (pc - lo + offset, path.to_string()))
    })
}

/// addr2line's frames (inlined calls first) for each of `addresses` in the file at
/// `path`, in their order: one run of addr2line per file.
fn addr2line(path: &str, addresses: &[u64]) -> Vec<Vec<(String, String)>> {
    let args: Vec<String> = addresses.iter().map(|a| format!("{a:#x}")).collect();
    let out = std::process::Command::new("addr2line")
        .args(["-a", "-f", "-C", "-i", "-e", path])
        .args(&args)
        .output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    // Each address: its own line (0x...), then function and place pairs.
    let mut each: Vec<Vec<(String, String)>> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(l) = lines.next() {
        if l.starts_with("0x") {
            each.push(Vec::new());
            continue;
        }
        let (Some(frames), Some(at)) = (each.last_mut(), lines.next()) else {
            break;
        };
        frames.push((l.to_string(), at.to_string()));
    }
    each.resize_with(addresses.len(), Vec::new);
    each
}

/// The frames of `stack` (innermost first; the first address exact, the others return
/// addresses), inlined calls included, innermost first.
pub fn frames(stack: &[u64]) -> Vec<Frame> {
    let maps = maps();
    let exe = std::fs::read_link("/proc/self/exe")
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    // A caller's frame holds a return address: the call is the instruction before it.
    let at: Vec<Option<(u64, String)>> = stack
        .iter()
        .enumerate()
        .map(|(k, &pc)| mapping_in(&maps, if k == 0 { pc } else { pc.saturating_sub(1) }))
        .collect();
    let mut by_file: HashMap<&str, Vec<u64>> = HashMap::new();
    for (address, path) in at.iter().flatten() {
        by_file.entry(path).or_default().push(*address);
    }
    let mut placed: HashMap<(&str, u64), Vec<(String, String)>> = HashMap::new();
    for (path, addresses) in &by_file {
        for (a, f) in addresses.iter().zip(addr2line(path, addresses)) {
            placed.insert((path, *a), f);
        }
    }
    let mut out = Vec::new();
    for (k, m) in at.iter().enumerate() {
        let Some((address, path)) = m else {
            out.push(Frame {
                function: format!("pc {:#x}", stack[k]),
                at: "??:0".into(),
                in_program: false,
            });
            continue;
        };
        let found = placed.get(&(path.as_str(), *address)).cloned();
        let found = found.filter(|f| !f.is_empty()).unwrap_or_else(|| {
            let lib = path.rsplit('/').next().unwrap_or(path);
            vec![(format!("pc {:#x} in {lib}", stack[k]), "??:0".into())]
        });
        out.extend(found.into_iter().map(|(function, at)| Frame {
            function,
            at,
            in_program: *path == exe,
        }));
    }
    out
}

/// Where `stack` was in the author's terms: the innermost frame of the author's sources
/// (else the innermost frame with a line, else the innermost), and the chain up to the
/// outermost frame of the author's (the frames that called the kernel, which differ
/// between the runner and the server, left out), or the whole chain where it has none.
pub fn author_place(stack: &[u64]) -> (String, Vec<String>) {
    let frames = frames(stack);
    let chosen = frames
        .iter()
        .find(|f| f.authors())
        .or_else(|| frames.iter().find(|f| f.known()))
        .or(frames.first());
    let place = chosen.map_or_else(|| "a place not known".into(), Frame::shown);
    let chain = match frames.iter().rposition(Frame::authors) {
        Some(last) => &frames[..=last],
        None => &frames[..],
    };
    (place, chain.iter().map(Frame::shown).collect())
}

/// `pc` (a call's address) in the author's terms, for a report's words.
pub fn place(pc: u64) -> String {
    author_place(&[pc]).0
}

/// A core's report with its place put into its words (`, at function (file:line)`) and
/// its stack kept whole.
pub fn place_report(r: &mut Report) {
    let Some(At::Calls(stack)) = r.at.take() else {
        return;
    };
    let (place, chain) = author_place(&stack);
    r.detail += &format!(", at {place}");
    r.stack = chain;
}
