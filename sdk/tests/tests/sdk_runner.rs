//! The custom-op SDK from an installed tree: `make install` into a scratch prefix, then our
//! kernels (sdk/tests/customops) built by the installed `ntx op run` (which finds the SDK
//! through pkg-config in its own prefix) and run on NumPy inputs. The checks themselves
//! are Python with NumPy (the Makefile's `sdk-env`, `NT_SDK_PYTHON`):
//! check_kernels.py compares the relu kernels (accessor, TCM, 1/2/8 cores), int64_t and
//! double parameters, streams, TCM negate, printf and the factories with NumPy, triggers
//! every misuse and refuses bad .npy files; check_ops.py runs every operation in both
//! forms on every element type against NumPy; check_device.py runs the relu kernels on the
//! emulated Q7 (`--device`) against the host run; check_parity.py holds the build to the
//! device's own compile; check_isa.py measures what an operation costs per element on
//! the emulated Q7 against docs/q7-isa.md. Two of the kernels also run under valgrind.

use std::process::Command;

use nt_sdk_tests::{install, python};
use nt_support::qemu::root;
use nt_support::tools::{run_ok, scratch, tool};

fn check(script: &str, args: &[&std::ffi::OsStr]) -> String {
    let out = run_ok(
        Command::new(python())
            .arg(nt_sdk_tests::kernels().join(script))
            .args(args)
            .env_remove("PKG_CONFIG_PATH"),
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn our_kernels_run_from_the_installed_tree_and_every_misuse_is_reported() {
    let dir = scratch("sdk_kernels");
    let ntx = install(&dir);
    let src = nt_sdk_tests::kernels();
    let work = dir.join("work");
    // The four scripts side by side (each mostly waits on the compilers it starts): the
    // kernels on the host run; the relu kernels on the emulated Q7 (ntx op run --device),
    // from the same tree; the build held to the device's own compile (parity.cpp's
    // cases); and what an operation costs per element on the emulated Q7 (check_isa.py).
    let script = |name: &'static str, out: std::path::PathBuf| {
        let (ntx, src) = (ntx.clone(), src.clone());
        move || check(name, &[ntx.as_os_str(), src.as_os_str(), out.as_os_str()])
    };
    let (text, device, parity) = std::thread::scope(|s| {
        let kernels = s.spawn(script("check_kernels.py", work.clone()));
        let device = s.spawn(script("check_device.py", dir.join("device")));
        let parity = s.spawn(script("check_parity.py", dir.join("parity")));
        let isa = s.spawn(script("check_isa.py", dir.join("isa")));
        let joined = |h: std::thread::ScopedJoinHandle<'_, String>| {
            h.join().expect("a check script's thread")
        };
        let isa = joined(isa);
        assert!(isa.ends_with("isa costs right\n"), "{isa}");
        (joined(kernels), joined(device), joined(parity))
    });
    assert!(text.ends_with("all kernels right\n"), "{text}");
    assert!(device.ends_with("device runs right\n"), "{device}");
    assert!(parity.ends_with("parity right\n"), "{parity}");
    // The README shows this run's stats.
    let stats = text
        .split_once("readme stats:\n")
        .and_then(|(_, rest)| rest.split_once("ok "))
        .map(|(block, _)| block.to_string())
        .unwrap();
    assert_eq!(
        stats,
        nt_support::install::doc_block("README.md", "<!-- customop stats -->")
    );
    // Every kind the runtime names is triggered and reported, printf's by hello, the
    // stack's by check_device.py.
    for kind in neuron_customop_kinds() {
        assert!(
            [&text, &device, &parity]
                .iter()
                .any(|t| t.contains(&format!("ok {kind}"))),
            "{kind} untested:\n{text}\n{device}\n{parity}"
        );
    }
    for cores in [1, 2, 8] {
        assert!(
            text.contains(&format!("ok relu_multicore on {cores} cores")),
            "{text}"
        );
    }
    // Under valgrind (which follows the forked cores): the accessor relu, and the TCM relu
    // on two cores over 4 MiB (each core's filler thread at work), no error. The op
    // programs are i386: valgrind's own memory starts half way up its client's address
    // space, where the device's pinned windows are (0x8000_0000..0x8800_0000), unless its
    // lowest address is raised (docs/customop-host.md, "Checked beyond the tests").
    for (lib, op, cores, input) in [
        ("relu", "relu_forward", "1", "x.npy"),
        ("relu_tcm", "relu_multicore", "2", "big.npy"),
    ] {
        let out = Command::new(tool("VALGRIND"))
            .args(["-q", "--error-exitcode=99", "--aspace-minaddr=0x20000000"])
            .arg(work.join(lib).join("op"))
            .args([op, input, "--cores", cores, "--out", "valgrind.npy"])
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{op} under valgrind: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The misuse kinds, as the runtime's table (sdk/runtime/src/base/misuse.rs) names them.
fn neuron_customop_kinds() -> Vec<String> {
    let src = std::fs::read_to_string(root().join("sdk/runtime/src/base/misuse.rs")).unwrap();
    let kinds: Vec<String> = src
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with(|c: char| c.is_ascii_uppercase()))
        .filter_map(|l| l.split_once(" = \"").map(|(_, r)| r))
        .filter_map(|r| r.split_once('"').map(|(k, _)| k.to_string()))
        .map(|k| {
            if k == "printf-off-core-0" {
                "printf".into()
            } else {
                k
            }
        })
        .collect();
    // At least the 27 there were when this was written: a parse that finds fewer is broken
    // (a kind added needs no change here).
    assert!(kinds.len() >= 27, "{kinds:?}");
    // The docs' table names each one.
    let doc = std::fs::read_to_string(root().join("docs/customop-host.md")).unwrap();
    for k in &kinds {
        let k = if k == "printf" {
            "printf-off-core-0"
        } else {
            k
        };
        assert!(
            doc.contains(&format!("| `{k}` |")),
            "docs/customop-host.md lacks {k}"
        );
    }
    kinds
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn every_operation_in_every_element_type_matches_numpy() {
    let dir = scratch("sdk_ops");
    let ntx = install(&dir);
    let src = nt_sdk_tests::kernels();
    let build = dir.join("ops");
    // `none` is not an op: the run is refused (exit 1), the program is built.
    let status = Command::new(&ntx)
        .args(["op", "run", "--compute"])
        .arg(src.join("ops.cpp"))
        .arg("--shape")
        .arg(src.join("ops_shape.cpp"))
        .arg("--build-dir")
        .arg(&build)
        .arg("none")
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
    let said = String::from_utf8_lossy(&status.stderr);
    assert!(
        said.contains("no op 'none' is registered (registered: elementwise)"),
        "{said}"
    );
    let program = build.join("op");
    let text = check(
        "check_ops.py",
        &[program.as_os_str(), dir.join("work").as_os_str()],
    );
    assert!(text.ends_with("all operations right\n"), "{text}");
    assert_eq!(text.lines().count(), 29 * 8 * 2 + 1, "{text}");
    assert!(text.contains("refused and_tt float32 new"), "{text}");
}
