//! `ntx op run`: an op library's sources built against the installed custom-op SDK
//! (pkg-config `neuron_customop_host`) and one op run on NumPy inputs, as
//! `custom_op.load` builds and PyTorch calls it on the device (docs/customop-host.md).
//!
//! The sources compile with the SDK's clang (the device's front end, [`host_compiler`]),
//! C++14 unless told otherwise, `-O3 -g` and the device's `char` before the author's flags; the compute sources have passed the
//! device's own compile first (`crate::op_device::build_held`, `crate::parity`). The
//! kernels need no glue from the author: the compute objects' symbols
//! name every function that could be a kernel (global, taking tensors, integers, floating
//! numbers and `Scalar`), and a generated `main` binds them by name; the registration
//! picks the one it names. Each op's kernel is held to the declaration the device's build
//! makes from the op's schema ([`refuse_undeclared`]). The program it links is the runner (sdk/runtime's `run`),
//! started with the op's arguments. Every command runs under [`crate::guard`].

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object, ObjectSymbol, SymbolKind};

use crate::op_error::{Compiler, FileAction, OpError};
use crate::op_sdk::{host_compiler, pkg_config, sdk_flags};

/// What to build.
#[derive(Debug, Clone)]
pub struct Build {
    /// Compute sources (kernels).
    pub compute: Vec<PathBuf>,
    /// Shape sources (shape functions and `NEURON_LIBRARY`).
    pub shape: Vec<PathBuf>,
    /// The C++ standard (`c++14`).
    pub std: String,
    /// More compiler flags (`extra_cflags`).
    pub cflags: Vec<String>,
    /// Where the objects and the program go.
    pub dir: PathBuf,
    /// Held to the device's compile (`crate::parity`); false only when the author opted
    /// out (`--no-device-parity`), which every run of the program then warns of.
    pub parity: bool,
}

/// The parameter types a kernel may take, as the demangler spells them.
const PARAMS: &[&str] = &[
    "at::Tensor",
    "at::Tensor const&",
    "at::Tensor&",
    "long",
    "long long",
    "double",
    "c10::Scalar",
    "c10::Scalar const&",
    "int",
    "float",
];

/// The kernel parameter the device's build declares for a schema kind (as `--describe`
/// names the shape function's parameters): its codegen forward-declares the kernel from the
/// op's schema, so a kernel defined otherwise does not link there.
fn declared(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "tensor" => "at::Tensor const&",
        "int" => "int",
        "double" => "float",
        "scalar" => "c10::Scalar const&",
        _ => return None,
    })
}

/// One op's kernel as the device's build declares it from the schema: the op's name, the
/// kernel's name and its parameters, as the demangler spells them.
struct Declaration {
    op: String,
    kernel: String,
    params: Vec<String>,
}

/// The declaration of each op's kernel in the program `described` (its `--describe`); an
/// op with a parameter kind the device's build does not declare is left out.
fn declarations(described: &serde_json::Value) -> Vec<Declaration> {
    let ops = described["ops"].as_array().into_iter().flatten();
    ops.filter_map(|op| {
        let params = op["params"].as_array().into_iter().flatten();
        let params: Option<Vec<String>> = params
            .map(|k| k.as_str().and_then(declared).map(str::to_string))
            .collect();
        Some(Declaration {
            op: op["name"].as_str()?.to_string(),
            kernel: op["kernel"].as_str()?.to_string(),
            params: params?,
        })
    })
    .collect()
}

/// `kernels` with each overloaded name narrowed to the overload the op's schema declares
/// (what the device's build declares and so calls), by the host program `exe`'s
/// description; a name no op declares, or none of whose overloads is declared, is kept
/// whole (the host program refused or reports it).
pub fn as_declared(
    exe: &Path,
    kernels: Vec<(String, Vec<String>)>,
) -> Result<Vec<(String, Vec<String>)>, OpError> {
    let declared = declarations(&describe(exe)?);
    let is_declared =
        |k: &(String, Vec<String>)| declared.iter().any(|d| d.kernel == k.0 && d.params == k.1);
    let overloaded = |n: &str| kernels.iter().filter(|k| k.0 == n).count() > 1;
    let keep: Vec<bool> = kernels
        .iter()
        .map(|k| {
            !overloaded(&k.0)
                || is_declared(k)
                || !kernels.iter().any(|o| o.0 == k.0 && is_declared(o))
        })
        .collect();
    Ok(kernels
        .into_iter()
        .zip(keep)
        .filter_map(|(k, keep)| keep.then_some(k))
        .collect())
}

