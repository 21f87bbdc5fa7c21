//! `ntx op run --device`: the op's kernels built for the Q7 and linked into a program for
//! the emulated core (docs/customop-device.md): each compute source compiled by clang for
//! Xtensa against the SDK's headers and the device's C and C++ headers (pkg-config
//! `neuron_customop_device`), assembled around LLVM's literal-pool bug as the device
//! object is (xtensa/assemble.sh), the same generated `main` as the host program's, the
//! device runtime and a translation object (the SDK's, or `--translation FILE`) linked by
//! GNU ld for Xtensa. What the device cannot build is said, by name, and nothing runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object, ObjectSection};

use crate::op::{glue, kernels_in, Build};
use crate::op_error::{Compiler, FileAction, OpError};

/// What the SDK's device side is made of (its pkg-config variables).
#[derive(Debug, Clone)]
pub struct DeviceSdk {
    cflags: Vec<String>,
    runtime: PathBuf,
    /// The SDK's translation object.
    pub translation: PathBuf,
    mattr: String,
    clang: String,
    llvm_mc: String,
    llvm_objcopy: String,
    ld: String,
    /// The emulator the runner starts.
    pub qemu: String,
    /// The qemu plugin that counts what the program executes (sdk/qemu/count_plugin.c).
    pub count_plugin: String,
}

/// The device side of the installed SDK.
pub fn device_sdk() -> Result<DeviceSdk, OpError> {
    let q = |args: &[&str]| crate::op_sdk::pkg_config(args, "neuron_customop_device");
    let var = |name: &str| -> Result<String, OpError> { Ok(q(&["--variable", name])?.join(" ")) };
    Ok(DeviceSdk {
        cflags: q(&["--cflags"])?,
        runtime: var("runtime")?.into(),
        translation: var("translation")?.into(),
        mattr: var("mattr")?,
        clang: var("clang")?,
        llvm_mc: var("llvm_mc")?,
        llvm_objcopy: var("llvm_objcopy")?,
        ld: var("ld")?,
        qemu: var("qemu")?,
        count_plugin: var("count_plugin")?,
    })
}

/// What a tool that failed wrote on stderr.
struct ToolFailed {
    said: String,
}

/// `cmd` (the program `what`) run: what it said on stderr, as `Ok` if it succeeded and as
/// [`ToolFailed`] if not; an error if it did not start.
fn run(cmd: &mut Command, what: &str) -> Result<Result<String, ToolFailed>, OpError> {
    let out = crate::guard::output(cmd).map_err(OpError::start(what))?;
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    Ok(if out.status.success() {
        Ok(said)
    } else {
        Err(ToolFailed { said })
    })
}

/// The device's front end on `src`: the target, its headers, the device's language and
/// warnings (`crate::parity`), then `b`'s own flags, then `what` (the output's flags).
/// The device's compile has no `-fno-exceptions` nor `-fno-rtti` (the decode's
/// build-custom-op-codegen page); the emulation's (`emulated`) has both: it has no unwinder.
fn front_end(
    sdk: &DeviceSdk,
    b: &Build,
    src: &Path,
    dir: &Path,
    what: &[&std::ffi::OsStr],
    emulated: bool,
) -> Result<Command, OpError> {
    let mut cmd = Command::new(&sdk.clang);
    codegen_flags(&mut cmd, sdk, dir);
    cmd.args(["-g", "-nostdinc"]);
    if emulated {
        cmd.args(["-fno-exceptions", "-fno-rtti"]);
    }
    cmd.arg(crate::parity::DEVICE_CHECKS)
        .arg(crate::parity::CLANG10_FP_CONTRACT)
        .arg(format!("-std={}", b.std))
        .args(crate::parity::warning_flags(b.parity))
        .args(&sdk.cflags)
        .arg("-isystem")
        .arg(resource_include(&sdk.clang)?)
        .args(&b.cflags)
        .args(what)
        .arg(src);
    Ok(cmd)
}

/// The device's compile of `src` up to its diagnostics (`-fsyntax-only`): what the host
/// build is held to. The refusal says the device refuses it, in the compiler's words.
pub fn check(sdk: &DeviceSdk, b: &Build, src: &Path) -> Result<(), OpError> {
    let mut cmd = front_end(sdk, b, src, &b.dir, &["-fsyntax-only".as_ref()], false)?;
    run(&mut cmd, &sdk.clang)?
        .map(|_| ())
        .map_err(|f| OpError::Device(crate::parity::refusal(src, &f.said)))
}

