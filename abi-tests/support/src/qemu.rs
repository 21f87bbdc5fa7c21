//! Building and running test programs for the device under `qemu-xtensa` (linux-user):
//! C compiled by clang for the device's ISA, the start-up stub, the unmodified device
//! object, linked by GNU ld for Xtensa.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use neuron_translate::layout::offsets::CTX_SIZE;
use neuron_translate::layout::RECORDS;
use neuron_translate::{RegisterLog, TranslationCtx};

use crate::gen::{LibCall, TableShape, TableVector};
use crate::tools::{product, run_ok, tool};
use crate::{bind_registers, unbind_registers};

pub use crate::root;

/// clang flags for the device: the ISA options of the target specification (XTENSA_MATTR,
/// from the Makefile), freestanding, optimised as the consumers are.
pub fn device_cflags() -> Vec<String> {
    let mut f: Vec<String> = [
        "--target=xtensa",
        "-O2",
        "-ffreestanding",
        "-fno-builtin",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-std=c11",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for feat in tool("XTENSA_MATTR").split(',').filter(|s| !s.is_empty()) {
        f.extend([
            "-Xclang".into(),
            "-target-feature".into(),
            "-Xclang".into(),
            feat.to_string(),
        ]);
    }
    f
}

/// Compiles C for the device: to assembly, then through xtensa/assemble.sh (clang's
/// integrated assembler has the same literal-pool bug as rustc's).
pub fn compile_c(src: &Path, out: &Path, includes: &[&Path]) {
    compile_c_with(src, out, includes, &[]);
}

/// [`compile_c`] with extra compiler flags (`-DNAME`, say).
pub fn compile_c_with(src: &Path, out: &Path, includes: &[&Path], extra: &[&str]) {
    let mut c = Command::new(tool("XTENSA_CLANG"));
    // A later -std wins: C++ sources give their own (DEVICE_CXXFLAGS).
    c.args(device_cflags()).args(extra);
    for i in includes {
        c.arg("-I").arg(i);
    }
    let asm = out.with_extension("s");
    run_ok(c.arg("-S").arg(src).arg("-o").arg(&asm));
    run_ok(
        Command::new(root().join("xtensa/assemble.sh"))
            .arg(&asm)
            .arg(out),
    );
}

/// The least a user's cross build for the device passes to clang: Xtensa, freestanding (no
/// C library), the windowed ABI. (The test programs take [`device_cflags`], every feature
/// of the target.)
pub const USER_DEVICE_FLAGS: [&str; 6] = [
    "--target=xtensa",
    "-ffreestanding",
    "-Xclang",
    "-target-feature",
    "-Xclang",
    "+windowed",
];

/// The flags that make C++ for the device: C++17, no exceptions, no run-time type
/// information (neuron_translate.hpp's promise), replacing [`device_cflags`]'s `-std=c11`.
pub const DEVICE_CXXFLAGS: [&str; 5] = ["-x", "c++", "-std=c++17", "-fno-exceptions", "-fno-rtti"];

/// The linker arguments that send the translate calls of a program through the window
/// emulation of abi-tests/qemu/emu_windows.hpp (by their ELF names).
pub const EMU_WRAP: [&str; 2] = [
    "--wrap=neuron_translate_span",
    "--wrap=_Z16neuron_translatePvy",
];

/// Compiles C++ for the device, as [`compile_c_with`] compiles C.
pub fn compile_cxx(src: &Path, out: &Path, includes: &[&Path]) {
    compile_c_with(src, out, includes, &DEVICE_CXXFLAGS);
}

/// Assembles the start-up stub.
pub fn start_object(dir: &Path) -> PathBuf {
    let out = dir.join("start.o");
    run_ok(
        Command::new(tool("LLVM_MC"))
            .args([
                "-triple=xtensa",
                &format!("-mattr={},+exception", tool("XTENSA_MATTR")),
                "-filetype=obj",
            ])
            .arg(root().join("abi-tests/qemu/start.S"))
            .arg("-o")
            .arg(&out),
    );
    out
}

/// Links a static program from `objects` and the unmodified device object, with the
/// emulated NX register block (the `.nxregs` section of abi-tests/qemu/support.c) placed
/// at its NX-local address.
pub fn link(objects: &[PathBuf], out: &Path) {
    link_with(objects, &product("NT_DEVICE_OBJ"), &[], out)
}

/// [`link`] with another device object (a mutant, say) and more sections placed at fixed
/// addresses.
pub fn link_with(objects: &[PathBuf], device: &Path, sections: &[(&str, u32)], out: &Path) {
    link_args(objects, device, sections, &[], out);
}

