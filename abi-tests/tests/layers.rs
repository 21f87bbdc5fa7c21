//! Which module uses which, counted from the code: every `crate::` and `super::` path of
//! the library (src/, its model and tables), the SDK runtime (sdk/runtime/src) and ntx
//! (tools/ntx/src), read with syn from the module tree each crate root declares. No crate
//! may have a circle of modules (each is named when one appears), and the runtime's
//! modules keep to its layers, the folders its root declares bottom first: a module uses
//! only modules of its own folder or the folders below.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use nt_support::qemu::root;
use syn::visit::Visit;

/// A module by its path from the crate root (`[]` is the root).
type Module = Vec<String>;

/// One crate's modules: each file module, its inline modules, and its uses.
#[derive(Default)]
struct Graph {
    /// Every module (file or inline), to resolve paths against.
    modules: BTreeSet<Module>,
    /// The file module each module is written in (an inline module counts as its file's).
    file_of: BTreeMap<Module, Module>,
    /// Uses: (from module, the path's segments after `crate`, already made absolute).
    uses: Vec<(Module, Vec<String>)>,
}

/// Collects the `crate::`/`super::`/`self::` paths of one module's items.
struct Paths<'a> {
    here: Module,
    found: &'a mut Vec<(Module, Vec<String>)>,
}

impl Paths<'_> {
    /// `segs` (starting at `crate`, `super` or `self`) made absolute from `here`.
    fn absolute(&self, segs: &[String]) -> Option<Vec<String>> {
        let mut at: Vec<String> = match segs.first().map(String::as_str) {
            Some("crate") => Vec::new(),
            Some("super" | "self") => self.here.clone(),
            _ => return None,
        };
        let mut rest = &segs[1..];
        if segs[0] == "super" {
            at.pop();
        }
        while rest.first().map(String::as_str) == Some("super") {
            at.pop();
            rest = &rest[1..];
        }
        at.extend(rest.iter().cloned());
        Some(at)
    }

    fn record(&mut self, segs: Vec<String>) {
        if let Some(abs) = self.absolute(&segs) {
            self.found.push((self.here.clone(), abs));
        }
    }

    /// Every leaf of a use tree, as segments.
    fn use_tree(&mut self, prefix: Vec<String>, tree: &syn::UseTree) {
        let with = |s: &syn::Ident| {
            let mut p = prefix.clone();
            p.push(s.to_string());
            p
        };
        match tree {
            syn::UseTree::Path(p) => self.use_tree(with(&p.ident), &p.tree),
            syn::UseTree::Name(n) if n.ident == "self" => self.record(prefix),
            syn::UseTree::Name(n) => self.record(with(&n.ident)),
            syn::UseTree::Rename(r) => self.record(with(&r.ident)),
            syn::UseTree::Glob(_) => self.record(prefix),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix.clone(), t);
                }
            }
        }
    }

    /// `crate :: a :: b` sequences inside a macro's tokens.
    fn tokens(&mut self, ts: proc_macro2::TokenStream) {
        let mut run: Vec<String> = Vec::new();
        let mut colons = 0;
        for t in ts {
            match t {
                proc_macro2::TokenTree::Group(g) => {
                    self.flush(&mut run);
                    self.tokens(g.stream());
                }
                proc_macro2::TokenTree::Ident(i) => {
                    let s = i.to_string();
                    let starts = matches!(s.as_str(), "crate" | "super" | "self");
                    if run.is_empty() && starts || !run.is_empty() && colons == 2 {
                        run.push(s);
                    } else {
                        self.flush(&mut run);
                        if starts {
                            run.push(s);
                        }
                    }
                    colons = 0;
                }
                proc_macro2::TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() => {
                    colons += 1
                }
                _ => {
                    self.flush(&mut run);
                    colons = 0;
                }
            }
        }
        self.flush(&mut run);
    }

    fn flush(&mut self, run: &mut Vec<String>) {
        if run.len() > 1 {
            self.record(std::mem::take(run));
        }
        run.clear();
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() > 1 {
            self.record(segs);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(Vec::new(), &u.tree);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
        syn::visit::visit_macro(self, m);
    }

    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {
        // Inline modules are walked on their own (see `walk_items`).
    }
}