/// Why the emulation's compile of `src` failed, where the device's own compile passed it
/// (the source was held to that first): C++ exceptions or RTTI, which the device's compile
/// accepts and this emulation cannot run, said so; anything else in the compiler's words.
fn emulation_refusal(src: &Path, stderr: &str) -> String {
    let exceptions = stderr.contains("with exceptions disabled");
    let rtti = stderr.contains("-fno-rtti") || stderr.contains("requires -frtti");
    if !exceptions && !rtti {
        return crate::parity::refusal(src, stderr);
    }
    let what = match (exceptions, rtti) {
        (true, true) => "C++ exceptions and RTTI",
        (true, false) => "C++ exceptions",
        _ => "RTTI (typeid, dynamic_cast)",
    };
    format!(
        "{}: uses {what}, which the device's compile accepts (its flags have no -fno-exceptions \
         nor -fno-rtti) and the emulated Q7 does not run (no unwinder): run it without --device. \
         The device links libc++-e, which the decode calls its embedded, exceptions-disabled \
         C++ library: whether it throws there is not known (docs/customop-device.md).\n{stderr}",
        src.display()
    )
}

/// Each compute source through the device's compile up to its diagnostics
/// ([`crate::op_device::check`]), unless the build opted out: the device's language first.
fn hold(b: &Build) -> Result<(), OpError> {
    if !b.parity {
        return Ok(());
    }
    if b.std != crate::parity::STD {
        return Err(OpError::Device(format!(
            "--std={}: the device compiles kernels as {} (--no-device-parity builds them otherwise, here only)",
            b.std,
            crate::parity::STD
        )));
    }
    let sdk = device_sdk().map_err(|e| OpError::NoDeviceCompile(Box::new(e)))?;
    b.compute.iter().try_for_each(|src| check(&sdk, b, src))
}

/// The runner program for `b` ([`crate::op::build`]), held first to the device's compile
/// unless the build opted out: what `ntx op build` and `ntx op run` build.
pub fn build_held(b: &Build) -> Result<PathBuf, OpError> {
    hold(b)?;
    crate::op::build(b)
}

/// Compiles `src` for the device into `obj`: to LLVM IR (optimized), the IR's selects of
/// two floating-point constants split ([`split_fp_constant_selects`]), the IR to assembly
/// (no IR pass again), then assembled (see the module's doc).
fn compile(sdk: &DeviceSdk, b: &Build, src: &Path, obj: &Path) -> Result<(), OpError> {
    let ir = obj.with_extension("ll");
    let asm = obj.with_extension("s");
    let dir = obj.parent().unwrap_or(Path::new("."));
    let mut cmd = front_end(
        sdk,
        b,
        src,
        dir,
        &[
            "-S".as_ref(),
            "-emit-llvm".as_ref(),
            "-o".as_ref(),
            ir.as_os_str(),
        ],
        true,
    )?;
    run(&mut cmd, &sdk.clang)?.map_err(|f| OpError::Device(emulation_refusal(src, &f.said)))?;
    // The IR and the assembly are bytes: the assembly's comments print the debug
    // information's constants raw (a float's DW_OP_implicit_value: -1.0f is 0x80 0xbf),
    // which need not be UTF-8. Both edits touch ASCII lines only.
    let text = std::fs::read(&ir).map_err(OpError::file(FileAction::Read, &ir))?;
    std::fs::write(&ir, split_fp_constant_selects(&text))
        .map_err(OpError::file(FileAction::Write, &ir))?;
    let mut cmd = Command::new(&sdk.clang);
    codegen_flags(&mut cmd, sdk, dir);
    cmd.args(["-Xclang", "-disable-llvm-passes", "-S"])
        .arg(&ir)
        .arg("-o")
        .arg(&asm);
    run(&mut cmd, &sdk.clang)?.map_err(|f| OpError::Compile {
        compiler: Compiler::Device,
        path: src.into(),
        said: f.said,
        hint: String::new(),
    })?;
    // clang writes call-frame directives its own assembler rejects for Xtensa.
    let text = std::fs::read(&asm).map_err(OpError::file(FileAction::Read, &asm))?;
    std::fs::write(&asm, without_cfi(&text)).map_err(OpError::file(FileAction::Write, &asm))?;
    assemble(sdk, &asm, obj)
}

