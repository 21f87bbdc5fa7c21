//! The repository's layout rules (docs/architecture.md), checked: every source file reads
//! in one sitting (600 lines at most), every Rust function fits on a screen (80 lines at
//! most, from its `fn` line to its closing brace: stricter than clippy's count of code
//! lines), nothing in `src/` below the ABI layer names the host model, every top-level
//! folder is in the architecture page, and the README stays short.

use std::path::{Path, PathBuf};

use nt_support::root;

/// The longest source file, in lines.
const FILE_LINES: usize = 600;
/// The longest Rust function, in lines.
const FN_LINES: usize = 80;
/// The longest README, in lines.
const README_LINES: usize = 250;

/// Folders that hold no sources of ours: build outputs, fuzz corpora and findings, golden
/// outputs, caches.
const SKIP: &[&str] = &[
    ".git",
    "target",
    "dist",
    "corpus",
    "artifacts",
    "golden",
    "__pycache__",
];

/// Endings (or names) of the files the length rule holds to.
fn is_source(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
    name == "Makefile"
        || [
            "rs", "py", "c", "cpp", "h", "hpp", "S", "s", "sh", "in", "cmake", "txt",
        ]
        .contains(&ext)
            && !name.ends_with(".lock")
}

/// What git ignores in the checkout (`.gitignore`: the builds, and what the docs' quick
/// starts write in the top folder, such as a `venv/`), as paths; none where git cannot say.
fn ignored() -> Vec<PathBuf> {
    let root = root();
    let out = std::process::Command::new("git")
        .args([
            "ls-files",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ])
        .current_dir(&root)
        .output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    text.lines()
        .map(|l| root.join(l.trim_end_matches('/')))
        .collect()
}

/// Every source file below `dir` but those git ignores, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let skipped = ignored();
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if skipped.contains(&p) {
                continue;
            }
            if p.is_dir() {
                if !SKIP.contains(&name.as_str()) {
                    stack.push(p);
                }
            } else if is_source(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect()
}

/// The Rust functions of `text` longer than [`FN_LINES`]: (first line, length, name). A
/// function runs from its `fn` line to the first line that is its indentation and `}`;
/// a declaration (an extern item, a trait method without a body) has none.
fn long_functions(text: &[String]) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    for (i, l) in text.iter().enumerate() {
        let t = l.trim_start();
        let indent = &l[..l.len() - t.len()];
        let Some(pos) = t.find("fn ") else { continue };
        let head = &t[..pos];
        let is_item = head.split_whitespace().all(|w| {
            [
                "pub",
                "pub(crate)",
                "pub(super)",
                "const",
                "unsafe",
                "async",
                "extern",
                "\"C\"",
            ]
            .contains(&w)
        });
        if !is_item || t.starts_with("//") {
            continue;
        }
        let Some(sig_end) = (i..text.len()).find(|&k| {
            let e = text[k].trim_end();
            e.ends_with('{') || e.ends_with(';')
        }) else {
            continue;
        };
        if text[sig_end].trim_end().ends_with(';') {
            continue;
        }
        let close = format!("{indent}}}");
        if let Some(end) = (sig_end..text.len()).find(|&k| text[k].trim_end() == close) {
            let n = end - i + 1;
            if n > FN_LINES {
                let name = t[pos + 3..]
                    .split(['(', '<'])
                    .next()
                    .unwrap_or("")
                    .to_string();
                out.push((i + 1, n, name));
            }
        }
    }
    out
}

#[test]
fn no_source_file_is_over_600_lines_and_no_rust_function_over_80() {
    let root = root();
    let mut over = Vec::new();
    for p in sources(&root) {
        let text = lines(&p);
        let rel = p.strip_prefix(&root).unwrap().display().to_string();
        if text.len() > FILE_LINES {
            over.push(format!("{rel}: {} lines", text.len()));
        }
        if p.extension().is_some_and(|e| e == "rs") {
            for (line, n, name) in long_functions(&text) {
                over.push(format!("{rel}:{line}: fn {name} is {n} lines"));
            }
        }
    }
    assert!(over.is_empty(), "too long:\n{}", over.join("\n"));
}