/// The file a `mod name;` declared in `file` (module `module`) lives in.
fn child_file(file: &Path, is_dir_owner: bool, name: &str) -> PathBuf {
    let dir = if is_dir_owner {
        file.parent().unwrap().to_path_buf()
    } else {
        file.with_extension("")
    };
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

impl Graph {
    /// The crate whose root file is `root_file`.
    fn of_crate(root_file: &Path) -> Graph {
        let mut g = Graph::default();
        g.walk_file(root_file, true, Vec::new());
        g
    }

    fn walk_file(&mut self, file: &Path, dir_owner: bool, module: Module) {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        self.walk_items(file, dir_owner, &module, &module, &ast.items);
    }

    fn walk_items(
        &mut self,
        file: &Path,
        dir_owner: bool,
        file_mod: &Module,
        module: &Module,
        items: &[syn::Item],
    ) {
        self.modules.insert(module.clone());
        self.file_of.insert(module.clone(), file_mod.clone());
        let mut p = Paths {
            here: module.clone(),
            found: &mut self.uses,
        };
        for item in items {
            p.visit_item(item);
        }
        for item in items {
            let syn::Item::Mod(m) = item else { continue };
            let mut child = module.clone();
            child.push(m.ident.to_string());
            match &m.content {
                Some((_, inner)) => self.walk_items(file, dir_owner, file_mod, &child, inner),
                None => {
                    let f = child_file(file, dir_owner, &m.ident.to_string());
                    let owner = f.file_name().is_some_and(|n| n == "mod.rs");
                    self.walk_file(&f, owner, child);
                }
            }
        }
    }

    /// The file module a path leads into: the longest prefix that names a module.
    fn target(&self, path: &[String]) -> Module {
        let mut at: Module = Vec::new();
        for s in path {
            let mut next = at.clone();
            next.push(s.clone());
            if !self.modules.contains(&next) {
                break;
            }
            at = next;
        }
        self.file_of[&at].clone()
    }

    /// Edges between file modules (`a::b`), self-uses left out.
    fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let name = |m: &Module| {
            if m.is_empty() {
                "(root)".to_string()
            } else {
                m.join("::")
            }
        };
        let mut e: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for m in self.file_of.values() {
            e.entry(name(m)).or_default();
        }
        for (from, path) in &self.uses {
            let (a, b) = (name(&self.file_of[from]), name(&self.target(path)));
            if a != b {
                e.entry(a).or_default().insert(b);
            }
        }
        e
    }
}

/// The circles (strongly connected components of more than one module), each sorted.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: finishing order on the graph, then components on the reversed graph.
    fn order(
        n: &String,
        e: &BTreeMap<String, BTreeSet<String>>,
        seen: &mut BTreeSet<String>,
        out: &mut Vec<String>,
    ) {
        if !seen.insert(n.clone()) {
            return;
        }
        for m in e.get(n).into_iter().flatten() {
            order(m, e, seen, out);
        }
        out.push(n.clone());
    }
    let mut rev: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (a, bs) in edges {
        for b in bs {
            rev.entry(b.clone()).or_default().insert(a.clone());
        }
    }
    let (mut seen, mut fin) = (BTreeSet::new(), Vec::new());
    for n in edges.keys() {
        order(n, edges, &mut seen, &mut fin);
    }
    let mut seen = BTreeSet::new();
    let mut found = Vec::new();
    for n in fin.iter().rev() {
        let mut comp = Vec::new();
        order(n, &rev, &mut seen, &mut comp);
        if comp.len() > 1 {
            comp.sort();
            found.push(comp);
        }
    }
    found
}

/// Each circle with the uses that close it, for the failure message.
fn describe(edges: &BTreeMap<String, BTreeSet<String>>, found: &[Vec<String>]) -> String {
    let mut s = String::new();
    for c in found {
        s += &format!("  circle of {}: {}\n", c.len(), c.join(", "));
        for a in c {
            let inside: Vec<&String> = edges[a].iter().filter(|b| c.contains(b)).collect();
            s += &format!("    {a} uses {inside:?}\n");
        }
    }
    s
}

