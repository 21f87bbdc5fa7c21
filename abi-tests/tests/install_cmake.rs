//! The installed CMake package as a user's project meets it: the quick starts and the
//! example kernel built with `find_package(neuron_translate CONFIG)` alone, and the
//! package's version check.

use std::path::Path;
use std::process::Command;

use nt_support::tools::{run_ok, scratch, tool};

use nt_support::install::{cmake_build, doc_block, make, version, DEVICE, QUICKSTART_DOC};

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_quick_starts_and_the_kernel_build_with_cmake_from_the_installed_package() {
    let dir = scratch("install_cmake");
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    // The examples' CMake project, copied out of the tree: only the package finds the
    // header and the library.
    let src = dir.join("examples");
    std::fs::create_dir_all(src.join("kernel")).unwrap();
    for f in [
        "CMakeLists.txt",
        "quickstart.c",
        "quickstart.cpp",
        "kernel/tensor_kernel.cpp",
    ] {
        std::fs::copy(nt_support::root().join("examples").join(f), src.join(f)).unwrap();
    }
    let build = dir.join("build");
    cmake_build(&src, &build, &prefix);
    for (exe, doc, block) in [
        ("quickstart_c", QUICKSTART_DOC, "<!-- quickstart output -->"),
        (
            "quickstart_cpp",
            QUICKSTART_DOC,
            "<!-- quickstart output -->",
        ),
        (
            "tensor_kernel",
            "README.md",
            "<!-- tensor_kernel output -->",
        ),
    ] {
        let out = run_ok(&mut Command::new(build.join(exe)));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            doc_block(doc, block),
            "{exe}: the output {doc} shows"
        );
    }
    // The package's targets, variables and version, as a project sees them.
    let v = version();
    let parts: Vec<u32> = v.split('.').map(|p| p.parse().unwrap()).collect();
    let found = cmake_probe(&dir, &prefix, &v).expect("the installed version is found");
    let lib = prefix.join("lib");
    assert_eq!(
        found,
        [
            v.clone(),
            lib.join("libneuron_translate.a").display().to_string(),
            lib.join(format!("{DEVICE}/libneuron_translate.a"))
                .display()
                .to_string(),
            lib.join(format!("{DEVICE}/translation.o"))
                .display()
                .to_string(),
        ]
    );
    for path in &found[1..] {
        assert!(Path::new(path).is_file(), "{path} is installed");
    }
    // An older request of the same release line is served; a newer one, or another
    // major version, is not (before 1.0, another minor version is not either).
    assert!(cmake_probe(&dir, &prefix, &format!("{}.{}", parts[0], parts[1])).is_ok());
    let refused = |version: String| {
        let no = cmake_probe(&dir, &prefix, &version).expect_err("an incompatible version");
        assert!(
            no.stderr.contains("compatible with requested version"),
            "{version}: {}",
            no.stderr
        );
    };
    refused(format!("{}.{}", parts[0], parts[1] + 1));
    refused(format!("{}", parts[0] + 1));
    if parts[0] == 0 && parts[1] > 0 {
        refused(format!("0.{}", parts[1] - 1));
    }
}

/// What CMake said when `find_package` found nothing suitable.
#[derive(Debug)]
struct CmakeRefused {
    stderr: String,
}

/// A CMake project that asks for neuron_translate `version` from `prefix`: what it finds
/// (the version, the host and device libraries' locations, the device object), or what
/// CMake said when it found nothing suitable.
fn cmake_probe(dir: &Path, prefix: &Path, version: &str) -> Result<Vec<String>, CmakeRefused> {
    let src = dir.join("probe");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("CMakeLists.txt"),
        format!(
            "cmake_minimum_required(VERSION 3.16)\n\
             project(probe LANGUAGES NONE)\n\
             find_package(neuron_translate {version} CONFIG REQUIRED)\n\
             get_target_property(host neuron_translate::neuron_translate IMPORTED_LOCATION)\n\
             get_target_property(device neuron_translate::device IMPORTED_LOCATION)\n\
             file(WRITE ${{CMAKE_BINARY_DIR}}/found.txt \"${{neuron_translate_VERSION}}\\n${{host}}\\n${{device}}\\n${{neuron_translate_DEVICE_OBJECT}}\\n\")\n"
        ),
    )
    .unwrap();
    let build = dir.join(format!("probe-{version}"));
    let out = Command::new(tool("CMAKE"))
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(CmakeRefused {
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    let text = std::fs::read_to_string(build.join("found.txt")).unwrap();
    Ok(text.lines().map(String::from).collect())
}