/// Assembly `text` without its call-frame directives (`.cfi_*` lines), its other bytes as
/// they are.
pub fn without_cfi(text: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(text.len());
    for line in text.split_inclusive(|b| *b == b'\n') {
        if !line.trim_ascii_start().starts_with(b".cfi_") {
            kept.extend_from_slice(line);
        }
    }
    kept
}

/// The target and code generation flags of both of a compile's steps; the compiler's
/// temporaries (and no crash reproducer) in `dir`, the build folder.
fn codegen_flags(cmd: &mut Command, sdk: &DeviceSdk, dir: &Path) {
    cmd.env("TMPDIR", dir)
        .args([
            "--target=xtensa",
            crate::parity::OPT,
            "-fno-crash-diagnostics",
        ])
        .args(["-ffunction-sections", "-fdata-sections", "-fno-jump-tables"])
        .args(features(&sdk.mattr));
}

/// LLVM IR with each `select` of two `float` (or `double`) constants made a `select` of
/// their bit patterns and a `bitcast`: LLVM 22's Xtensa backend cannot select the
/// constant-pool load the DAG combiner makes of the former ("Cannot select ...
/// TargetConstantPool"), so `o[i] = w > h ? 1.0f : 0.0f` would refuse the whole file. The
/// same value, bit for bit.
pub fn split_fp_constant_selects(ir: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ir.len() + 64);
    for line in ir.split_inclusive(|b| *b == b'\n') {
        match std::str::from_utf8(line)
            .ok()
            .and_then(|l| fp_constant_select(l.trim_end_matches('\n')))
        {
            Some(split) => {
                out.extend_from_slice(split.as_bytes());
                out.push(b'\n');
            }
            None => out.extend_from_slice(line),
        }
    }
    out
}

/// `%x = select i1 %c, float A, float B` (A, B constants) as two instructions.
fn fp_constant_select(line: &str) -> Option<String> {
    let indent = &line[..line.len() - line.trim_start().len()];
    let (lhs, rhs) = line.trim().split_once(" = select ")?;
    let name = lhs.strip_prefix('%').filter(|n| !n.starts_with('"'))?;
    let (rhs, meta) = match rhs.split_once(", !") {
        Some((r, m)) => (r, format!(", !{m}")),
        None => (rhs, String::new()),
    };
    let [cond, a, b]: [&str; 3] = rhs.split(", ").collect::<Vec<_>>().try_into().ok()?;
    let cond = cond.strip_prefix("i1 ").filter(|c| c.starts_with('%'))?;
    let ((ty, a), (ty_b, b)) = (a.split_once(' ')?, b.split_once(' ')?);
    let (int, a, b) = match (ty, ty_b) {
        ("float", "float") => ("i32", i64::from(fp_bits(a)?.1), i64::from(fp_bits(b)?.1)),
        ("double", "double") => ("i64", fp_bits(a)?.0, fp_bits(b)?.0),
        _ => return None,
    };
    Some(format!(
        "{indent}%ntsel.{name} = select i1 {cond}, {int} {a}, {int} {b}{meta}\n\
         {indent}%{name} = bitcast {int} %ntsel.{name} to {ty}{meta}"
    ))
}

/// An IR floating-point constant (decimal, or LLVM's 64-bit hex form) as a double's and a
/// float's bit patterns, signed as IR integers print.
fn fp_bits(text: &str) -> Option<(i64, i32)> {
    let value = match text.strip_prefix("0x") {
        Some(hex) => f64::from_bits(u64::from_str_radix(hex, 16).ok()?),
        None if text.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+') => {
            text.parse().ok()?
        }
        None => return None,
    };
    Some((value.to_bits() as i64, (value as f32).to_bits() as i32))
}

/// `-target-feature` for each ISA option.
fn features(mattr: &str) -> Vec<String> {
    mattr
        .split(',')
        .filter(|f| !f.is_empty())
        .flat_map(|f| ["-Xclang", "-target-feature", "-Xclang", f].map(String::from))
        .collect()
}