/// The C++ spelling of a declaration `at::Tensor name(params)`, `const` written first.
fn spelled(name: &str, params: &[String]) -> String {
    let params: Vec<String> = params
        .iter()
        .map(|p| match p.strip_suffix(" const&") {
            Some(t) => format!("const {t}&"),
            None => p.clone(),
        })
        .collect();
    format!("at::Tensor {name}({})", params.join(", "))
}

/// Each op's kernel as the compute objects define it against the declaration the device's
/// build makes from the op's schema (`described`, the program's `--describe`): the first
/// that differs, refused.
pub fn refuse_undeclared(
    described: &serde_json::Value,
    kernels: &[(String, Vec<String>)],
) -> Result<(), OpError> {
    for d in declarations(described) {
        let (name, kernel, want) = (d.op.as_str(), d.kernel.as_str(), d.params);
        let defined: Vec<&(String, Vec<String>)> =
            kernels.iter().filter(|k| k.0 == kernel).collect();
        if defined.len() > 1 && !defined.iter().any(|k| k.1 == want) {
            let all: Vec<String> = defined.iter().map(|k| spelled(kernel, &k.1)).collect();
            return Err(OpError::Device(format!(
                "kernel {kernel} of op '{name}' is overloaded ({}) and none is the declaration the device's \
                 build makes from the op's schema, {}: on the device it would not link",
                all.join("; "),
                spelled(kernel, &want)
            )));
        }
        if let [(_, params)] = defined.as_slice() {
            if *params != want {
                return Err(OpError::Device(format!(
                    "kernel {} of op '{name}' does not match the declaration the device's build makes \
                     from the op's schema, {}: on the device it would not link (the codegen declares \
                     Tensor as const at::Tensor&, float as float, int as int, Scalar as const at::Scalar&)",
                    spelled(kernel, params),
                    spelled(kernel, &want)
                )));
            }
        }
    }
    Ok(())
}

fn compile(cxx: &str, b: &Build, cflags: &[String], src: &Path, obj: &Path) -> Result<(), OpError> {
    let mut cmd = Command::new(cxx);
    // -O3: the host's own speed at the flags the samples build with (no extra_cflags), the
    // loops over TCM buffers vectorized (at -O2 the TCM relu over 256 MiB took 10-11x NumPy,
    // at -O3 2.7x: bench/README.md); with debug information so that a report can name the
    // kernel's source line. The author's flags come after (and so win). The device's build
    // keeps its own flags (op_device.rs).
    // The compiler's temporaries go in the build folder (removed with it), not in $TMPDIR.
    // DWARF 4: clang's default 5 is more than Debian 12's valgrind (3.19) reads. Frame
    // pointers: a fault in the i386 C library (a copy's memcpy) finds the kernel's frames
    // through them (the runtime's child.rs, `interrupted_stack`).
    cmd.env("TMPDIR", &b.dir)
        .arg(format!("-std={}", b.std))
        .args(["-O3", "-gdwarf-4", "-fno-omit-frame-pointer", "-pipe"])
        .arg(crate::parity::HOST_CHECKS)
        .args(crate::parity::HOST_MODEL)
        .args(["-MD", "-MF"])
        .arg(obj.with_extension("d"))
        .args(cflags)
        .args(&b.cflags)
        .arg("-c")
        .arg(src)
        .arg("-o")
        .arg(obj);
    let out = crate::guard::output(&mut cmd).map_err(OpError::start(cxx))?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        return Err(OpError::Compile {
            compiler: Compiler::Host,
            path: src.into(),
            hint: crate::parity::proxy_hint(&said).to_string(),
            said,
        });
    }
    Ok(())
}

/// The C++ ABI's entry points a kernel calls when it throws or casts dynamically (the
/// device's compile accepts that; the device runtime here has none of them, and the
/// device's libc++-e is the decode's exceptions-disabled library). Not the personality
/// routine nor `__cxa_begin_catch`: any code with destructors or `noexcept` calls refers
/// to those under `-fexceptions`, throwing or not.
const EXCEPTION_ABI: [&str; 5] = [
    "__cxa_throw",
    "__cxa_rethrow",
    "__dynamic_cast",
    "__cxa_bad_cast",
    "__cxa_bad_typeid",
];