fn assert_no_circle(root_file: &str) {
    let g = Graph::of_crate(&root().join(root_file));
    let e = g.edges();
    let found = circles(&e);
    assert!(
        found.is_empty(),
        "{root_file}: modules that use each other:\n{}",
        describe(&e, &found)
    );
}

#[test]
fn the_library_and_its_model_have_no_circle_of_modules() {
    assert_no_circle("src/lib.rs");
}

#[test]
fn the_sdk_runtime_has_no_circle_of_modules() {
    assert_no_circle("sdk/runtime/src/lib.rs");
}

#[test]
fn ntx_has_no_circle_of_modules() {
    assert_no_circle("tools/ntx/src/lib.rs");
    assert_no_circle("tools/ntx/src/main.rs");
}

/// A C file's text without its comments.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(k) = rest.find("/*") {
        out += &rest[..k];
        rest = rest[k + 2..]
            .split_once("*/")
            .map_or("", |(_, after)| after);
    }
    out += rest;
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The device runtime's C files (sdk/device/*.c), each using another when it names a
/// function or object of the runtime's (`nt_`) that the other defines at file scope.
fn device_edges(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "c") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            files.insert(name, code_of(&std::fs::read_to_string(&path).unwrap()));
        }
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let defines = |code: &str| -> BTreeSet<String> {
        code.lines()
            .filter(|l| !l.starts_with([' ', '\t', '#', '}', '{']) && !l.starts_with("static "))
            .filter(|l| {
                !l.starts_with("extern ") && !l.trim_end().ends_with(';') || l.contains(" = ")
            })
            .filter_map(|l| {
                let head = l.split(['(', '=', '[']).next()?;
                let name = head.trim_end().rsplit(|c: char| !word(c)).next()?;
                name.starts_with("nt_").then(|| name.to_string())
            })
            .collect()
    };
    let defined: BTreeMap<&String, BTreeSet<String>> =
        files.iter().map(|(f, c)| (f, defines(c))).collect();
    let mut edges = BTreeMap::new();
    for (f, code) in &files {
        let named: BTreeSet<&str> = code.split(|c: char| !word(c)).collect();
        let uses = defined
            .iter()
            .filter(|(g, names)| **g != f && names.iter().any(|n| named.contains(n.as_str())))
            .map(|(g, _)| (*g).clone())
            .collect();
        edges.insert(f.clone(), uses);
    }
    edges
}

#[test]
fn the_device_runtime_has_no_circle_of_files() {
    let e = device_edges(&root().join("sdk/device"));
    assert!(
        e["runtime.c"].contains("channel.c") && e["memory.c"].contains("channel.c"),
        "{e:?}"
    );
    assert!(
        e["runtime.c"].contains("memory.c") && e["runtime.c"].contains("support.c"),
        "{e:?}"
    );
    let found = circles(&e);
    assert!(
        found.is_empty(),
        "sdk/device: files that use each other:\n{}",
        describe(&e, &found)
    );
    // A planted circle is found: a file that calls one that calls it back.
    let dir = nt_support::tools::scratch("layers_device");
    std::fs::write(
        dir.join("a.c"),
        "/* nt_b() */\nint nt_a(void) { return nt_b(); }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("b.c"),
        "int nt_b(void)\n{\n    return nt_a();\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("c.c"),
        "static int nt_c(void) { return nt_a(); }\n",
    )
    .unwrap();
    let e = device_edges(&dir);
    assert_eq!(
        circles(&e),
        vec![vec!["a.c".to_string(), "b.c".into()]],
        "{e:?}"
    );
}