/// clang's own headers (<stdarg.h>, <stddef.h>), which -nostdinc leaves out.
fn resource_include(clang: &str) -> Result<PathBuf, OpError> {
    let out = Command::new(clang)
        .arg("-print-resource-dir")
        .output()
        .map_err(OpError::start(clang))?;
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()).join("include"))
}

/// llvm-mc, then each literal section aligned to 4 (llvm-mc leaves them 1-aligned).
fn assemble(sdk: &DeviceSdk, asm: &Path, obj: &Path) -> Result<(), OpError> {
    let raw = obj.with_extension("raw.o");
    let mut cmd = Command::new(&sdk.llvm_mc);
    cmd.args([
        "-triple=xtensa",
        &format!("-mattr={}", sdk.mattr),
        "-filetype=obj",
    ])
    .arg(asm)
    .arg("-o")
    .arg(&raw);
    run(&mut cmd, &sdk.llvm_mc)?.map_err(|f| OpError::Assemble {
        path: asm.into(),
        said: f.said,
    })?;
    let data = std::fs::read(&raw).map_err(OpError::file(FileAction::Read, &raw))?;
    let file = object::File::parse(&*data).map_err(|source| OpError::NotObject {
        path: raw.clone(),
        source,
    })?;
    let mut cmd = Command::new(&sdk.llvm_objcopy);
    for s in file.sections() {
        if let Ok(name) = s.name() {
            if name.starts_with(".literal") {
                cmd.arg(format!("--set-section-alignment={name}=4"));
            }
        }
    }
    run(cmd.arg(&raw).arg(obj), &sdk.llvm_objcopy)?.map_err(|f| OpError::Assemble {
        path: asm.into(),
        said: f.said,
    })?;
    let _ = std::fs::remove_file(&raw);
    Ok(())
}

/// Why the device cannot give `symbol`, where a reason is known.
fn missing(symbol: &str) -> &'static str {
    if ["printf", "puts", "putchar", "vprintf", "fprintf"].contains(&symbol) {
        "printf and the like: the device runtime has no output yet (clang's Xtensa variadic calls are not usable)"
    } else if symbol.starts_with("__cxa_") || symbol.starts_with("_Unwind") {
        "C++ exceptions: kernels are built without them"
    } else {
        "not in the device runtime (sdk/device)"
    }
}

/// What the device runtime needs of a translation object, by ELF name: the contract's
/// neuron_translate, neuron_translate_ctx and _init_translate_ctx.
const NEEDED: [(&str, &str); 3] = [
    ("_Z16neuron_translatePvy", "neuron_translate"),
    ("_Z20neuron_translate_ctxv", "neuron_translate_ctx"),
    ("_Z19_init_translate_ctxv", "_init_translate_ctx"),
];

/// The linker flags `translation` needs: none when it has `neuron_translate_span` (this
/// project's object); the device runtime's span by lookup in its place otherwise (the
/// original's object, which has the contract's functions only). The reason, naming the
/// object, when it lacks a function the runtime needs.
fn translation_flags(translation: &Path) -> Result<Vec<String>, OpError> {
    let refused = |said: String| OpError::Translation {
        path: translation.into(),
        said,
    };
    let data = std::fs::read(translation).map_err(|e| refused(e.to_string()))?;
    let defined = crate::op::global_definitions(&data).map_err(|e| refused(e.to_string()))?;
    let missing: Vec<&str> = NEEDED
        .iter()
        .filter(|(elf, _)| !defined.contains(*elf))
        .map(|(_, n)| *n)
        .collect();
    if !missing.is_empty() {
        return Err(refused(format!(
            "does not define {} (the contract's functions the device runtime calls)",
            missing.join(", ")
        )));
    }
    Ok(if defined.contains("neuron_translate_span") {
        Vec::new()
    } else {
        vec![
            "-u".into(),
            "nt_span_by_lookup".into(),
            "--defsym=neuron_translate_span=nt_span_by_lookup".into(),
        ]
    })
}

