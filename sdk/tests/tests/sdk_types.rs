//! The custom-op SDK's core types (sdk/include/c10/), built as C++14 (as the device builds
//! kernels) with gcc and clang: c10::Half against the compiler's own _Float16 and
//! c10::BFloat16 against rounding written from its definition, over every 16-bit value and
//! tens of millions of floats, ties included (sdk/tests/customops/half_types.cpp), and
//! against the runtime's own conversions (half_table.cpp); the element types, size lists of
//! any integer type and options (core_types.cpp).

use std::path::{Path, PathBuf};
use std::process::Command;

use nt_support::qemu::root;
use nt_support::tools::{run_ok, scratch, tool};

/// `src` (in sdk/tests/customops) built as C++14 with the compiler `var` names, run: its
/// output.
fn run_program(dir: &Path, src: &str, var: &str) -> String {
    let exe: PathBuf = dir.join(format!("{src}-{var}"));
    run_ok(
        Command::new(tool(var))
            .args([
                "-std=c++14",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-I",
            ])
            .arg(root().join("sdk/include"))
            .arg(nt_sdk_tests::kernels().join(src))
            .arg("-o")
            .arg(&exe),
    );
    let out = run_ok(&mut Command::new(&exe));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn half_and_bfloat16_round_to_nearest_even_as_the_compiler_and_the_definition_do() {
    let dir = scratch("sdk_types");
    for var in ["HOST_CXX", "HOST_CLANGXX"] {
        let text = run_program(&dir, "half_types.cpp", var);
        assert!(text.ends_with("all conversions right\n"), "{var}:\n{text}");
        let checked: u64 = text.split_whitespace().next().unwrap().parse().unwrap();
        assert!(checked > 30_000_000, "{var}: {text}");
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_headers_half_and_bfloat16_round_as_the_runtime_does() {
    use neuron_customop_host::base::dtype::{f32_to_bf16, f32_to_half};
    let dir = scratch("sdk_types_table");
    for var in ["HOST_CXX", "HOST_CLANGXX"] {
        let text = run_program(&dir, "half_table.cpp", var);
        let mut lines = 0;
        for line in text.lines() {
            let v: Vec<u32> = line
                .split(' ')
                .map(|w| u32::from_str_radix(w, 16).unwrap())
                .collect();
            let f = f32::from_bits(v[0]);
            let runtime = (u32::from(f32_to_half(f)), u32::from(f32_to_bf16(f)));
            assert_eq!(
                (v[1], v[2]),
                runtime,
                "{var}: the header's line {line}, the runtime's {runtime:04x?}"
            );
            lines += 1;
        }
        assert_eq!(lines, 9 << 16, "{var}: every float of the table");
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn element_types_size_lists_and_options_are_as_kernels_use_them() {
    let dir = scratch("sdk_core_types");
    for var in ["HOST_CXX", "HOST_CLANGXX"] {
        let text = run_program(&dir, "core_types.cpp", var);
        assert!(text.ends_with("all core types right\n"), "{var}:\n{text}");
        assert_eq!(
            text.matches("ok ").count(),
            6,
            "{var}: every check ran:\n{text}"
        );
    }
}
