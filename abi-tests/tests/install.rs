//! `make install` as a packager and a user run it: staged into a DESTDIR and removed again
//! by `make uninstall`, then installed under a PREFIX and used with pkg-config alone: the
//! quick starts (examples/quickstart.c, .cpp; docs/quickstart.md) built and run against the installed
//! tree, a cross build linked against the installed device archive, and the installed
//! `ntx`. Also `cargo install` of `ntx` on its own. (The CMake package: install_cmake.rs.)

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use nt_support::tools::{run_ok, scratch, tool};

use nt_support::install::{
    build_and_run, doc_block, files, make, pkg_config, version, DEVICE, QUICKSTART_DOC,
};

/// The changelog's latest release is this version, with a date, in Keep a Changelog's form.
#[test]
fn the_changelog_leads_with_this_version() {
    let log = std::fs::read_to_string(nt_support::root().join("CHANGELOG.md")).unwrap();
    let first = log
        .lines()
        .find(|l| l.starts_with("## [") && !l.starts_with("## [Unreleased]"))
        .expect("a release heading");
    let want = format!("## [{}] - ", version());
    assert!(
        first.starts_with(&want),
        "{first:?} is not {want:?}YYYY-MM-DD"
    );
    let date = &first[want.len()..];
    assert!(
        date.len() == 10
            && date.chars().enumerate().all(|(i, c)| if i == 4 || i == 7 {
                c == '-'
            } else {
                c.is_ascii_digit()
            }),
        "{date:?} is not a date"
    );
}

