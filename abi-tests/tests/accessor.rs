//! include/neuron_translate.hpp, the C++ tensor accessor:
//!
//! * on the host model, built with gcc and clang (pedantic, warning-free; clang's without
//!   exceptions or run-time type information): randomised layouts checked element by
//!   element against the per-element path, and the stale-pointer hazard shown, the
//!   hand-written span loop wrong and the accessor right (abi-tests/consumers/accessor_host.cpp);
//! * on the device: the fixed kernels built with clang for Xtensa, freestanding, without
//!   exceptions, run-time type information or libgcc, linked with the unmodified device
//!   object and run under qemu with the window moves emulated (abi-tests/qemu/accessor.cpp):
//!   their output hashes equal the host model's.

use std::path::{Path, PathBuf};
use std::process::Command;

use nt_support::qemu::{compile_c, compile_cxx, link_args, root, run, start_object, EMU_WRAP};
use nt_support::tools::{product, run_ok, scratch, tool};

/// The host program `src` (in abi-tests/consumers) built with the compiler `var` names
/// (and `extra` flags), linked with the host library.
fn host_program(dir: &Path, src: &str, var: &str, extra: &[&str]) -> PathBuf {
    let exe = dir.join(format!("{src}-{var}"));
    run_ok(
        Command::new(tool(var))
            .args([
                "-std=c++17",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
            ])
            .args(extra)
            .arg("-I")
            .arg(root().join("include"))
            .arg("-I")
            .arg(root().join("abi-tests/consumers"))
            .arg(root().join("abi-tests/consumers").join(src))
            .arg(product("NT_HOST_LIB"))
            .arg("-o")
            .arg(&exe),
    );
    exe
}

fn stdout_of(exe: &Path, args: &[&str]) -> String {
    let out = Command::new(exe).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{} {args:?} failed:\n{text}{}",
        exe.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    text
}