/// The plain C functions (no C++ mangling, no leading underscore) `data` (an object)
/// calls but does not define, and the C++ ABI's exception and RTTI entry points it calls.
pub fn c_calls(data: &[u8]) -> Result<Vec<String>, object::Error> {
    let file = object::File::parse(data)?;
    let mut names: Vec<String> = file
        .symbols()
        .filter(|s| s.is_undefined())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .filter(|n| {
            n.starts_with(|c: char| c.is_ascii_alphabetic()) || EXCEPTION_ABI.contains(&n.as_str())
        })
        .collect();
    names.sort();
    names.dedup();
    Ok(names)
}

/// The global symbols an object defines.
pub fn global_definitions(
    data: &[u8],
) -> Result<std::collections::BTreeSet<String>, object::Error> {
    let file = object::File::parse(data)?;
    Ok(file
        .symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .filter_map(|s| s.name().ok().map(str::to_string))
        .collect())
}

/// The symbols the device side defines for a kernel's program, if the device SDK is
/// installed: its runtime archive's (`neuron_customop_device`'s `runtime`) and the
/// translation object's.
fn device_runtime_symbols() -> Option<std::collections::BTreeSet<String>> {
    let var =
        |v: &str| pkg_config(&["--variable", v], "neuron_customop_device").map(|w| w.join(" "));
    let runtime = std::fs::read(var("runtime").ok()?).ok()?;
    let archive = object::read::archive::ArchiveFile::parse(&*runtime).ok()?;
    let mut defined = global_definitions(&std::fs::read(var("translation").ok()?).ok()?).ok()?;
    for member in archive.members().flatten() {
        // A member starts 2-aligned in the archive; the ELF parser wants its header aligned:
        // a copy (the allocator aligns it).
        if let Ok(bytes) = member.data(&*runtime) {
            let aligned: Vec<u8> = bytes.to_vec();
            defined.extend(global_definitions(&aligned).unwrap_or_default());
        }
    }
    Some(defined)
}

/// Of the plain C functions the compute objects call, those the device runtime lacks
/// (none known when the device SDK is not installed).
pub fn device_lacks(compute_calls: &[String]) -> Vec<String> {
    let Some(defined) = device_runtime_symbols() else {
        return Vec::new();
    };
    compute_calls
        .iter()
        .filter(|n| !defined.contains(*n))
        .cloned()
        .collect()
}

/// The functions an object defines that could be kernels: (name, parameter types).
pub fn kernels_in(data: &[u8]) -> Result<Vec<(String, Vec<String>)>, object::Error> {
    let file = object::File::parse(data)?;
    let mut found = Vec::new();
    for sym in file.symbols() {
        // Inline functions (the headers' own, get_dst_tensor() among them) are weak.
        if !sym.is_definition()
            || !sym.is_global()
            || sym.is_weak()
            || sym.kind() != SymbolKind::Text
        {
            continue;
        }
        let Some(text) = sym.name().ok().and_then(demangle) else {
            continue;
        };
        if let Some(k) = kernel_signature(&text) {
            found.push(k);
        }
    }
    found.sort();
    Ok(found)
}

fn demangle(name: &str) -> Option<String> {
    let s = cpp_demangle::Symbol::new(name).ok()?;
    s.demangle(&cpp_demangle::DemangleOptions::default()).ok()
}

/// `name(params)` of a global function whose parameters are all kernel parameters.
pub fn kernel_signature(text: &str) -> Option<(String, Vec<String>)> {
    let open = text.find('(')?;
    let (name, rest) = (&text[..open], &text[open + 1..]);
    let inner = rest.strip_suffix(')')?;
    if name.is_empty() || name.contains(':') || name.contains('<') || name.contains(' ') {
        return None;
    }
    let params: Vec<String> = if inner.is_empty() {
        Vec::new()
    } else {
        inner.split(", ").map(str::to_string).collect()
    };
    params
        .iter()
        .all(|p| PARAMS.contains(&p.as_str()))
        .then(|| (name.to_string(), params))
}