/// The runtime's layers: the modules its root (sdk/runtime/src/lib.rs) declares, bottom
/// first, each a folder of its own (`NAME/mod.rs`). The test-only module declared last
/// (`unit`) sits above them all.
fn runtime_layers() -> Vec<String> {
    let lib = root().join("sdk/runtime/src/lib.rs");
    let ast = syn::parse_file(&std::fs::read_to_string(&lib).unwrap()).unwrap();
    let layers: Vec<String> = ast
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Mod(m) if m.content.is_none() => Some(m.ident.to_string()),
            _ => None,
        })
        .collect();
    for l in &layers {
        let folder = lib.parent().unwrap().join(l).join("mod.rs");
        assert!(
            folder.exists(),
            "layer {l} is a folder: {}",
            folder.display()
        );
    }
    layers
}

#[test]
fn the_runtime_keeps_to_its_layers() {
    let layers = runtime_layers();
    assert_eq!(
        layers,
        ["base", "percore", "run", "edges", "unit"],
        "docs/architecture.md describes these folders in this order"
    );
    let level = |m: &str| -> usize {
        let top = m.split("::").next().unwrap();
        layers
            .iter()
            .position(|l| l == top)
            .unwrap_or_else(|| panic!("module {m} is in no layer's folder"))
    };
    let e = Graph::of_crate(&root().join("sdk/runtime/src/lib.rs")).edges();
    let mut wrong = Vec::new();
    for (a, bs) in e.iter().filter(|(a, _)| *a != "(root)") {
        for b in bs.iter().filter(|b| *b != "(root)") {
            if level(a) < level(b) {
                wrong.push(format!("{a} uses {b}, a layer above"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "uses that point up a layer:\n  {}",
        wrong.join("\n  ")
    );
}

/// Collects the names of `static` items (those in functions and `extern` blocks too).
#[derive(Default)]
struct Statics(BTreeSet<String>);

impl<'ast> Visit<'ast> for Statics {
    fn visit_item_static(&mut self, i: &'ast syn::ItemStatic) {
        self.0.insert(i.ident.to_string());
    }
    fn visit_foreign_item_static(&mut self, i: &'ast syn::ForeignItemStatic) {
        self.0.insert(i.ident.to_string());
    }
}

/// The runtime's process-wide state: every `static` of sdk/runtime/src (the test-only
/// `unit/` aside) is a row of docs/architecture.md's table "Process-wide state", with its
/// reason, and every row is one of them.
#[test]
fn every_static_of_the_runtime_is_listed_with_its_reason() {
    let src = root().join("sdk/runtime/src");
    let mut found = Statics::default();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() && p != src.join("unit") {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                found.visit_file(&syn::parse_file(&text).unwrap());
            }
        }
    }
    let doc = std::fs::read_to_string(root().join("docs/architecture.md")).unwrap();
    let table = doc
        .split_once("### Process-wide state")
        .map(|(_, rest)| rest.split("\n#").next().unwrap())
        .expect("docs/architecture.md has a section \"Process-wide state\"");
    let listed: BTreeSet<String> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `")?.split_once('`'))
        .filter(|(_, rest)| {
            rest.split('|')
                .nth(2)
                .is_some_and(|why| why.trim().len() > 20)
        })
        .map(|(name, _)| name.to_string())
        .collect();
    assert!(found.0.len() >= 5, "statics found: {:?}", found.0);
    assert_eq!(
        found.0, listed,
        "the runtime's statics against docs/architecture.md's table (each row: name, file, reason)"
    );
}

/// The check finds a circle where there is one (so a pass means something): three files
/// whose modules use each other in a ring, one through `super::`, one through a group.
#[test]
fn a_planted_circle_is_found_and_named() {
    let dir = nt_support::tools::scratch("layers_planted");
    let files = [
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n"),
        ("a.rs", "use crate::{b::B, d};\npub struct A;\n"),
        ("b.rs", "pub struct B(super::c::C);\n"),
        (
            "c.rs",
            "pub struct C;\nfn f() { let _ = format!(\"{:?}\", crate::a::A); }\n",
        ),
        (
            "d.rs",
            "#[cfg(test)]\nmod tests { use super::super::a::A; }\n",
        ),
    ];
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    let e = Graph::of_crate(&dir.join("lib.rs")).edges();
    assert_eq!(
        circles(&e),
        vec![vec!["a".to_string(), "b".into(), "c".into(), "d".into()]],
        "{e:?}"
    );
}