/// The device program: accessor.cpp and support.c for Xtensa, the start-up stub, the
/// device object, and the translate calls wrapped by the window-move emulation.
fn device_program(dir: &Path) -> PathBuf {
    let q = root().join("abi-tests/qemu");
    let (include, consumers) = (root().join("include"), root().join("abi-tests/consumers"));
    let main = dir.join("accessor.o");
    compile_cxx(&q.join("accessor.cpp"), &main, &[&include, &q, &consumers]);
    let support = dir.join("support.o");
    compile_c(&q.join("support.c"), &support, &[&include, &q]);
    let elf = dir.join("accessor.elf");
    link_args(
        &[start_object(dir), main, support],
        &product("NT_DEVICE_OBJ"),
        &[],
        &EMU_WRAP,
        &elf,
    );
    elf
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_accessor_agrees_with_the_per_element_path_and_the_hand_span_loop_goes_stale() {
    let dir = scratch("accessor_host");
    for (var, extra) in [
        ("HOST_CXX", &[][..]),
        ("HOST_CLANGXX", &["-fno-exceptions", "-fno-rtti"][..]),
    ] {
        let text = stdout_of(&host_program(&dir, "accessor_host.cpp", var, extra), &[]);
        assert!(text.contains("accessor: all checks hold"), "{var}:\n{text}");
        let layouts = text.lines().find(|l| l.starts_with("layouts: ")).unwrap();
        assert!(layouts.starts_with("layouts: 160 "), "{var}: {layouts}");
        // The hazard: some elements wrong through the hand loop, none through the accessor.
        let stale = text
            .lines()
            .find(|l| l.starts_with("stale pointers:"))
            .unwrap();
        let wrong: u64 = stale
            .split("got ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap();
        assert!(
            wrong > 0 && stale.ends_with("the accessor none"),
            "{var}: {stale}"
        );
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_accessor_kernels_give_the_host_models_results_on_the_device_under_qemu() {
    let dir = scratch("accessor_device");
    let host = stdout_of(
        &host_program(&dir, "accessor_host.cpp", "HOST_CXX", &[]),
        &["--fixed"],
    );
    let out = run(&device_program(&dir));
    let device = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "the device run:\n{device}");
    assert_eq!(
        host.lines().count(),
        4,
        "four fixed kernels on the host:\n{host}"
    );
    assert!(host.lines().all(|l| l.ends_with(" same")), "{host}");
    assert_eq!(
        device, host,
        "the device's outputs differ from the host model's"
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn views_that_do_not_fit_and_overlapping_writable_views_are_refused() {
    let dir = scratch("accessor_rules");
    for (var, extra) in [
        ("HOST_CXX", &[][..]),
        ("HOST_CLANGXX", &["-fno-exceptions", "-fno-rtti"][..]),
    ] {
        let text = stdout_of(&host_program(&dir, "accessor_rules.cpp", var, extra), &[]);
        println!("{var}:\n{text}");
        assert!(text.ends_with("all rules hold\n"), "{var}:\n{text}");
        assert_eq!(
            text.matches("ok ").count(),
            11,
            "{var}: every check ran:\n{text}"
        );
    }
}

/// Whether `body` (after the header) compiles as C++17 with the host C++ compiler; the
/// compiler's messages.
fn compiles(dir: &Path, name: &str, body: &str) -> (bool, String) {
    compiles_as(dir, name, body, "c++17", "HOST_CXX")
}

/// Whether `body` (after the header) compiles as `std` with `compiler`, warning-free.
fn compiles_as(dir: &Path, name: &str, body: &str, std: &str, compiler: &str) -> (bool, String) {
    let src = dir.join(format!("{name}.cpp"));
    std::fs::write(&src, format!("#include <neuron_translate.hpp>\n{body}\n")).unwrap();
    let out = Command::new(tool(compiler))
        .arg(format!("-std={std}"))
        .args([
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fsyntax-only",
            "-I",
        ])
        .arg(root().join("include"))
        .arg(&src)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_view_converts_only_to_its_read_only_self_and_the_bounce_stack_is_bounded() {
    let dir = scratch("accessor_compile");
    let types = "struct B { unsigned a; }; struct D : B { unsigned b; };\n";
    let cases = [
        (
            "const_of_same",
            "void f(neuron::Tensor<D> d) { neuron::Tensor<const D> c(d); (void)c; }",
            true,
        ),
        (
            "base_of_derived",
            "void f(neuron::Tensor<D> d) { neuron::Tensor<B> b(d); (void)b; }",
            false,
        ),
        (
            "const_base_of_derived",
            "void f(neuron::Tensor<D> d) { neuron::Tensor<const B> b(d); (void)b; }",
            false,
        ),
        (
            "writable_of_const",
            "void f(neuron::Tensor<const D> d) { neuron::Tensor<D> w(d); (void)w; }",
            false,
        ),
    ];
    for (name, body, want) in cases {
        let (ok, messages) = compiles(&dir, name, &format!("{types}{body}"));
        assert_eq!(ok, want, "{name}:\n{messages}");
    }
    // Sixteen views of 4-byte elements take 4 KiB of bounce buffers; a seventeenth, more.
    let views = |n: usize| {
        let params: Vec<String> = (0..n)
            .map(|k| format!("neuron::Tensor<unsigned> v{k}"))
            .collect();
        let args: Vec<String> = (0..n).map(|k| format!("v{k}")).collect();
        format!(
            "bool f({}) {{ return neuron::for_each(0, 1, [](unsigned long long, size_t, auto...) {{}}, {}); }}",
            params.join(", "),
            args.join(", ")
        )
    };
    assert!(compiles(&dir, "views_16", &views(16)).0, "16 views");
    // The custom-op SDK builds kernels as C++14, as the device does.
    let kernel = "bool g(neuron::Tensor<const unsigned> a, neuron::Tensor<unsigned> b) {\n\
        return neuron::for_each(0, b.size(), [](unsigned long long, size_t n, const unsigned *x, unsigned *y) {\n\
            for (size_t k = 0; k < n; ++k) y[k] = x[k] + 1;\n\
        }, a, b) && b.set(0, a.get(1));\n}";
    for compiler in ["HOST_CXX", "HOST_CLANGXX"] {
        let (ok, messages) = compiles_as(&dir, "cxx14", kernel, "c++14", compiler);
        assert!(ok, "C++14 with {compiler}:\n{messages}");
    }
    let (ok, messages) = compiles(&dir, "views_17", &views(17));
    assert!(
        !ok && messages.contains("4 KiB of stack"),
        "17 views:\n{messages}"
    );
}
