//! The device object `make xtensa` builds (dist/xtensa/): the properties the relink users
//! need, checked on the file itself.

use std::collections::BTreeSet;
use std::process::Command;

use neuron_translate::symbols::{exports, imports, library_imports, original_exports, SymbolKind};
use nt_support::tools::{product, run_ok, scratch, tool};
use object::read::archive::ArchiveFile;
use object::{elf, Object, ObjectSection, ObjectSymbol, SymbolSection};

fn device_obj() -> Vec<u8> {
    std::fs::read(product("NT_DEVICE_OBJ")).unwrap()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn is_an_elf32_little_endian_xtensa_relocatable_with_the_windowed_abi() {
    let data = device_obj();
    let f = object::read::elf::ElfFile32::<object::Endianness>::parse(&*data).expect("ELF32");
    let h = f.elf_header();
    let e = f.endian();
    assert!(f.is_little_endian());
    assert_eq!(h.e_machine.get(e), elf::EM_XTENSA);
    assert_eq!(h.e_type.get(e), elf::ET_REL);
    let m = ntx::model::from_elf(&data, "translation.o").unwrap();
    assert_eq!(
        m.xtensa_abi.as_deref(),
        Some("0"),
        ".xtensa.info says ABI=0 (windowed)"
    );
    // Windowed code: every exported function starts with `entry`.
    let lst = std::fs::read_to_string(product("NT_DEVICE_OBJ").with_file_name("translation.lst"))
        .unwrap();
    for s in exports().filter(|s| s.kind == SymbolKind::Function) {
        let at = lst
            .find(&format!("<{}>:", s.elf_name))
            .unwrap_or_else(|| panic!("{} not in the listing", s.elf_name));
        let first = lst[at..].lines().nth(1).unwrap_or("");
        assert!(
            first.contains("entry"),
            "{}: first instruction is `{first}`",
            s.elf_name
        );
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn global_symbols_are_exactly_the_contracts_exports() {
    let data = device_obj();
    let f = object::File::parse(&*data).unwrap();
    let mut globals = BTreeSet::new();
    let mut undefined = BTreeSet::new();
    for s in f.symbols() {
        let name = s.name().unwrap().to_string();
        if s.is_undefined() {
            if !name.is_empty() {
                undefined.insert(name);
            }
            continue;
        }
        if !s.is_global() {
            continue;
        }
        let sec = match s.section() {
            SymbolSection::Section(i) => f.section_by_index(i).unwrap().name().unwrap().to_string(),
            other => panic!("{name}: defined in {other:?}"),
        };
        let c = exports()
            .find(|c| c.elf_name == name)
            .unwrap_or_else(|| panic!("stray global symbol {name}"));
        match c.kind {
            SymbolKind::Function => {
                assert_eq!(s.kind(), object::SymbolKind::Text, "{name} is a function");
                assert!(
                    sec == ".text" || sec.starts_with(".text."),
                    "{name} in {sec}"
                );
            }
            SymbolKind::Object { device_size } => {
                assert_eq!(s.kind(), object::SymbolKind::Data, "{name} is an object");
                assert!(sec == ".bss" || sec.starts_with(".bss."), "{name} in {sec}");
                assert_eq!(s.size(), u64::from(device_size), "{name} size");
            }
        }
        let object::SymbolFlags::Elf { st_info, st_other } = s.flags() else {
            unreachable!()
        };
        assert_eq!(st_info >> 4, elf::STB_GLOBAL, "{name} binding");
        assert_eq!(st_other & 3, elf::STV_DEFAULT, "{name} visibility");
        globals.insert(name);
    }
    let want: BTreeSet<String> = exports().map(|s| s.elf_name.to_string()).collect();
    assert_eq!(globals, want, "every export present");
    // Exactly the imports the library needs: a subset of the original's (docs/contract.md
    // §1 allows dropping data_scratch_map, and the library does).
    let needed: BTreeSet<String> = library_imports().map(|s| s.elf_name.to_string()).collect();
    let originals: BTreeSet<String> = imports().map(|s| s.elf_name.to_string()).collect();
    assert!(needed.is_subset(&originals));
    assert_eq!(undefined, needed, "the object's imports");
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn bss_layout_is_the_originals() {
    // Offsets and alignment of the data objects, against the reference manifest.
    let text = std::fs::read_to_string(product("NT_MANIFEST")).unwrap();
    let m = ntx::manifest::Manifest::parse(&text, "manifest").unwrap();
    let have = ntx::model::from_elf(&device_obj(), "translation.o").unwrap();
    let mut checked = 0;
    for s in m.symbols.iter().filter(|s| s.kind == "OBJECT") {
        let d = &have.defined[&s.name];
        assert_eq!(d.section.to_string(), s.section, "{}", s.name);
        assert_eq!(d.offset, s.offset, "{}: offset in .bss", s.name);
        assert!(
            s.offset.is_some() && s.align.is_some(),
            "{}: layout recorded",
            s.name
        );
        assert!(
            d.align >= s.align,
            "{}: aligned to {:?}, at least {:?}",
            s.name,
            d.align,
            s.align
        );
        checked += 1;
    }
    assert_eq!(checked, 2, "_ctx and _sbuf_window");
    // Nothing else global lives in .bss: the table is local, in a section of its own.
    let data = device_obj();
    let f = object::File::parse(&*data).unwrap();
    let bss = f.section_by_name(".bss").expect(".bss");
    let in_bss: BTreeSet<String> = f
        .symbols()
        .filter(|s| s.section_index() == Some(bss.index()) && s.kind() == object::SymbolKind::Data)
        .map(|s| s.name().unwrap().to_string())
        .collect();
    let want: BTreeSet<String> = ["_ctx", "_sbuf_window"].map(String::from).into();
    assert_eq!(in_bss, want);
    assert_eq!(bss.size(), 16);
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn carries_no_rust_runtime_no_libc_calls_and_no_unwind_tables() {
    let data = device_obj();
    let f = object::File::parse(&*data).unwrap();
    for s in f.symbols() {
        let n = s.name().unwrap();
        for bad in [
            "core",
            "compiler_builtins",
            "memcpy",
            "memset",
            "memmove",
            "abort",
            "rust_begin_unwind",
            "panic",
        ] {
            assert!(
                !n.contains(bad),
                "symbol {n} looks like runtime code ({bad})"
            );
        }
    }
    for s in f.sections() {
        let n = s.name().unwrap();
        assert!(
            !n.contains("eh_frame") && !n.contains("gcc_except") && !n.contains(".debug"),
            "section {n}"
        );
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn archive_has_one_member_with_a_symbol_index() {
    let data = std::fs::read(product("NT_DEVICE_LIB")).unwrap();
    let a = ArchiveFile::parse(&*data).unwrap();
    let members: Vec<_> = a.members().map(|m| m.unwrap()).collect();
    assert_eq!(members.len(), 1);
    assert_eq!(members[0].name(), b"translation.o");
    assert_eq!(
        members[0].data(&*data).unwrap(),
        &device_obj()[..],
        "the member is the object"
    );
    let index: BTreeSet<String> = a
        .symbols()
        .unwrap()
        .expect("a symbol index")
        .map(|s| String::from_utf8(s.unwrap().name().to_vec()).unwrap())
        .collect();
    let want: BTreeSet<String> = exports().map(|s| s.elf_name.to_string()).collect();
    assert_eq!(index, want);
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn links_with_gnu_ld_and_every_literal_is_aligned() {
    // GNU ld checks l32r targets: a misaligned literal is "dangerous relocation: l32r:
    // misaligned literal target". Link every function in (a driver that calls them all).
    let dir = scratch("device_link");
    let c = dir.join("drv.c");
    std::fs::write(
        &c,
        r#"
typedef unsigned long long u64;
void *_Z16neuron_translatePvy(void *, u64);
void *_Z20neuron_translate_ctxv(void);
int _Z31neuron_translate_mapping_lookupPvyPyS0_(void *, u64, u64 *, u64 *);
void _Z19_init_translate_ctxv(void);
u64 _ZN12extended_isa3sdk11hbm_scratchE;
extern u64 _sbuf_window;
int _start(void) {
    u64 w, l;
    _Z19_init_translate_ctxv();
    void *c = _Z20neuron_translate_ctxv();
    return (int)(unsigned long)_Z16neuron_translatePvy(c, 5) + _Z31neuron_translate_mapping_lookupPvyPyS0_(c, 5, &w, &l) + (int)_sbuf_window;
}
"#,
    )
    .unwrap();
    let drv = dir.join("drv.o");
    run_ok(
        Command::new(tool("XTENSA_CLANG"))
            .args([
                "--target=xtensa",
                "-O2",
                "-Xclang",
                "-target-feature",
                "-Xclang",
                "+windowed",
                "-c",
            ])
            .arg(&c)
            .arg("-o")
            .arg(&drv),
    );
    let out = run_ok(
        Command::new(tool("XTENSA_LD"))
            .args([
                "-static",
                "-e",
                "_start",
                "--fatal-warnings",
                "--no-warn-execstack",
            ])
            .arg(&drv)
            .arg(product("NT_DEVICE_OBJ"))
            .arg("-o")
            .arg(dir.join("linked.elf")),
    );
    assert!(
        out.stderr.is_empty(),
        "ld said: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Every literal section is 4-aligned in the object itself.
    let data = device_obj();
    let f = object::File::parse(&*data).unwrap();
    let mut literals = 0;
    for s in f.sections() {
        if s.name().unwrap().starts_with(".literal") {
            literals += 1;
            assert!(
                s.align() >= 4,
                "{} is {}-aligned",
                s.name().unwrap(),
                s.align()
            );
        }
    }
    assert!(literals > 0);
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_librarys_symbol_table_matches_the_seed_manifest() {
    let text = std::fs::read_to_string(product("NT_MANIFEST")).unwrap();
    let m = ntx::manifest::Manifest::parse(&text, "manifest").unwrap();
    let want: BTreeSet<(String, String, u64)> = m
        .symbols
        .iter()
        .map(|s| (s.name.clone(), s.kind.clone(), s.size.unwrap_or(0)))
        .collect();
    let have: BTreeSet<(String, String, u64)> = original_exports()
        .map(|s| match s.kind {
            SymbolKind::Function => (s.elf_name.to_string(), "FUNC".to_string(), 0),
            SymbolKind::Object { device_size } => (
                s.elf_name.to_string(),
                "OBJECT".to_string(),
                u64::from(device_size),
            ),
        })
        .collect();
    assert_eq!(
        have, want,
        "src/symbols.rs exports vs abi-tests/reference/translation.toml"
    );
    let want_imports: BTreeSet<&str> = m.imports.iter().map(|i| i.name.as_str()).collect();
    let have_imports: BTreeSet<&str> = imports().map(|s| s.elf_name).collect();
    assert_eq!(have_imports, want_imports);
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_hand_written_lookup_uses_the_layouts_offsets_and_leaves_no_local_symbol() {
    use neuron_translate::layout::offsets;
    // xtensa/lookup.s names the record's offsets in `.set` lines; they must be layout.rs's.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../xtensa/lookup.s");
    let source = std::fs::read_to_string(path).unwrap();
    let set: Vec<(&str, usize)> = source
        .lines()
        .filter_map(|l| l.trim().strip_prefix(".set"))
        .map(|l| {
            let (name, value) = l.split_once(',').expect(".set NAME, VALUE");
            (name.trim(), value.trim().parse().expect("a decimal value"))
        })
        .collect();
    let want = [
        (".LNT_RECORD_SIZE", offsets::RECORD_SIZE),
        (".LNT_PTR", offsets::PTR),
        (".LNT_MASK", offsets::MASK),
    ];
    assert_eq!(set, want, "xtensa/lookup.s's record offsets");
    // Its constants and labels are assembler-local: the object gains no symbol from them.
    let data = device_obj();
    let f = object::File::parse(&*data).unwrap();
    let absolute: Vec<String> = f
        .symbols()
        .filter(|s| s.section() == SymbolSection::Absolute)
        .map(|s| s.name().unwrap_or("?").to_string())
        .collect();
    assert!(absolute.is_empty(), "absolute symbols: {absolute:?}");
    let lookup = f
        .symbol_by_name("_Z31neuron_translate_mapping_lookupPvyPyS0_")
        .expect("the lookup");
    let section = f.section_by_index(lookup.section_index().unwrap()).unwrap();
    assert_eq!(
        section.name().unwrap(),
        ".text._Z31neuron_translate_mapping_lookupPvyPyS0_",
        "a section of its own, as the compiler would have given it"
    );
}
