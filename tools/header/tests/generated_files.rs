//! Every file `nt-header` generates is committed as it generates it (the library's C
//! header, the SDK runtime's runtime.h, the device's protocol.h and the Python package's
//! `_abi.py`): the binary's `--check`, as part of `cargo test`.

use std::process::Command;

#[test]
fn every_generated_file_is_current() {
    let out = Command::new(env!("CARGO_BIN_EXE_nt-header"))
        .arg("--check")
        .output()
        .expect("nt-header runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "a generated file is stale (run `make header` and commit it):\n{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for file in [
        "include/neuron_translate.h",
        "runtime.h",
        "protocol.h",
        "_abi.py",
    ] {
        assert!(
            said.lines()
                .any(|l| l.contains(file) && l.ends_with(" is current")),
            "nt-header --check did not check {file}:\n{said}"
        );
    }
}