/// Builds the program for the device for `b` with `translation`: its path.
pub fn build(b: &Build, sdk: &DeviceSdk, translation: &Path) -> Result<PathBuf, OpError> {
    let span_flags = translation_flags(translation)?;
    let dir = b.dir.join("device");
    std::fs::create_dir_all(&dir).map_err(OpError::file(FileAction::Make, &dir))?;
    let mut objects = Vec::new();
    let mut kernels = Vec::new();
    for (k, src) in b.compute.iter().enumerate() {
        let obj = dir.join(format!("{k}.o"));
        compile(sdk, b, src, &obj)?;
        let data = std::fs::read(&obj).map_err(OpError::file(FileAction::Read, &obj))?;
        kernels.extend(kernels_in(&data).map_err(|source| OpError::NotObject {
            path: obj.clone(),
            source,
        })?);
        objects.push(obj);
    }
    // The device's build declares each kernel from its op's schema: of an overloaded name,
    // that overload is the one bound (the host program, built first, describes the ops).
    let kernels = crate::op::as_declared(&b.dir.join("op"), kernels)?;
    let main = dir.join("ntx-op-main.cpp");
    std::fs::write(&main, glue(&kernels, &[], false))
        .map_err(OpError::file(FileAction::Write, &main))?;
    let main_obj = dir.join("ntx-op-main.o");
    compile(sdk, b, &main, &main_obj)?;
    objects.push(main_obj);
    let elf = dir.join("op.elf");
    let mut cmd = Command::new(&sdk.ld);
    cmd.args([
        "-static",
        "-e",
        "_start",
        "-u",
        "_start",
        "--no-warn-execstack",
    ])
    .arg(format!(
        "--section-start=.nxregs={:#x}",
        neuron_translate::regs::NX_REG_BASE
    ))
    .args([
        "--wrap=neuron_translate_span",
        "--wrap=_Z16neuron_translatePvy",
    ])
    .args(&span_flags)
    .args(&objects)
    .arg(&sdk.runtime)
    .arg(translation)
    .arg("-o")
    .arg(&elf);
    if let Err(ToolFailed { said: e }) = run(&mut cmd, &sdk.ld)? {
        let mut names: Vec<String> = e
            .lines()
            .filter_map(|l| {
                l.split_once("undefined reference to `")?
                    .1
                    .split_once('\'')
                    .map(|s| s.0.to_string())
            })
            .collect();
        names.sort();
        names.dedup();
        if names.is_empty() {
            return Err(OpError::DeviceLink { said: e });
        }
        let lacks = names.into_iter().map(|s| {
            let why = missing(&s);
            (s, why)
        });
        return Err(OpError::DeviceLacks {
            lacks: lacks.collect(),
        });
    }
    Ok(elf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_of_two_fp_constants_become_selects_of_their_bits() {
        let ir = "  %14 = select i1 %13, float 1.000000e+00, float 0.000000e+00, !dbg !7\n  %x = select i1 %c, double -2.500000e+00, double 0x7FF0000000000000\n  %y = select i1 %c, float %a, float 0.000000e+00\n";
        let out = String::from_utf8(split_fp_constant_selects(ir.as_bytes())).unwrap();
        assert!(out.contains("  %ntsel.14 = select i1 %13, i32 1065353216, i32 0, !dbg !7\n  %14 = bitcast i32 %ntsel.14 to float, !dbg !7\n"), "{out}");
        assert!(
            out.contains(
                "%ntsel.x = select i1 %c, i64 -4610560118520545280, i64 9218868437227405312"
            ),
            "{out}"
        );
        assert!(
            out.contains("  %y = select i1 %c, float %a, float 0.000000e+00\n"),
            "a variable operand stays"
        );
        assert_eq!(
            fp_bits("0x3FB99999A0000000").map(|b| b.1),
            Some(0.1f32.to_bits() as i32)
        );
        assert_eq!(fp_bits("0xH3C00"), None);
    }

    #[test]
    fn bytes_that_are_not_utf8_pass_through_both_edits() {
        let asm =
            b"\t.cfi_startproc\n# comment \xff\xfe raw\n\tentry a1, 32\n  .cfi_def_cfa_offset 32\n";
        assert_eq!(
            without_cfi(asm),
            b"# comment \xff\xfe raw\n\tentry a1, 32\n".to_vec()
        );
        let ir = b"; \xe9t\xe9\n  %1 = select i1 %c, float 1.000000e+00, float 0.000000e+00\n";
        let out = split_fp_constant_selects(ir);
        assert!(
            out.starts_with(b"; \xe9t\xe9\n  %ntsel.1 = select"),
            "{}",
            String::from_utf8_lossy(&out)
        );
    }
}