/// The generated main: each candidate kernel declared (a kernel returns `torch::Tensor`)
/// and bound by name; `parity_off`: the build opted out of the device's compile, which
/// every run warns of.
pub fn glue(
    kernels: &[(String, Vec<String>)],
    device_lacks: &[String],
    parity_off: bool,
) -> String {
    let mut s =
        String::from("// Written by ntx op run: the kernels, bound by name for the runner.\n");
    s += "#include <neuron_customop_host/bind.hpp>\n\n";
    for (name, params) in kernels {
        let _ = writeln!(s, "at::Tensor {name}({});", params.join(", "));
    }
    s += "\nint main(int argc, char **argv)\n{\n";
    // Each by its own type, so that an overloaded name (a helper of the kernel's name,
    // overloaded kernels) binds every overload; the runtime picks the one the schema
    // declares, as the device's build does.
    for (name, params) in kernels {
        let _ = writeln!(
            s,
            "    ::nt_customop::bind(\"{name}\", static_cast<at::Tensor (*)({})>(&{name}));",
            params.join(", ")
        );
    }
    s += "    nt_customop_stack_size(NT_CUSTOMOP_STACK_SIZE);\n";
    if parity_off {
        s += "    nt_customop_parity_off();\n";
    }
    if !device_lacks.is_empty() {
        let quoted: Vec<String> = device_lacks.iter().map(|n| format!("\"{n}\"")).collect();
        let _ = writeln!(
            s,
            "    static const char *const lacks[] = {{{}}};\n    nt_customop_device_lacks(lacks, {});",
            quoted.join(", "),
            device_lacks.len()
        );
    }
    s += "    return nt_customop_main(argc, argv);\n}\n";
    s
}

/// The build folder `dir`, locked for this process (an exclusive `flock` on its
/// `.ntx-lock`, held until the returned file is dropped): two builds into one folder take
/// turns, as PyTorch's extension builds do.
pub fn lock_dir(dir: &Path) -> Result<std::fs::File, OpError> {
    use std::os::fd::AsRawFd;
    std::fs::create_dir_all(dir).map_err(OpError::file(FileAction::Make, dir))?;
    let path = dir.join(".ntx-lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(OpError::file(FileAction::Open, &path))?;
    // SAFETY: a descriptor this function owns; flock blocks until the lock is ours.
    while unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted || crate::guard::interrupted() {
            return Err(OpError::file(FileAction::Lock, path)(e));
        }
    }
    Ok(f)
}

/// Builds the runner program for `b`: its path. The build folder stays locked until the
/// caller drops the lock it passes in (so a run can use the program before another build
/// replaces it). The device's compile is not run here: [`crate::op_device::build_held`]
/// runs it first.
pub fn build(b: &Build) -> Result<PathBuf, OpError> {
    let (cflags, libs) = sdk_flags()?;
    let cxx = host_compiler()?;
    let mut objects = Vec::new();
    let mut kernels = Vec::new();
    let mut calls = Vec::new();
    for (k, src) in b.compute.iter().chain(&b.shape).enumerate() {
        let obj = b.dir.join(format!("{k}.o"));
        compile(&cxx, b, &cflags, src, &obj)?;
        if k < b.compute.len() {
            let data = std::fs::read(&obj).map_err(OpError::file(FileAction::Read, &obj))?;
            let parsed = |e| OpError::NotObject {
                path: obj.clone(),
                source: e,
            };
            kernels.extend(kernels_in(&data).map_err(parsed)?);
            calls.extend(c_calls(&data).map_err(parsed)?);
            crate::op_heap::rename(&obj, &data)?;
        }
        objects.push(obj);
    }
    calls.sort();
    calls.dedup();
    let main = b.dir.join("ntx-op-main.cpp");
    std::fs::write(&main, glue(&kernels, &device_lacks(&calls), !b.parity))
        .map_err(OpError::file(FileAction::Write, &main))?;
    let main_obj = b.dir.join("ntx-op-main.o");
    compile(&cxx, b, &cflags, &main, &main_obj)?;
    objects.push(main_obj);
    let exe = b.dir.join("op");
    let mut cmd = Command::new(&cxx);
    cmd.env("TMPDIR", &b.dir)
        .args(&objects)
        .args(&libs)
        .arg("-o")
        .arg(&exe);
    let out = crate::guard::output(&mut cmd).map_err(OpError::start(&cxx))?;
    if !out.status.success() {
        return Err(OpError::Link {
            linker: cxx,
            status: out.status,
            said: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            ),
        });
    }
    let described = describe(&exe)?;
    refuse_op_names(&described)?;
    if b.parity {
        refuse_undeclared(&described, &kernels)?;
    }
    Ok(exe)
}

