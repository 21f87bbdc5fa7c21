//! `ntx abi-diff` and `ntx relink`, run as a user runs them: on a fixture in the shape the
//! seed documents (abi-tests/fixtures/original.S, assembled by GNU as for Xtensa), on
//! mutants of it, on malformed inputs, and on the device object.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nt_support::tools::{product, run_ok, scratch, tool};

mod common;
use common::{assemble, json, mutate, mutate_with, ntx, FIXTURE};

/// `ntx abi-diff --format json` of `candidate` against `reference`: the process output and
/// the parsed report.
fn diff_json(reference: &Path, candidate: &Path) -> (Output, serde_json::Value) {
    let out = ntx(&[
        &"abi-diff",
        &"--reference",
        &reference,
        &"--candidate",
        &candidate,
        &"--format",
        &"json",
    ]);
    let v = json(&out);
    (out, v)
}

fn kinds(v: &serde_json::Value, class: &str) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["class"] == class)
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_fixture_matches_the_manifest_and_the_device_object_matches_both() {
    let dir = scratch("ntx_fixture");
    let orig = assemble(&dir, "original", FIXTURE);
    let manifest = product("NT_MANIFEST");
    let dev = product("NT_DEVICE_OBJ");
    // The device object adds exactly this library's additions (neuron_translate_span).
    let added: Vec<String> = neuron_translate::symbols::exports()
        .filter(|s| !s.original)
        .map(|s| s.elf_name.to_string())
        .collect();
    assert!(!added.is_empty());
    for (r, c, additions) in [
        (&manifest, &orig, 0),
        (&orig, &dev, added.len()),
        (&manifest, &dev, added.len()),
    ] {
        let (out, v) = diff_json(r, c);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(v["breaks"], 0);
        assert_eq!(v["additions"], additions, "{v:#}");
        let symbols: Vec<String> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["class"] == "addition")
            .map(|f| f["symbol"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            symbols,
            if additions == 0 {
                vec![]
            } else {
                added.clone()
            }
        );
    }
    // Against the fixture, the device object's l32r references are reported as such.
    let out = ntx(&[&"abi-diff", &"--reference", &orig, &"--candidate", &dev]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("COMPATIBLE: 0 break(s)"), "{text}");
    assert!(
        text.contains("reference-mechanism: _Z20neuron_translate_ctxv -> _ctx"),
        "{text}"
    );
    assert!(
        text.contains("CONST16 pair") && text.contains("l32r literal"),
        "{text}"
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn every_mutant_is_caught_with_the_right_class() {
    let dir = scratch("ntx_mutants");
    let orig = assemble(&dir, "original", FIXTURE);
    // (name, marker, replacement, expected class, expected kind, exit code)
    let cases: &[(&str, &str, &str, &str, &str, i32)] = &[
        ("missing", "@MUTATE-TRANSLATE-BINDING", "", "break", "symbol-missing", 1),
        ("weak", "@MUTATE-LOOKUP-BINDING", "\t.weak _Z31neuron_translate_mapping_lookupPvyPyS0_", "break", "symbol-binding", 1),
        ("type", "@MUTATE-CTX-TYPE", "\t.type _Z20neuron_translate_ctxv, @object", "break", "symbol-type", 1),
        ("resized", "@MUTATE-CTX-SIZE", "\t.size _ctx, 8", "break", "symbol-size", 1),
        ("data", "@MUTATE-CTX-SECTION", "\t.section .data, \"aw\"", "break", "symbol-section", 1),
        ("import", "@MUTATE-EXTRA-TEXT", "\t.byte 0,0,0\n\t.reloc .-3, R_XTENSA_SLOT0_OP, memcpy", "break", "import-added", 1),
        ("global", "@MUTATE-EXTRA-TEXT", "\t.global extra\n\t.type extra, @function\nextra:\n\t.byte 0x36,0x41,0\n\t.size extra, 3", "addition", "symbol-added", 0),
        ("hidden", "@MUTATE-INIT-BINDING", "\t.global _Z19_init_translate_ctxv\n\t.hidden _Z19_init_translate_ctxv", "break", "symbol-visibility", 1),
        ("sbuf-missing", "@MUTATE-SBUF-BINDING", "", "break", "symbol-missing", 1),
        ("sbuf-misaligned", "@MUTATE-SBUF-PAD", "", "break", "symbol-alignment", 1),
        ("sbuf-moved", "@MUTATE-SBUF-PAD", "\t.space 12", "note", "symbol-offset", 0),
    ];
    for &(name, marker, repl, class, kind, code) in cases {
        let m = assemble(&dir, name, &mutate(marker, repl));
        let (out, v) = diff_json(&orig, &m);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{name}: {}",
            serde_json::to_string_pretty(&v).unwrap()
        );
        assert!(
            kinds(&v, class).contains(&kind.to_string()),
            "{name}: expected {class} {kind}: {v:#}"
        );
        if class != "break" {
            assert_eq!(v["breaks"], 0, "{name}: {v:#}");
        }
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_finding_against_the_manifest_carries_the_manifests_evidence() {
    let dir = scratch("ntx_mutants_manifest");
    let missing = assemble(&dir, "missing", &mutate("@MUTATE-TRANSLATE-BINDING", ""));
    let v = diff_json(&product("NT_MANIFEST"), &missing).1;
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "symbol-missing")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(f["symbol"], "_Z16neuron_translatePvy");
    assert_eq!(f["evidence"], "§1; §4 (.text @0x120) (HIGH/OBSERVED)");
    assert!(
        v["reference_evidence"]
            .as_str()
            .unwrap()
            .starts_with("translation.o of libneuroncustomop.a: "),
        "{v:#}"
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_moved_reference_and_a_call0_object_are_breaks() {
    let dir = scratch("ntx_mutants_refs");
    let orig = assemble(&dir, "original", FIXTURE);
    // neuron_translate_ctx's CONST16 pair now loads data_scratch_map instead of _ctx.
    let moved = assemble(
        &dir,
        "moved",
        &mutate_with("@MUTATE-CTX-REF", |l| {
            l.replace(", _ctx", ", data_scratch_map")
        }),
    );
    let v = diff_json(&orig, &moved).1;
    assert!(
        kinds(&v, "break").contains(&"reference-missing".to_string()),
        "{v:#}"
    );
    assert!(
        kinds(&v, "note").contains(&"reference-added".to_string()),
        "{v:#}"
    );
    // A call0 object (the lx106 default) against the windowed original: a break.
    let s = dir.join("call0.S");
    std::fs::write(&s, FIXTURE).unwrap();
    let call0 = dir.join("call0.o");
    run_ok(
        Command::new(tool("XTENSA_AS"))
            .arg("--abi-call0")
            .arg(&s)
            .arg("-o")
            .arg(&call0),
    );
    let v = diff_json(&orig, &call0).1;
    assert!(
        kinds(&v, "break").contains(&"xtensa-abi".to_string()),
        "{v:#}"
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn malformed_inputs_exit_2_with_a_message_naming_the_file() {
    let dir = scratch("ntx_malformed");
    let orig = assemble(&dir, "original", FIXTURE);
    let bytes = std::fs::read(&orig).unwrap();
    let write = |n: &str, b: &[u8]| {
        let p = dir.join(n);
        std::fs::write(&p, b).unwrap();
        p
    };
    let host_c = write("host.c", b"int x;\n");
    let host_o = dir.join("host.o");
    run_ok(
        Command::new("cc")
            .arg("-c")
            .arg(&host_c)
            .arg("-o")
            .arg(&host_o),
    );
    let ar_without = dir.join("without.a");
    run_ok(
        Command::new(tool("LLVM_AR"))
            .arg("rcs")
            .arg(&ar_without)
            .arg(&host_o),
    );
    let mut corrupt_ar = b"!<arch>\n".to_vec();
    corrupt_ar
        .extend_from_slice(b"translation.o/  0           0     0     644     99999     `\n\x7fELF");
    let cases: Vec<(PathBuf, &str)> = vec![
        (write("empty.o", b""), "empty file"),
        (write("truncated.o", &bytes[..100]), "not a valid ELF32"),
        (
            write("text.o", b"hello, world\n"),
            "not an ELF object, an ar archive or an ABI manifest",
        ),
        (host_o.clone(), "not comparable"),
        (ar_without.clone(), "no member named translation.o"),
        (write("corrupt.a", &corrupt_ar), "archive"),
        (
            write("bad.toml", b"[object]\nname = 1\n"),
            "not a valid manifest",
        ),
        (dir.join("does-not-exist.o"), "cannot read"),
        (
            write(
                "binding.toml",
                &std::fs::read_to_string(product("NT_MANIFEST"))
                    .unwrap()
                    .replacen("binding = \"GLOBAL\"", "binding = \"GLOBL\"", 1)
                    .into_bytes(),
            ),
            "symbol _Z16neuron_translatePvy: unknown binding \"GLOBL\" (one of: LOCAL, GLOBAL, WEAK, UNIQUE)",
        ),
    ];
    for (path, needle) in &cases {
        let out = ntx(&[&"abi-diff", &"--reference", &orig, &"--candidate", path]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {err}", path.display());
        assert!(
            err.contains(&path.display().to_string()),
            "{}: message must name the file: {err}",
            path.display()
        );
        assert!(
            err.contains(needle),
            "{}: expected '{needle}' in: {err}",
            path.display()
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // Usage errors are 2 as well.
    let out = ntx(&[&"abi-diff", &"--reference", &orig]);
    assert_eq!(out.status.code(), Some(2));
    let out = ntx(&[&"frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The members of an archive shaped like libneuroncustomop.a around translation.o
/// (docs/contract.md §1): start_exit.o defines the imports; wrapper_api.o reads
/// `_sbuf_window` and calls the translate functions; stack_switch.o (with `_start`) calls
/// init, ctx and translate; data_transfer.o calls translate and the lookup. Each reaches
/// its symbols through `l32r` literals (the lx106 linker cannot relocate call8).
const CONSUMER_MEMBERS: &[(&str, &str)] = &[
    (
        "start_exit",
        "\t.data\n\t.global data_scratch_map\n\t.p2align 2\ndata_scratch_map:\n\t.space 64\n\
         \t.global _ZN12extended_isa3sdk11hbm_scratchE\n\t.p2align 3\n_ZN12extended_isa3sdk11hbm_scratchE:\n\t.space 8\n",
    ),
    (
        "wrapper_api",
        "\t.text\n\t.literal_position\n\t.literal .L1, _sbuf_window\n\t.literal .L2, _Z16neuron_translatePvy\n\
         \t.literal .L3, _Z31neuron_translate_mapping_lookupPvyPyS0_\n\t.global customop_return_tensor\n\
         \t.type customop_return_tensor, @function\n\t.p2align 2\ncustomop_return_tensor:\n\
         \tl32r a8, .L1\n\tl32i a8, a8, 0\n\tl32r a9, .L2\n\tl32r a10, .L3\n\tret\n",
    ),
    (
        "stack_switch",
        "\t.text\n\t.literal_position\n\t.literal .L1, _Z19_init_translate_ctxv\n\t.literal .L2, _Z20neuron_translate_ctxv\n\
         \t.literal .L3, _Z16neuron_translatePvy\n\t.global _start\n\t.p2align 2\n_start:\n\
         \tl32r a8, .L1\n\tl32r a9, .L2\n\tl32r a10, .L3\n\tret\n",
    ),
    (
        "data_transfer",
        "\t.text\n\t.literal_position\n\t.literal .L1, _Z16neuron_translatePvy\n\
         \t.literal .L2, _Z31neuron_translate_mapping_lookupPvyPyS0_\n\t.global data_transfer_copy\n\
         \t.p2align 2\ndata_transfer_copy:\n\tl32r a8, .L1\n\tl32r a9, .L2\n\tret\n",
    ),
    (
        "a_member_with_a_long_name",
        "\t.data\n\t.global some_other_symbol\nsome_other_symbol:\n\t.byte 1\n",
    ),
];

/// `ntx relink --archive VENDOR --object OBJECT --out OUT EXTRA...`.
fn relink(vendor: &Path, object: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut c = Command::new(product("NT_NTX"));
    c.arg("relink")
        .arg("--archive")
        .arg(vendor)
        .arg("--object")
        .arg(object)
        .arg("--out")
        .arg(out)
        .args(extra);
    c.output().expect("run ntx")
}

/// Links every member of `archive` (`--whole-archive`: each member's imports must
/// resolve) into a program with GNU ld.
fn link_whole(archive: &Path, out: &Path) -> Output {
    Command::new(tool("XTENSA_LD"))
        .args([
            "-static",
            "-e",
            "_start",
            "--no-warn-execstack",
            "--whole-archive",
        ])
        .arg(archive)
        .arg("-o")
        .arg(out)
        .output()
        .expect("run ld")
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn relink_replaces_one_member_keeps_the_rest_and_links() {
    let dir = scratch("ntx_relink");
    let (vendor, vendor_bytes) = vendor_archive(&dir);
    let patched = dir.join("patched.a");
    let dev = product("NT_DEVICE_OBJ");
    let out = relink(&vendor, &dev, &patched, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&vendor).unwrap(),
        vendor_bytes,
        "the vendor archive is untouched"
    );
    only_the_object_replaced(&vendor_bytes, &patched, &dev);
    // The symbol index lists the new member's globals and the others'.
    let nm = run_ok(
        Command::new(tool("XTENSA_NM"))
            .arg("--print-armap")
            .arg(&patched),
    );
    let nm = String::from_utf8_lossy(&nm.stdout);
    for s in [
        "_Z16neuron_translatePvy in translation.o",
        "_ctx in translation.o",
        "_sbuf_window in translation.o",
        "data_scratch_map in start_exit.o",
        "customop_return_tensor in wrapper_api.o",
        "some_other_symbol in a_member_with_a_long_name.o",
    ] {
        assert!(nm.contains(s), "armap lacks '{s}':\n{nm}");
    }
    links_whole(&patched, &dir.join("linked.elf"));
}

/// A vendor archive in `dir`: the fixture as translation.o among the consumer members;
/// its path and bytes.
fn vendor_archive(dir: &Path) -> (PathBuf, Vec<u8>) {
    let orig = assemble(dir, "translation", FIXTURE);
    let mut objects = vec![orig.clone()];
    for (name, src) in CONSUMER_MEMBERS {
        objects.insert(objects.len().min(3), assemble(dir, name, src));
    }
    let vendor = dir.join("libneuroncustomop.a");
    run_ok(
        Command::new(tool("LLVM_AR"))
            .arg("rcs")
            .arg(&vendor)
            .args(&objects)
            .current_dir(dir),
    );
    let bytes = std::fs::read(&vendor).unwrap();
    (vendor, bytes)
}

/// `patched` has the vendor archive's members in the same order, byte-identical but the
/// translation.o member, which is `dev`.
fn only_the_object_replaced(vendor_bytes: &[u8], patched: &Path, dev: &Path) {
    let before = ntx::archive::read_members(vendor_bytes, "vendor").unwrap();
    let after_bytes = std::fs::read(patched).unwrap();
    let after = ntx::archive::read_members(&after_bytes, "patched").unwrap();
    let names = |v: &[ntx::archive::Member]| {
        v.iter()
            .map(|m| String::from_utf8_lossy(&m.name).into_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&after), names(&before), "same members, same order");
    assert_eq!(after.len(), CONSUMER_MEMBERS.len() + 1);
    for (b, a) in before.iter().zip(&after) {
        if a.name == b"translation.o" {
            assert_eq!(
                a.data,
                std::fs::read(dev).unwrap(),
                "the new member is the object"
            );
        } else {
            assert_eq!(
                a.data,
                b.data,
                "{} byte-identical",
                String::from_utf8_lossy(&a.name)
            );
        }
    }
}

/// GNU ld links every member of `patched`: every import of every consumer resolves,
/// _sbuf_window included.
fn links_whole(patched: &Path, linked: &Path) {
    let out = link_whole(patched, linked);
    assert!(
        out.status.success(),
        "ld: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let syms = run_ok(Command::new(tool("XTENSA_NM")).arg(linked));
    let syms = String::from_utf8_lossy(&syms.stdout);
    for s in [
        "_Z16neuron_translatePvy",
        "_sbuf_window",
        "customop_return_tensor",
    ] {
        assert!(syms.contains(s), "{s} not linked:\n{syms}");
    }
    assert!(
        !syms.lines().any(|l| l.trim_start().starts_with("U ")),
        "{syms}"
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn relink_refuses_an_object_without_sbuf_window_naming_its_consumer() {
    // Our object without _sbuf_window (made local): refused, naming the consumer that
    // needs it; forced, the link fails exactly as the refusal said.
    let dir = scratch("ntx_relink_no_sbuf");
    let (vendor, _) = vendor_archive(&dir);
    let dev = product("NT_DEVICE_OBJ");
    let no_sbuf = dir.join("no_sbuf.o");
    run_ok(
        Command::new(tool("LLVM_OBJCOPY"))
            .arg("--localize-symbol=_sbuf_window")
            .arg(&dev)
            .arg(&no_sbuf),
    );
    let refused = dir.join("no_sbuf.a");
    let out = relink(&vendor, &no_sbuf, &refused, &[]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to relink"));
    assert!(
        text.contains("[BREAK] consumer-unresolved: wrapper_api.o needs _sbuf_window"),
        "{text}"
    );
    assert!(
        text.contains("[BREAK] symbol-missing: _sbuf_window"),
        "{text}"
    );
    assert!(!refused.exists(), "nothing written");
    let out = relink(&vendor, &no_sbuf, &refused, &["--force"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "forced, still reports the break"
    );
    let out = link_whole(&refused, &dir.join("no_sbuf.elf"));
    assert!(
        !out.status.success(),
        "the link must fail without _sbuf_window"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("undefined reference to `_sbuf_window'"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn relink_refuses_a_breaking_object_unless_forced_and_never_writes_the_vendor_archive() {
    // A breaking object is refused (exit 1, nothing written) unless --force.
    let dir = scratch("ntx_relink_refused");
    let (vendor, vendor_bytes) = vendor_archive(&dir);
    let dev = product("NT_DEVICE_OBJ");
    let bad = assemble(&dir, "bad", &mutate("@MUTATE-TRANSLATE-BINDING", ""));
    let refused = dir.join("refused.a");
    let out = relink(&vendor, &bad, &refused, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to relink"));
    assert!(!refused.exists());
    let out = relink(&vendor, &bad, &refused, &["--force"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "forced, but still reports the break"
    );
    assert!(refused.exists());
    // The vendor archive is never the output.
    let out = relink(&vendor, &dev, &vendor, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&vendor).unwrap(), vendor_bytes);
    // A missing member is an input error.
    let out = relink(&vendor, &dev, &refused, &["--member", "nope.o"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn abidiff_agrees_about_added_and_removed_symbols() {
    let dir = scratch("ntx_abidiff");
    let orig = assemble(&dir, "original", FIXTURE);
    let removed = assemble(&dir, "removed", &mutate("@MUTATE-TRANSLATE-BINDING", ""));
    let added = assemble(&dir, "added", &mutate("@MUTATE-EXTRA-TEXT", "\t.global extra\n\t.type extra, @function\nextra:\n\t.byte 0x36,0x41,0\n\t.size extra, 3"));
    let abidiff = |a: &Path, b: &Path| {
        Command::new(tool("ABIDIFF"))
            .arg(a)
            .arg(b)
            .output()
            .expect("abidiff")
            .status
            .code()
            .unwrap()
    };
    // abidiff's exit status is a bit set: 4 = ABI change, 8 = incompatible change.
    let same = abidiff(&orig, &orig);
    let rem = abidiff(&orig, &removed);
    let add = abidiff(&orig, &added);
    assert_eq!(same, 0);
    assert!(
        rem & 8 != 0,
        "abidiff sees the removal as incompatible ({rem})"
    );
    assert!(
        add & 4 != 0 && add & 8 == 0,
        "abidiff sees the addition as compatible ({add})"
    );
    let v = diff_json(&orig, &removed).1;
    assert!(kinds(&v, "break").contains(&"symbol-missing".to_string()));
    let v = diff_json(&orig, &added).1;
    assert_eq!(v["breaks"], 0);
    assert!(kinds(&v, "addition").contains(&"symbol-added".to_string()));
}
