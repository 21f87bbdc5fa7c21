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

/// The host program built with the compiler `var` names (and `extra` flags), linked with
/// the host library.
fn host_program(dir: &Path, var: &str, extra: &[&str]) -> PathBuf {
    let exe = dir.join(format!("accessor-{var}"));
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
            .arg(root().join("abi-tests/consumers/accessor_host.cpp"))
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
        let text = stdout_of(&host_program(&dir, var, extra), &[]);
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
    let host = stdout_of(&host_program(&dir, "HOST_CXX", &[]), &["--fixed"]);
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