/// [`link_with`] with more linker arguments (`--wrap=SYMBOL`, say).
pub fn link_args(
    objects: &[PathBuf],
    device: &Path,
    sections: &[(&str, u32)],
    args: &[&str],
    out: &Path,
) {
    let mut c = Command::new(tool("XTENSA_LD"));
    c.args(args);
    c.args(["-static", "-e", "_start", "--no-warn-execstack"])
        .arg(format!(
            "--section-start=.nxregs={:#x}",
            neuron_translate::regs::NX_REG_BASE
        ));
    for (name, at) in sections {
        c.arg(format!("--section-start={name}={at:#x}"));
    }
    run_ok(c.args(objects).arg(device).arg("-o").arg(out));
}

/// Builds a device program in a scratch directory named for it: `main_src` (in
/// abi-tests/qemu), support.c, the reference C when `with_reference`, and each generated
/// header of `headers` (name, text) beside them; linked with the device object.
pub fn program(
    name: &str,
    main_src: &str,
    headers: &[(&str, String)],
    with_reference: bool,
) -> PathBuf {
    let dir = crate::tools::scratch(&format!("qemu_{name}"));
    let q = root().join("abi-tests/qemu");
    for (file, text) in headers {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let include = root().join("include");
    let mut sources = vec![
        (q.join(main_src), "main.o"),
        (q.join("support.c"), "support.o"),
    ];
    if with_reference {
        sources.push((root().join("abi-tests/csrc/reference.c"), "reference.o"));
    }
    let mut objs = vec![start_object(&dir)];
    for (src, out) in sources {
        let o = dir.join(out);
        compile_c(&src, &o, &[&include, &q, &dir]);
        objs.push(o);
    }
    let elf = dir.join(format!("{name}.elf"));
    link(&objs, &elf);
    elf
}

/// Runs a program under qemu.
pub fn run(elf: &Path) -> Output {
    Command::new(tool("QEMU_XTENSA"))
        .args(["-cpu", &tool("QEMU_CPU")])
        .arg(elf)
        .output()
        .expect("qemu-xtensa")
}

/// Runs a program under qemu with one trace line per executed instruction, and returns
/// the program counters in order.
pub fn trace_pcs(elf: &Path, log: &Path) -> Vec<u32> {
    run_ok(
        Command::new(tool("QEMU_XTENSA"))
            .args([
                "-cpu",
                &tool("QEMU_CPU"),
                "-d",
                "exec,nochain",
                "-singlestep",
                "-D",
            ])
            .arg(log)
            .arg(elf),
    );
    let text = std::fs::read_to_string(log).expect("trace");
    // Trace 0: 0x7fbd480000c0 [00000000/004000e4/0005bfd3/00000201] symbol
    text.lines()
        .filter_map(|l| {
            let inner = l.split_once('[')?.1.split_once(']')?.0;
            let pc = inner.split('/').nth(1)?;
            u32::from_str_radix(pc, 16).ok()
        })
        .collect()
}

/// Runs a program under qemu and counts the instructions it executes between successive
/// executions of the instruction at `mark` (a function's entry), leaving out blocks that
/// start inside one of `skip`: one count after each time `mark` runs.
///
/// For long runs: qemu logs each translation block once when it translates it (`-d
/// in_asm`: its instructions) and each execution of one (`-d exec,nochain`: its address),
/// and the log is read as it comes, never stored. Exact and repeatable, as the per-
/// instruction trace of [`trace_pcs`] (a block runs whole: every exception of this ISA's
/// windowed calls comes at an `entry` or a return, which qemu ends a block at).
pub fn count_between_marks(elf: &Path, mark: u32, skip: &[(u32, u32)]) -> Vec<u64> {
    use std::collections::HashMap;
    use std::io::BufRead;
    let mut child = Command::new(tool("QEMU_XTENSA"))
        .args(["-cpu", &tool("QEMU_CPU"), "-d", "in_asm,exec,nochain"])
        .arg(elf)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("qemu-xtensa");
    let log = std::io::BufReader::with_capacity(1 << 20, child.stderr.take().unwrap());
    let hex = |s: &str| u32::from_str_radix(s.trim_start_matches("0x"), 16).ok();
    let mut sizes: HashMap<u32, u64> = HashMap::new();
    // The block being listed (`IN:`): its first address and its instructions so far.
    let mut listing: Option<(Option<u32>, u64)> = None;
    let mut counts: Vec<u64> = Vec::new();
    for line in log.lines() {
        let line = line.expect("qemu's log");
        if line.starts_with("IN:") {
            listing = Some((None, 0));
            continue;
        }
        if let (Some((start, n)), Some(addr)) =
            (listing.as_mut(), line.split(':').next().and_then(hex))
        {
            if line.starts_with("0x") {
                start.get_or_insert(addr);
                *n += 1;
                continue;
            }
        }
        if let Some((Some(start), n)) = listing.take() {
            sizes.insert(start, n);
        }
        // Trace 0: 0x7fbd480000c0 [00000000/004000e4/0005bfd3/00000201] symbol
        let Some(pc) = line
            .strip_prefix("Trace ")
            .and_then(|l| l.split_once('[')?.1.split('/').nth(1))
            .and_then(hex)
        else {
            continue;
        };
        if pc == mark {
            counts.push(0);
        } else if let Some(c) = counts.last_mut() {
            if !skip.iter().any(|&(a, b)| a <= pc && pc < b) {
                *c += sizes
                    .get(&pc)
                    .copied()
                    .unwrap_or_else(|| panic!("no listing of the block at {pc:#x}"));
            }
        }
    }
    let status = child.wait().unwrap();
    assert!(status.success(), "{} under qemu: {status}", elf.display());
    counts
}

/// Function symbols of a linked program: name -> [start, end).
pub fn functions(elf: &Path) -> BTreeMap<String, (u32, u32)> {
    use object::{Object, ObjectSymbol};
    let data = std::fs::read(elf).unwrap();
    let f = object::File::parse(&*data).unwrap();
    f.symbols()
        .filter(|s| s.kind() == object::SymbolKind::Text && s.size() > 0)
        .map(|s| {
            (
                s.name().unwrap().to_string(),
                (s.address() as u32, (s.address() + s.size()) as u32),
            )
        })
        .collect()
}

/// The fake register bank the expected values are computed with: block `k` at
/// `BANK + 8k`. The device driver binds the indices to its own bank instead.
const BANK: u64 = 0x1000;

fn table_bytes(out: &mut String, t: &TranslationCtx) {
    out.push('{');
    for b in t.to_bytes() {
        let _ = write!(out, "{b},");
    }
    out.push('}');
}

/// The inputs of the device driver's init check: the engine base (41 MiB above a 4 GiB
/// boundary's neighbourhood, so `_sbuf_window` borrows from the high word), a second one
/// for the re-init, and `hbm_scratch`.
pub const INIT_ENGINE_BASES: [u64; 2] = [0x0028_0100_0000, 0x0050_0000_0000];
/// `hbm_scratch` of the device driver.
pub const INIT_HBM_SCRATCH: u64 = 0x0042_1234_5678;
/// Three addresses in three new 16 MiB regions: on the initial table, refills of slots 0,
/// 1 and 2.
pub const INIT_REFILLS: [u64; 3] = [0x0033_0200_1234, 0x0033_0500_0042, 0x0034_0700_0001];

fn c_bytes(name: &str, t: &TranslationCtx) -> String {
    let mut s = format!("static const unsigned char {name}[{CTX_SIZE}] = ");
    table_bytes(&mut s, t);
    s.push_str(";\n");
    s
}

/// The C declarations of the driver's init check: what `_init_translate_ctx` must build
/// from [`INIT_ENGINE_BASES`] and [`INIT_HBM_SCRATCH`], and what the refills of
/// [`INIT_REFILLS`] must return and store into the register block, in order (each
/// programming is the tag's high word to `reg + 4`, then its low word to `reg`), as the
/// host library computes them.
pub fn init_header() -> String {
    use neuron_translate::{initial_table, sbuf_window, InitInputs};
    let inputs = |engine_base| InitInputs {
        engine_base,
        hbm_scratch: INIT_HBM_SCRATCH,
    };
    let mut t = initial_table(&inputs(INIT_ENGINE_BASES[0]));
    let first = t;
    let mut rec = RegisterLog::default();
    let mut locals = String::new();
    for a in INIT_REFILLS {
        let l = t
            .translate(a, &mut rec)
            .expect("the initial table's registers are usable");
        let _ = write!(locals, "{l:#x}u,");
    }
    let mut stores = String::new();
    for &(reg, tag) in &rec.0 {
        let _ = write!(
            stores,
            "{{{:#x}u,{:#x}u}},{{{reg:#x}u,{:#x}u}},",
            reg + 4,
            (tag >> 32) as u32,
            tag as u32
        );
    }
    let addrs: Vec<String> = INIT_REFILLS.iter().map(|a| format!("{a:#x}ull")).collect();
    format!(
        "#define NT_HBM_SCRATCH {:#x}ull\n\
         static const unsigned long long nt_engine_base[2] = {{{:#x}ull, {:#x}ull}};\n\
         static const unsigned long long nt_sbuf_window[2] = {{{:#x}ull, {:#x}ull}};\n\
         {}{}{}\
         #define NT_INIT_REFILLS {n}\n\
         static const unsigned long long nt_refill_addr[NT_INIT_REFILLS] = {{{}}};\n\
         static const unsigned nt_refill_local[NT_INIT_REFILLS] = {{{locals}}};\n\
         #define NT_INIT_STORES {}\n\
         static const unsigned nt_init_stores[NT_INIT_STORES][2] = {{{stores}}};\n",
        INIT_HBM_SCRATCH,
        INIT_ENGINE_BASES[0],
        INIT_ENGINE_BASES[1],
        sbuf_window(INIT_ENGINE_BASES[0]),
        sbuf_window(INIT_ENGINE_BASES[1]),
        c_bytes("nt_init_table", &first),
        c_bytes("nt_init_refilled", &t),
        c_bytes(
            "nt_init_table2",
            &initial_table(&inputs(INIT_ENGINE_BASES[1]))
        ),
        addrs.join(","),
        2 * rec.0.len(),
        n = INIT_REFILLS.len(),
    )
}

/// Writes the C header the device driver replays: every vector's table (register
/// locations as bank indices), its calls with the results, cursor and register store the
/// host library gives, and the table it ends with; then [`init_header`]. `check_reference` says whether the
/// seed's reference model must agree on a vector (the shapes without the deviations the
/// host differential test models: see abi-tests/library/tests/differential.rs).
pub fn vectors_header(vectors: &[(TableShape, TableVector)]) -> String {
    let mut tables = String::new();
    let mut finals = String::new();
    let mut ops = String::new();
    let mut index = String::new();
    let mut op_count = 0usize;
    for (shape, v) in vectors {
        let mut t = bind_registers(&v.table, BANK);
        let first = op_count;
        for op in &v.ops {
            let mut rec = RegisterLog::default();
            let (kind, addr, result, start, end) = match *op {
                LibCall::Translate(a) => {
                    let r = t
                        .translate(a, &mut rec)
                        .expect("standard vectors have valid registers");
                    (0, a, i64::from(r), 0u64, 0u64)
                }
                LibCall::Lookup(a) => match t.lookup(a) {
                    Some(m) => (1, a, 0, m.start, m.end),
                    None => (1, a, -1, 0, 0),
                },
            };
            let (block, lo, hi) = match rec.0.as_slice() {
                [] => (-1i64, 0u32, 0u32),
                [(reg, tag)] => (
                    ((*reg as u64 - BANK) / 8) as i64,
                    *tag as u32,
                    (*tag >> 32) as u32,
                ),
                more => panic!("one call programs at most one register: {more:?}"),
            };
            let _ = writeln!(
                ops,
                "{{{kind},{addr:#x}ull,{result},{start:#x}ull,{end:#x}ull,{},{block},{lo:#x}u,{hi:#x}u}},",
                t.next_alloc
            );
            op_count += 1;
        }
        table_bytes(&mut tables, &v.table);
        tables.push_str(",\n");
        table_bytes(&mut finals, &unbind_registers(&t, BANK));
        finals.push_str(",\n");
        let _ = writeln!(
            index,
            "{{{first},{},{}}},",
            v.ops.len(),
            u8::from(*shape != TableShape::Wild)
        );
    }
    format!(
        "/* Generated by abi-tests (qemu::vectors_header) from gen::standard_vectors. */\n\
         #define NT_VECTORS {}\n#define NT_OPS {}\n#define NT_RECORDS {}\n\
         struct nt_op {{ unsigned kind; unsigned long long addr; long long result; \
         unsigned long long start; unsigned long long end; unsigned next_alloc; \
         int block; unsigned lo; unsigned hi; }};\n\
         struct nt_vector {{ unsigned first_op; unsigned ops; unsigned check_reference; }};\n\
         static const unsigned char nt_tables[NT_VECTORS][{CTX_SIZE}] = {{\n{tables}}};\n\
         static const unsigned char nt_finals[NT_VECTORS][{CTX_SIZE}] = {{\n{finals}}};\n\
         static const struct nt_vector nt_vectors[NT_VECTORS] = {{\n{index}}};\n\
         static const struct nt_op nt_ops[NT_OPS] = {{\n{ops}}};\n{}",
        vectors.len(),
        op_count,
        RECORDS,
        init_header()
    )
}