/// What the program `exe` registers: its `--describe`.
fn describe(exe: &Path) -> Result<serde_json::Value, OpError> {
    let out = crate::guard::output_within(
        Command::new(exe).arg("--describe"),
        Some(nt_sdk_common::DEFAULT_TIMEOUT),
    )
    .map_err(OpError::start(exe.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&text).map_err(|source| OpError::Describe {
        program: exe.into(),
        source,
        said: String::from_utf8_lossy(&out.stderr).into(),
    })
}

/// The ops a program registers (`described`, its `--describe`), each name held to the
/// device's codegen with its kernel's ([`nt_sdk_common::op_refused`]): the first refusal.
fn refuse_op_names(described: &serde_json::Value) -> Result<(), OpError> {
    let names = described["ops"].as_array().into_iter().flatten();
    match names
        .filter_map(|o| Some((o["name"].as_str()?, o["kernel"].as_str().unwrap_or(""))))
        .find_map(|(name, kernel)| nt_sdk_common::op_refused(name, kernel))
    {
        Some(why) => Err(OpError::Device(why)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_global_functions_of_kernel_parameters() {
        let k = kernel_signature("relu_backward(at::Tensor const&, at::Tensor const&)").unwrap();
        assert_eq!(k.0, "relu_backward");
        assert_eq!(k.1, ["at::Tensor const&", "at::Tensor const&"]);
        assert!(kernel_signature("scale(long, at::Tensor&, double, c10::Scalar)").is_some());
        assert!(kernel_signature("make()").is_some());
        assert!(kernel_signature("helper(float*, unsigned long)").is_none());
        assert!(kernel_signature("ns::relu(at::Tensor const&)").is_none());
        assert!(kernel_signature("std::vector<int>::size() const").is_none());
        let g = glue(std::slice::from_ref(&k), &["fopen".into()], false);
        assert!(!g.contains("nt_customop_parity_off"));
        assert!(
            glue(std::slice::from_ref(&k), &[], true).contains("    nt_customop_parity_off();\n")
        );
        assert!(g.contains("static const char *const lacks[] = {\"fopen\"};"));
        assert!(g.contains("nt_customop_device_lacks(lacks, 1);"));
        assert!(g.contains("at::Tensor relu_backward(at::Tensor const&, at::Tensor const&);"));
        assert!(g.contains(
            "::nt_customop::bind(\"relu_backward\", static_cast<at::Tensor (*)(at::Tensor const&, at::Tensor const&)>(&relu_backward));"
        ));
    }

    #[test]
    fn an_overloaded_kernel_is_held_to_the_overload_its_schema_declares() {
        let described = serde_json::json!({"ops": [
            {"name": "relu", "kernel": "relu", "params": ["tensor"]}
        ]});
        let tensor = vec!["at::Tensor const&".to_string()];
        let helper = ("relu".to_string(), vec!["float".to_string()]);
        let kernel = ("relu".to_string(), tensor.clone());
        let d = declarations(&described);
        assert_eq!((d.len(), d[0].op.as_str()), (1, "relu"));
        assert_eq!((&d[0].kernel, &d[0].params), (&kernel.0, &kernel.1));
        assert!(refuse_undeclared(&described, &[helper.clone(), kernel.clone()]).is_ok());
        let by_value = ("relu".to_string(), vec!["at::Tensor".to_string()]);
        let e = refuse_undeclared(&described, &[helper, by_value])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("kernel relu of op 'relu' is overloaded (at::Tensor relu(float); at::Tensor relu(at::Tensor)) and none is the declaration the device's build makes from the op's schema, at::Tensor relu(const at::Tensor&)"),
            "{e}"
        );
    }

    #[test]
    fn a_kernel_is_held_to_the_declaration_its_schema_makes() {
        let described = serde_json::json!({"ops": [
            {"name": "scale", "kernel": "scale", "params": ["int", "tensor", "double", "scalar"]}
        ]});
        let kernel = |params: &[&str]| {
            vec![(
                "scale".to_string(),
                params.iter().map(|p| p.to_string()).collect(),
            )]
        };
        let declared = ["int", "at::Tensor const&", "float", "c10::Scalar const&"];
        assert!(refuse_undeclared(&described, &kernel(&declared)).is_ok());
        let e = refuse_undeclared(
            &described,
            &kernel(&["long", "at::Tensor", "double", "c10::Scalar"]),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("kernel at::Tensor scale(long, at::Tensor, double, c10::Scalar) of op 'scale' does not match the declaration the device's build makes from the op's schema, at::Tensor scale(int, const at::Tensor&, float, const c10::Scalar&): on the device it would not link"), "{e}");
        // A kernel the sources do not define is the runner's to report.
        assert!(refuse_undeclared(&described, &[]).is_ok());
    }
}
