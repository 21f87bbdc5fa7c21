//! C and C++ custom operators written against include/neuron_translate.h: compiled with
//! gcc and clang in every supported language standard, pedantic and warning-free, their
//! references checked to be exactly the original's ELF names, linked against the host
//! library and run. The header also compiles for the device.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use neuron_translate::symbols::exports;
use nt_support::tools::{product, run_ok, scratch, tool};
use object::{Object, ObjectSymbol};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn undefined_symbols(obj: &Path) -> BTreeSet<String> {
    let data = std::fs::read(obj).unwrap();
    let f = object::File::parse(&*data).unwrap();
    f.symbols()
        .filter(|s| s.is_undefined())
        .map(|s| s.name().unwrap().to_string())
        .filter(|n| !n.is_empty())
        .collect()
}

fn contract_exports() -> BTreeSet<String> {
    exports().map(|s| s.elf_name.to_string()).collect()
}

/// Runs `exe` under valgrind's memcheck: no invalid access, no uninitialised use, no leak.
fn valgrind_clean(exe: &Path, name: &str) {
    valgrind_clean_of(exe, name, "all");
}

/// The same, counting only the leak kinds `kinds` (valgrind's `--errors-for-leak-kinds`).
fn valgrind_clean_of(exe: &Path, name: &str, kinds: &str) {
    let out = Command::new(tool("VALGRIND"))
        .args([
            "--error-exitcode=99",
            "--leak-check=full",
            &format!("--errors-for-leak-kinds={kinds}"),
            "-q",
        ])
        .arg(exe)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{name} under valgrind:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn compile(compiler: &str, std: &str, src: &str, out: &Path, extra: &[&str]) {
    run_ok(
        Command::new(compiler)
            .args([
                &format!("-std={std}"),
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-O1",
                "-c",
            ])
            .args(extra)
            .arg("-I")
            .arg(root().join("include"))
            .arg(root().join("abi-tests/consumers").join(src))
            .arg("-o")
            .arg(out),
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn c_and_cxx_consumers_link_to_the_original_names_and_pass_their_checks() {
    let dir = scratch("consumers");
    let lib = product("NT_HOST_LIB");
    let mut runs = 0;
    for (var, lang, stds) in [
        ("HOST_CC", "c", &["c99", "c11"][..]),
        ("HOST_CLANG", "c", &["c99", "c11"][..]),
        ("HOST_CXX", "cpp", &["c++11", "c++17", "c++20"][..]),
        ("HOST_CLANGXX", "cpp", &["c++11", "c++17", "c++20"][..]),
    ] {
        let cc = tool(var);
        for std in stds {
            let name = format!("{var}-{std}").replace('+', "x");
            let obj = dir.join(format!("{name}.o"));
            compile(&cc, std, &format!("consumer.{lang}"), &obj, &[]);
            // The library's exports, and the C library's mmap/munmap for the host's
            // register block (consumers/host_nx.h).
            let mut want = contract_exports();
            want.extend(["mmap".to_string(), "munmap".to_string()]);
            assert_eq!(
                undefined_symbols(&obj),
                want,
                "{name}: what the consumer references"
            );
            let exe = dir.join(&name);
            run_ok(Command::new(&cc).arg(&obj).arg(&lib).arg("-o").arg(&exe));
            let status = Command::new(&exe).status().unwrap();
            assert_eq!(
                status.code(),
                Some(0),
                "{name}: check number {:?} failed",
                status.code()
            );
            valgrind_clean(&exe, &name);
            runs += 1;
        }
    }
    assert_eq!(runs, 10);
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_tensor_loops_read_the_same_elements_on_the_host() {
    let dir = scratch("consumers_tensor");
    for var in ["HOST_CC", "HOST_CLANG"] {
        let cc = tool(var);
        let obj = dir.join(format!("tensor-{var}.o"));
        // -fno-pie: the tensor buffer's address must fit the 32-bit local address space.
        compile(&cc, "c11", "tensor_main.c", &obj, &["-fno-pie"]);
        let exe = dir.join(format!("tensor-{var}"));
        run_ok(
            Command::new(&cc)
                .arg("-no-pie")
                .arg(&obj)
                .arg(product("NT_HOST_LIB"))
                .arg("-o")
                .arg(&exe),
        );
        let status = Command::new(&exe).status().unwrap();
        assert_eq!(
            status.code(),
            Some(0),
            "{var}: check {:?} failed",
            status.code()
        );
        valgrind_clean(&exe, var);
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_host_model_c_api_answers_null_with_an_error_and_keeps_working() {
    let dir = scratch("consumers_host_null");
    for var in ["HOST_CC", "HOST_CLANG"] {
        let cc = tool(var);
        let obj = dir.join(format!("host_null-{var}.o"));
        compile(&cc, "c11", "host_null.c", &obj, &[]);
        let exe = dir.join(format!("host_null-{var}"));
        run_ok(
            Command::new(&cc)
                .arg(&obj)
                .arg(product("NT_HOST_LIB"))
                .arg("-o")
                .arg(&exe),
        );
        let status = Command::new(&exe).status().unwrap();
        assert_eq!(
            status.code(),
            Some(0),
            "{var}: check {:?} failed",
            status.code()
        );
        // The reason of the last failure stays readable until the next one, or the
        // end of the process (neuron_translate_host_last_error): still reachable then.
        valgrind_clean_of(&exe, var, "definite,indirect,possible");
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_header_compiles_for_the_device_with_32_bit_pointers() {
    let dir = scratch("consumers_device");
    let clang = tool("XTENSA_CLANG");
    // Freestanding: the device has no C library here, and the header needs only
    // <stddef.h> and <stdint.h>, which the compiler itself provides.
    let device = nt_support::qemu::USER_DEVICE_FLAGS;
    for std in ["c99", "c11"] {
        let obj = dir.join(format!("consumer-{std}.o"));
        // The header's own static asserts check sizeof and every offset on this target.
        compile(&clang, std, "consumer.c", &obj, &device);
        let data = std::fs::read(&obj).unwrap();
        let f = object::File::parse(&*data).unwrap();
        assert!(!f.is_64(), "a 32-bit object");
        assert_eq!(f.architecture(), object::Architecture::Xtensa);
        assert_eq!(undefined_symbols(&obj), contract_exports());
    }
    // And the pins really are checked there: a header with a wrong pin must not compile.
    let header = std::fs::read_to_string(root().join("include/neuron_translate.h")).unwrap();
    let broken = header.replace("== 168", "== 160");
    assert_ne!(broken, header);
    std::fs::create_dir_all(dir.join("broken")).unwrap();
    std::fs::write(dir.join("broken/neuron_translate.h"), broken).unwrap();
    std::fs::copy(
        root().join("abi-tests/consumers/consumer_checks.h"),
        dir.join("broken/consumer_checks.h"),
    )
    .unwrap();
    std::fs::copy(
        root().join("abi-tests/consumers/consumer.c"),
        dir.join("broken/consumer.c"),
    )
    .unwrap();
    let out = Command::new(&clang)
        .args(device)
        .args(["-std=c11", "-c"])
        .arg(dir.join("broken/consumer.c"))
        .arg("-o")
        .arg(dir.join("broken.o"))
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "a wrong layout pin must fail the build"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("static assertion failed") && err.contains("sizeof(_translation_ctx_t)"),
        "{err}"
    );
}

/// Compiles `source` (C or C++, by `compiler`) against the committed header; the output.
fn compile_snippet(
    compiler: &str,
    std: &str,
    name: &str,
    source: &str,
) -> (std::process::Output, PathBuf) {
    let dir = scratch(&format!("consumers_snippet_{name}"));
    let ext = if compiler.contains("++") { "cpp" } else { "c" };
    let src = dir.join(format!("{name}.{ext}"));
    std::fs::write(&src, source).unwrap();
    let obj = dir.join(format!("{name}.o"));
    let out = Command::new(compiler)
        .arg(format!("-std={std}"))
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-c"])
        .arg("-I")
        .arg(root().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap();
    (out, obj)
}

/// The workspace's version, `[workspace.package] version` of the root Cargo.toml.
fn workspace_version() -> String {
    let manifest: toml::Value =
        toml::from_str(&std::fs::read_to_string(root().join("Cargo.toml")).unwrap()).unwrap();
    manifest["workspace"]["package"]["version"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_header_states_the_version_of_cargo_toml() {
    let version = workspace_version();
    let parts: Vec<u32> = version.split('.').map(|p| p.parse().unwrap()).collect();
    // What the compiler sees: every macro the header defines, from the preprocessor.
    for var in ["HOST_CC", "HOST_CLANG"] {
        let dir = scratch("consumers_version");
        let src = dir.join("v.c");
        std::fs::write(&src, "#include \"neuron_translate.h\"\n").unwrap();
        let out = run_ok(
            Command::new(tool(var))
                .args(["-std=c99", "-dM", "-E", "-I"])
                .arg(root().join("include"))
                .arg(&src),
        );
        let defines = String::from_utf8_lossy(&out.stdout).into_owned();
        let value = |name: &str| {
            defines
                .lines()
                .find_map(|l| l.strip_prefix(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("{var}: {name} is not defined"))
                .to_string()
        };
        assert_eq!(
            value("NEURON_TRANSLATE_VERSION_MAJOR"),
            parts[0].to_string()
        );
        assert_eq!(
            value("NEURON_TRANSLATE_VERSION_MINOR"),
            parts[1].to_string()
        );
        assert_eq!(
            value("NEURON_TRANSLATE_VERSION_PATCH"),
            parts[2].to_string()
        );
        assert_eq!(
            value("NEURON_TRANSLATE_VERSION_STRING"),
            format!("\"{version}\"")
        );
        assert_eq!(
            value("NEURON_TRANSLATE_VERSION"),
            (parts[0] * 10000 + parts[1] * 100 + parts[2]).to_string()
        );
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_header_refuses_c89_with_a_reason() {
    let program = "#include \"neuron_translate.h\"\nint main(void) { return 0; }\n";
    for var in ["HOST_CC", "HOST_CLANG"] {
        for std in ["c89", "c90", "gnu89"] {
            let (out, _) = compile_snippet(&tool(var), std, "c89", program);
            assert!(!out.status.success(), "{var} -std={std} must be refused");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("neuron_translate.h needs C99 or later"),
                "{var} -std={std}: the refusal says why:\n{err}"
            );
            // The #error is the only complaint: the rest of the header is not compiled.
            assert_eq!(err.matches("error:").count(), 1, "{var} -std={std}:\n{err}");
        }
        let (out, _) = compile_snippet(&tool(var), "c99", "c99", program);
        assert!(
            out.status.success(),
            "{var} -std=c99: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_imports_are_declared_with_their_elf_names() {
    // A consumer's definitions of what start_exit.o defines, in C and in C++, under the
    // header's declarations, get exactly the ELF names the library references.
    let c = "#include \"neuron_translate.h\"\n\
             unsigned long long extended_isa_sdk_hbm_scratch = 1;\n\
             unsigned char data_scratch_map[64];\n";
    let cxx = "#include \"neuron_translate.h\"\n\
               namespace extended_isa { namespace sdk { unsigned long long hbm_scratch = 1; } }\n\
               unsigned char data_scratch_map[64];\n";
    let imports: BTreeSet<String> = neuron_translate::symbols::SYMBOLS
        .iter()
        .filter(|s| s.direction == neuron_translate::symbols::Direction::Import)
        .map(|s| s.elf_name.to_string())
        .collect();
    assert_eq!(imports.len(), 2);
    for (var, std, src) in [
        ("HOST_CC", "c99", c),
        ("HOST_CLANG", "c11", c),
        ("HOST_CXX", "c++11", cxx),
        ("HOST_CLANGXX", "c++17", cxx),
    ] {
        let (out, obj) = compile_snippet(
            &tool(var),
            std,
            &format!("imports_{}", var.to_lowercase()),
            src,
        );
        assert!(
            out.status.success(),
            "{var}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let data = std::fs::read(&obj).unwrap();
        let f = object::File::parse(&*data).unwrap();
        let defined: BTreeSet<String> = f
            .symbols()
            .filter(|s| s.is_definition() && s.is_global())
            .map(|s| s.name().unwrap().to_string())
            .collect();
        assert_eq!(defined, imports, "{var}");
    }
}