/// The quick starts docs/quickstart.md shows are the files `make test` compiles, byte for
/// byte.
#[test]
fn the_documented_quick_starts_are_the_example_files() {
    for file in ["quickstart.c", "quickstart.cpp"] {
        let text = std::fs::read_to_string(nt_support::root().join("examples").join(file)).unwrap();
        assert_eq!(
            doc_block(QUICKSTART_DOC, &format!("<!-- examples/{file} -->")),
            text,
            "{QUICKSTART_DOC}'s copy of examples/{file} differs: paste the file into it"
        );
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn make_install_stages_into_destdir_and_uninstall_removes_it_all() {
    let dir = scratch("install_destdir");
    let stage = dir.join("stage");
    let args = |t: &str| {
        vec![
            t.to_string(),
            format!("DESTDIR={}", stage.display()),
            "PREFIX=/opt/nt".into(),
        ]
    };
    make(&args("install"));
    let mut want: BTreeSet<String> = [
        "opt/nt/include/neuron_translate.h".to_string(),
        "opt/nt/include/neuron_translate.hpp".into(),
        "opt/nt/lib/libneuron_translate.a".into(),
        format!("opt/nt/lib/{DEVICE}/translation.o"),
        format!("opt/nt/lib/{DEVICE}/libneuron_translate.a"),
        "opt/nt/bin/ntx".into(),
        "opt/nt/lib/pkgconfig/neuron_translate.pc".into(),
        format!("opt/nt/lib/pkgconfig/neuron_translate-{DEVICE}.pc"),
        "opt/nt/lib/cmake/neuron_translate/neuron_translateConfig.cmake".into(),
        "opt/nt/lib/cmake/neuron_translate/neuron_translateConfigVersion.cmake".into(),
        "opt/nt/lib/libneuron_customop_host.a".into(),
        "opt/nt/lib/pkgconfig/neuron_customop_host.pc".into(),
        format!("opt/nt/lib/{DEVICE}/libneuron_customop_device.a"),
        format!("opt/nt/lib/{DEVICE}/libnt_qemu_count.so"),
        "opt/nt/lib/pkgconfig/neuron_customop_device.pc".into(),
    ]
    .into();
    // The device's C and C++ headers (ntx op run --device), as make unpacked them.
    let device = nt_support::root().join("target/device-sysroot/include");
    want.extend(
        files(&device)
            .into_iter()
            .map(|h| format!("opt/nt/include/neuron_customop_device/{h}")),
    );
    // The custom-op SDK's headers, in an include directory of their own.
    let sdk = nt_support::root().join("sdk/include");
    want.extend(
        files(&sdk)
            .into_iter()
            .map(|h| format!("opt/nt/include/neuron_customop_host/{h}")),
    );
    assert_eq!(files(&stage), want);
    staged_files_are_the_products(&stage);
    quick_starts_build_from_the_stage(&stage, &dir);
    make(&args("uninstall"));
    assert_eq!(
        files(&stage),
        BTreeSet::new(),
        "uninstall leaves no file behind"
    );
    assert!(
        !stage.join("opt/nt/lib/cmake").exists(),
        "uninstall removes the CMake package's directories"
    );
    assert!(
        !stage.join("opt/nt/include/neuron_customop_host").exists(),
        "uninstall removes the SDK's include directory"
    );
}

/// The staged files are the products, and the .pc files name the final place, not the
/// stage; with the stage as sysroot, pkg-config points into it.
fn staged_files_are_the_products(stage: &Path) {
    let root = nt_support::root();
    for (installed, product) in [
        (
            "opt/nt/include/neuron_translate.h",
            "include/neuron_translate.h",
        ),
        (
            "opt/nt/include/neuron_translate.hpp",
            "include/neuron_translate.hpp",
        ),
        (
            "opt/nt/lib/libneuron_translate.a",
            "dist/host/libneuron_translate.a",
        ),
    ] {
        assert_eq!(
            std::fs::read(stage.join(installed)).unwrap(),
            std::fs::read(root.join(product)).unwrap(),
            "{installed}"
        );
    }
    let pc =
        std::fs::read_to_string(stage.join("opt/nt/lib/pkgconfig/neuron_translate.pc")).unwrap();
    assert!(
        pc.contains("prefix=/opt/nt\n") && !pc.contains(&stage.display().to_string()),
        "{pc}"
    );
    // With the stage as sysroot, pkg-config points into it.
    let out = run_ok(
        Command::new(tool("PKG_CONFIG"))
            .env("PKG_CONFIG_LIBDIR", stage.join("opt/nt/lib/pkgconfig"))
            .env("PKG_CONFIG_SYSROOT_DIR", stage)
            .args(["--cflags", "neuron_translate"]),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("-I{}/opt/nt/include", stage.display())
    );
}

/// A C and a C++ consumer built in `dir` from the staged tree with pkg-config's flags
/// alone print what docs/quickstart.md shows.
fn quick_starts_build_from_the_stage(stage: &Path, dir: &Path) {
    let flags = run_ok(
        Command::new(tool("PKG_CONFIG"))
            .env("PKG_CONFIG_LIBDIR", stage.join("opt/nt/lib/pkgconfig"))
            .env("PKG_CONFIG_SYSROOT_DIR", stage)
            .args(["--cflags", "--libs", "neuron_translate"]),
    );
    let flags: Vec<String> = String::from_utf8_lossy(&flags.stdout)
        .split_whitespace()
        .map(String::from)
        .collect();
    let expected = doc_block(QUICKSTART_DOC, "<!-- quickstart output -->");
    for (var, std, file) in [
        ("HOST_CC", "c11", "quickstart.c"),
        ("HOST_CXX", "c++17", "quickstart.cpp"),
    ] {
        let src = dir.join(file);
        std::fs::copy(nt_support::root().join("examples").join(file), &src).unwrap();
        let exe = dir.join(format!("staged-{file}"));
        let what = format!("{file} built from the staged tree");
        build_and_run(
            var,
            &[&format!("-std={std}")],
            &src,
            &flags,
            &exe,
            &expected,
            &what,
        );
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_quick_starts_build_and_run_against_the_installed_tree_with_pkg_config_only() {
    let dir = scratch("install_prefix");
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    let pc_dir = prefix.join("lib/pkgconfig");
    assert_eq!(
        pkg_config(&pc_dir, &["--modversion", "neuron_translate"]),
        [version()]
    );
    let flags = pkg_config(&pc_dir, &["--cflags", "--libs", "neuron_translate"]);
    // Every path pkg-config gives is in the installed tree.
    for f in &flags {
        if let Some(path) = f.strip_prefix("-I").or_else(|| f.strip_prefix("-L")) {
            assert!(
                Path::new(path).starts_with(&prefix),
                "{f} is not under the prefix"
            );
        }
    }
    // The sources are copied out of the tree: only pkg-config's flags find the header.
    let expected = doc_block(QUICKSTART_DOC, "<!-- quickstart output -->");
    for (var, std, file) in [
        ("HOST_CC", "c99", "quickstart.c"),
        ("HOST_CLANG", "c11", "quickstart.c"),
        ("HOST_CXX", "c++11", "quickstart.cpp"),
        ("HOST_CLANGXX", "c++17", "quickstart.cpp"),
    ] {
        let src = dir.join(file);
        std::fs::copy(nt_support::root().join("examples").join(file), &src).unwrap();
        let exe = dir.join(format!("{file}-{var}"));
        let std = format!("-std={std}");
        let options = [std.as_str(), "-Wall", "-Wextra", "-Werror", "-pedantic"];
        let what = format!("{file} with {var}: the documented output");
        build_and_run(var, &options, &src, &flags, &exe, &expected, &what);
    }
    // Linked with the private libraries too (`--static`): the native libraries rustc
    // reported for the host library, on a system where they are not all in libc.
    let native = std::fs::read_to_string(tool("NT_NATIVE_LIBS")).unwrap();
    let native: Vec<String> = native.split_whitespace().map(String::from).collect();
    assert!(!native.is_empty());
    let static_flags = pkg_config(
        &pc_dir,
        &["--static", "--cflags", "--libs", "neuron_translate"],
    );
    assert!(
        static_flags.ends_with(&native),
        "{static_flags:?} ends with rustc's {native:?}"
    );
    let src = dir.join("quickstart.c");
    let exe = dir.join("quickstart-static-flags");
    let what = "quickstart.c with pkg-config --static";
    build_and_run(
        "HOST_CC",
        &["-std=c11"],
        &src,
        &static_flags,
        &exe,
        &expected,
        what,
    );
    // The installed ntx is the built one.
    let out = run_ok(Command::new(prefix.join("bin/ntx")).arg("--version"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("ntx {}", version())
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_example_kernel_runs_on_the_host_model_from_the_installed_tree() {
    let dir = scratch("install_kernel");
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    let flags = pkg_config(
        &prefix.join("lib/pkgconfig"),
        &["--cflags", "--libs", "neuron_translate"],
    );
    let src = dir.join("tensor_kernel.cpp");
    std::fs::copy(
        nt_support::root().join("examples/kernel/tensor_kernel.cpp"),
        &src,
    )
    .unwrap();
    let expected = doc_block("README.md", "<!-- tensor_kernel output -->");
    for var in ["HOST_CXX", "HOST_CLANGXX"] {
        let exe = dir.join(format!("tensor_kernel-{var}"));
        let options = [
            "-std=c++17",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
        ];
        let what = format!("{var}: the README's output");
        build_and_run(var, &options, &src, &flags, &exe, &expected, &what);
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_cross_build_links_against_the_installed_device_archive() {
    let dir = scratch("install_device");
    let prefix = dir.join("prefix");
    make(&["install".into(), format!("PREFIX={}", prefix.display())]);
    let pc_dir = prefix.join("lib/pkgconfig");
    let name = format!("neuron_translate-{DEVICE}");
    let object = pkg_config(&pc_dir, &["--variable=object", &name]);
    assert_eq!(
        object,
        [prefix
            .join(format!("lib/{DEVICE}/translation.o"))
            .display()
            .to_string()]
    );
    let src = dir.join("op.c");
    std::fs::write(
        &src,
        "#include <neuron_translate.h>\n\
         unsigned long long extended_isa_sdk_hbm_scratch = 0x4100000000ull;\n\
         void _start(void) { _init_translate_ctx(); (void)neuron_translate(neuron_translate_ctx(), 0x4200000000ull); }\n",
    )
    .unwrap();
    let obj = dir.join("op.o");
    let cflags = pkg_config(&pc_dir, &["--cflags", &name]);
    run_ok(
        xtensa_clang()
            .args(["-std=c11", "-O1", "-c"])
            .args(&cflags)
            .arg(&src)
            .arg("-o")
            .arg(&obj),
    );
    let exe = dir.join("op.elf");
    let libs = pkg_config(&pc_dir, &["--libs", &name]);
    let out = Command::new(tool("XTENSA_LD"))
        .args(["-static", "-e", "_start", "--no-warn-execstack"])
        .arg(&obj)
        .args(&libs)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ld {libs:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The program holds the library's code: the translate function is linked in.
    let nm = run_ok(Command::new(tool("XTENSA_NM")).arg(&exe));
    assert!(String::from_utf8_lossy(&nm.stdout).contains(" T _Z16neuron_translatePvy"));
    accessor_builds_for_the_device(&dir, &cflags);
}

/// clang for the device: Xtensa, freestanding, the windowed ABI.
fn xtensa_clang() -> Command {
    let mut c = Command::new(tool("XTENSA_CLANG"));
    c.args(nt_support::qemu::USER_DEVICE_FLAGS);
    c
}

/// The C++ accessor from the installed tree (`cflags`), compiled in `dir` for the device:
/// freestanding, no exceptions, no run-time type information, nothing from libgcc.
fn accessor_builds_for_the_device(dir: &Path, cflags: &[String]) {
    let cxx = dir.join("op.cpp");
    std::fs::write(
        &cxx,
        "#include <neuron_translate.hpp>\n\
         struct S12 { uint32_t a, b, c; };\n\
         bool op(neuron::Tensor<const S12> a, neuron::Tensor<S12> c) {\n\
           return neuron::for_each(0, c.size(), [](unsigned long long, size_t n, const S12 *x, S12 *y) {\n\
             for (size_t k = 0; k < n; ++k) y[k].a = x[k].a + x[k].c;\n\
           }, a, c) && c.set(0, a.get(1));\n\
         }\n",
    )
    .unwrap();
    let cxx_obj = dir.join("op_cpp.o");
    run_ok(
        xtensa_clang()
            .args(["-Xclang", "-target-feature", "-Xclang", "+mul32"])
            .args(nt_support::qemu::DEVICE_CXXFLAGS)
            .args(["-O2", "-Wall", "-Wextra", "-Werror", "-c"])
            .args(cflags)
            .arg(&cxx)
            .arg("-o")
            .arg(&cxx_obj),
    );
    let nm = run_ok(Command::new(tool("XTENSA_NM")).args(["-u"]).arg(&cxx_obj));
    let undefined = String::from_utf8_lossy(&nm.stdout).into_owned();
    let wanted = ["memcpy", "neuron_translate_span", "_Z16neuron_translatePvy"];
    for line in undefined.lines() {
        let name = line.split_whitespace().last().unwrap_or("");
        assert!(
            wanted.contains(&name),
            "the accessor needs {name}:\n{undefined}"
        );
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn ntx_installs_alone_with_cargo_install() {
    let dir = scratch("install_cargo");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // The README's command, into a scratch root; the workspace's target directory keeps
    // the build from starting over.
    run_ok(
        Command::new(cargo)
            .args([
                "install",
                "--locked",
                "--offline",
                "--quiet",
                "--path",
                "tools/ntx",
                "--root",
            ])
            .arg(&dir)
            .env("CARGO_TARGET_DIR", nt_support::root().join("target"))
            .current_dir(nt_support::root()),
    );
    let out = run_ok(Command::new(dir.join("bin/ntx")).arg("--version"));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("ntx {}", version())
    );
}

/// The Makefile's environments (`TORCH_VENV=<yours>`, the validator's, the SDK checks') are
/// made afresh only where the build made them: a folder of the user's is used as it is or
/// refused, never removed (its mark, `fresh_venv`).
#[test]
fn a_users_environment_is_never_removed() {
    let dir = scratch("fresh_venv");
    let probe = dir.join("probe.mk");
    let makefile = nt_support::root().join("Makefile");
    std::fs::write(
        &probe,
        format!(
            "include {}\nvenv-probe:\n\t@$(call fresh_venv,$(V))\n",
            makefile.display()
        ),
    )
    .unwrap();
    let run = |v: &Path| {
        Command::new("make")
            .args(["-s", "-C"])
            .arg(nt_support::root())
            .arg("-f")
            .arg(&probe)
            .arg("venv-probe")
            .arg(format!("V={}", v.display()))
            .output()
            .unwrap()
    };
    // A folder that is no environment: refused, its file kept.
    let theirs = dir.join("theirs");
    std::fs::create_dir_all(&theirs).unwrap();
    std::fs::write(theirs.join("precious"), "x").unwrap();
    let o = run(&theirs);
    assert!(!o.status.success(), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("left as it is"),
        "{o:?}"
    );
    assert!(theirs.join("precious").exists());
    // An environment of theirs: used as it is.
    std::fs::create_dir_all(theirs.join("bin")).unwrap();
    std::os::unix::fs::symlink("/bin/true", theirs.join("bin/python")).unwrap();
    let o = run(&theirs);
    assert!(o.status.success(), "{o:?}");
    assert!(theirs.join("precious").exists(), "nothing removed");
    // A new folder: made, with the mark that lets a later build make it afresh.
    let ours = dir.join("ours");
    assert!(run(&ours).status.success());
    assert!(ours.join(".made-by-neuron-translate").exists() && ours.join("bin/python").exists());
}
