//! An author's own C++ test of their kernels through the runner API
//! (sdk/tests/customops/author_test.cpp with relu.cpp and relu_tcm.cpp), built from an
//! installed tree with pkg-config's flags alone, with CMake's neuron_translate::customop_host
//! alone, and with clang as C++17; each build runs and passes.

use std::path::Path;
use std::process::Command;

use nt_support::install::{cmake_build, make, pkg_config};
use nt_support::tools::{run_ok, scratch, tool};

const SOURCES: [&str; 5] = [
    "author_test.cpp",
    "relu.cpp",
    "relu_shape.cpp",
    "relu_tcm.cpp",
    "relu_tcm_shape.cpp",
];

fn passes(exe: &Path) {
    let out = run_ok(&mut Command::new(exe));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.ends_with("author test passed\n"), "{text}");
    assert_eq!(text.matches("ok ").count(), 8, "{text}");
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn an_authors_test_builds_with_pkg_config_and_cmake_and_passes() {
    let dir = scratch("sdk_author");
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    let src = nt_sdk_tests::kernels();
    let pc = prefix.join("lib/pkgconfig");
    let cflags = pkg_config(&pc, &["--cflags", "neuron_customop_host"]);
    let libs = pkg_config(&pc, &["--libs", "neuron_customop_host"]);
    for (var, std) in [("HOST_CXX", "-std=c++14"), ("HOST_CLANGXX", "-std=c++17")] {
        let exe = dir.join(format!("author-{var}"));
        run_ok(
            Command::new(tool(var))
                .args([std, "-Wall", "-Wextra", "-Werror"])
                .args(&cflags)
                .args(SOURCES.iter().map(|s| src.join(s)))
                .args(&libs)
                .arg("-o")
                .arg(&exe),
        );
        passes(&exe);
    }
    let project = dir.join("project");
    std::fs::create_dir_all(&project).unwrap();
    for f in SOURCES.iter().chain(&["CMakeLists.txt"]) {
        std::fs::copy(src.join(f), project.join(f)).unwrap();
    }
    let build = dir.join("build");
    cmake_build(&project, &build, &prefix);
    passes(&build.join("author_test"));
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn every_kernel_source_compiles_warning_free_as_cpp14_and_cpp17_with_gcc_and_clang() {
    let dir = scratch("sdk_compile");
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    let cflags = pkg_config(
        &prefix.join("lib/pkgconfig"),
        &["--cflags", "neuron_customop_host"],
    );
    let src = nt_sdk_tests::kernels();
    let mut sources: Vec<_> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .filter(|p| !p.ends_with("half_types.cpp") && !p.ends_with("core_types.cpp"))
        // What the device's clang accepts and g++ or -pedantic refuses, on purpose.
        .filter(|p| !p.ends_with("device_model.cpp"))
        .collect();
    sources.sort();
    assert!(sources.len() >= 12, "{sources:?}");
    for var in ["HOST_CXX", "HOST_CLANGXX"] {
        for std in ["-std=c++14", "-std=c++17"] {
            for s in &sources {
                run_ok(
                    Command::new(tool(var))
                        .args([
                            std,
                            "-Wall",
                            "-Wextra",
                            "-Werror",
                            "-pedantic",
                            "-fsyntax-only",
                        ])
                        .args(&cflags)
                        .arg(s),
                );
            }
        }
    }
}

/// What a kernel must not be able to write: through the accessors of a const tensor.
const READ_ONLY: [(&str, &str); 3] = [
    ("accessor", "t.accessor<float, 1>()[0] = 1.0f;"),
    (
        "tcm_to_tensor",
        "float f = 0; t.tcm_accessor().tcm_to_tensor<float>(&f, 0, 1);",
    ),
    (
        "write stream",
        "t.write_stream_accessor<float>().write(1.0f);",
    ),
];

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_const_tensors_accessors_do_not_compile_writes() {
    let dir = scratch("sdk_read_only");
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    let cflags = pkg_config(
        &prefix.join("lib/pkgconfig"),
        &["--cflags", "neuron_customop_host"],
    );
    for (what, body) in READ_ONLY {
        for write in [false, true] {
            let src = dir.join(format!("{}-{write}.cpp", what.replace(' ', "_")));
            let line = if write { body } else { "(void)t.numel();" };
            std::fs::write(
                &src,
                format!("#include <torch/torch.h>\nvoid f(const torch::Tensor &t) {{ {line} }}\n"),
            )
            .unwrap();
            let out = Command::new(tool("HOST_CXX"))
                .args(["-std=c++14", "-fsyntax-only"])
                .args(&cflags)
                .arg(&src)
                .output()
                .unwrap();
            assert_eq!(out.status.success(), !write, "{what}, writing: {write}");
        }
    }
}
