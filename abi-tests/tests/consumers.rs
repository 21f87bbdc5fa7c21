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
    let out = Command::new(tool("VALGRIND"))
        .args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=all",
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

nt_support::make_tests! {
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
}

nt_support::make_tests! {
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
}

nt_support::make_tests! {
    fn the_header_compiles_for_the_device_with_32_bit_pointers() {
        let dir = scratch("consumers_device");
        let clang = tool("XTENSA_CLANG");
        // Freestanding: the device has no C library here, and the header needs only
        // <stddef.h> and <stdint.h>, which the compiler itself provides.
        let device = [
            "--target=xtensa",
            "-ffreestanding",
            "-Xclang",
            "-target-feature",
            "-Xclang",
            "+windowed",
        ];
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
}