#[test]
fn the_length_check_finds_a_long_function_and_skips_declarations() {
    let body: Vec<String> = std::iter::once("pub fn long() {".to_string())
        .chain((0..FN_LINES).map(|_| "    step();".to_string()))
        .chain([
            "}".to_string(),
            "extern \"C\" {".into(),
            "    fn decl(".into(),
        ])
        .chain([
            "        a: u64,".to_string(),
            "    ) -> u64;".into(),
            "}".into(),
        ])
        .collect();
    assert_eq!(
        long_functions(&body),
        vec![(1, FN_LINES + 2, "long".into())]
    );
}

#[test]
fn below_the_abi_layer_nothing_names_the_host_model() {
    let root = root();
    let src = root.join("src");
    let mut named = Vec::new();
    for p in sources(&src) {
        let rel = p.strip_prefix(&src).unwrap();
        // The model itself, the ABI layer that plugs it in, and the crate root that
        // declares it.
        if rel.starts_with("model") || rel == Path::new("abi.rs") || rel == Path::new("lib.rs") {
            continue;
        }
        for (i, l) in lines(&p).iter().enumerate() {
            if l.contains("model::") || l.contains("nt_sim") || l.contains("crate::model") {
                named.push(format!("src/{}:{}: {l}", rel.display(), i + 1));
            }
        }
    }
    assert!(named.is_empty(), "{}", named.join("\n"));
}

#[test]
fn every_top_level_folder_is_in_the_architecture_page_and_the_readme_is_short() {
    let root = root();
    let page = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let mut missing = Vec::new();
    let skipped = ignored();
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let ours = !name.starts_with('.')
            && !SKIP.contains(&name.as_str())
            && !skipped.contains(&e.path());
        if e.path().is_dir() && ours && !page.contains(&format!("{name}/")) {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "docs/architecture.md does not place {missing:?}"
    );
    let readme = lines(&root.join("README.md")).len();
    assert!(readme <= README_LINES, "README.md is {readme} lines");
}

#[test]
fn every_ignored_test_says_it_needs_make_test_in_the_same_words() {
    let root = root();
    let want = format!("#[ignore = \"{}\"]", nt_support::MAKE_TEST);
    let mut other = Vec::new();
    let mut ignored = 0;
    for p in sources(&root.join("abi-tests")) {
        for (i, l) in lines(&p).iter().enumerate() {
            if l.trim_start().starts_with("#[ignore") {
                ignored += 1;
                if l.trim() != want {
                    let rel = p.strip_prefix(&root).unwrap().display().to_string();
                    other.push(format!("{rel}:{}: {l}", i + 1));
                }
            }
        }
    }
    assert!(ignored > 40, "the ignored tests were found ({ignored})");
    assert!(other.is_empty(), "other reasons:\n{}", other.join("\n"));
}

#[test]
fn every_property_test_starts_from_the_fixed_seed() {
    let root = root();
    let (mut configs, mut random) = (0, Vec::new());
    // Spelt in two, so that this file does not find itself.
    let needle = ["proptest", "_config("].concat();
    for p in sources(&root) {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        for (i, chunk) in text.split(needle.as_str()).enumerate().skip(1) {
            configs += 1;
            let config = chunk.split(")]").next().unwrap_or("");
            if !config.contains("RngSeed::Fixed(nt_support::PROPTEST_SEED)") {
                let rel = p.strip_prefix(&root).unwrap().display().to_string();
                random.push(format!("{rel}: configuration {i}"));
            }
        }
    }
    assert!(configs >= 3, "the property tests were found ({configs})");
    assert!(random.is_empty(), "a random seed:\n{}", random.join("\n"));
}
