//! The `ntx build` / `explain` / `translate` commands over the table tools: a spec built,
//! explained and translated through, bad inputs refused, and the original's table.

use std::process::Command;

use neuron_translate::layout::offsets::CTX_SIZE;
use nt_support::tools::{product, scratch};

fn ntx(args: &[&str]) -> std::process::Output {
    Command::new(product("NT_NTX")).args(args).output().unwrap()
}

/// `ntx build SPEC -o TABLE`, which must succeed; the table's bytes.
fn ntx_build(spec: &std::path::Path, table: &std::path::Path) -> Vec<u8> {
    let out = ntx(&[
        "build",
        spec.to_str().unwrap(),
        "-o",
        table.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(table).unwrap()
}

/// `ntx build` of a spec with three reusable windows into `dir`: the table's path.
fn three_window_table(dir: &std::path::Path) -> std::path::PathBuf {
    let spec = dir.join("spec.toml");
    std::fs::write(
        &spec,
        r#"
    next_alloc = 1
    [[window]]
    slot = 0
    kind = "reusable"
    soc_base = 0x4000000000
    size = 0x10000
    local_base = 0x80000
    reg_location = 0x100218
    [[window]]
    slot = 1
    kind = "reusable"
    soc_base = 0x4001000000
    mask = "0xffff_ffff_ff00_0000"
    local_base = 0x1000000
    reg_location = 0x100228
    [[window]]
    slot = 2
    kind = "reusable"
    soc_base = 0x4002000000
    size = 0x1000000
    local_base = 0x2000000
    reg_location = 0x100230
    "#,
    )
    .unwrap();
    let table = dir.join("t.bin");
    let bytes = ntx_build(&spec, &table);
    assert_eq!(bytes.len(), CTX_SIZE);
    assert_eq!(bytes[160], 1);
    table
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn ntx_build_explain_translate() {
    let table = three_window_table(&scratch("host_tables_cli"));
    let out = ntx(&["explain", table.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(text.contains("slot 1  reusable  SoC 0x0000004001000000..=0x0000004001ffffff (16 MiB) -> local 0x01000000..=0x01ffffff"), "{text}");
    assert!(text.contains("next: slot 1, cursor 1"), "{text}");
    assert!(
        text.contains("register 0x100228 (MEM_WINDOW5_LO)\n"),
        "{text}"
    );
    let out = ntx(&["explain", "--format", "json", table.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"][0]["shape"], "window");
    assert_eq!(v["records"][0]["size"], "0x10000");
    assert_eq!(v["victim"], 1);

    let out = ntx(&[
        "translate",
        table.to_str().unwrap(),
        "0x4001000042",
        "0x9900001234",
        "0x9900001238",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text.contains("0x0000004001000042: slot 1, local 0x01000042 (the window maps SoC 0x0000004001000000..=0x0000004001ffffff)"),
        "{text}"
    );
    assert!(
        text.contains("a refill takes slot 1 (cursor 1), tag 0x0000009900000000, local 0x01001234"),
        "{text}"
    );
    assert!(text.contains("writes 0x00000099 to register 0x10022c (MEM_WINDOW5_HI), then 0x00000000 to 0x100228 (MEM_WINDOW5_LO); cursor becomes 2"), "{text}");
    assert!(
        text.contains("0x0000009900001238: slot 1, local 0x01001238"),
        "the refill is seen by what follows: {text}"
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn ntx_refuses_bad_inputs_with_exit_2_naming_the_file() {
    let dir = scratch("host_tables_cli_bad");
    let table = three_window_table(&dir);
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, "[[window]]\nslot = 0\nkind = \"pinned\"\nsoc_base = 1\nsize = 3\nlocal_base = 0\nreg_location = 0\n").unwrap();
    let out = ntx(&[
        "build",
        bad.to_str().unwrap(),
        "-o",
        dir.join("x.bin").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.toml")
            && err.contains("size 0x3 is not a power of two")
            && err.contains("pinned window in a reusable slot"),
        "{err}"
    );
    assert!(!dir.join("x.bin").exists());
    let short = dir.join("short.bin");
    std::fs::write(&short, [0u8; 100]).unwrap();
    let out = ntx(&["explain", short.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains(&format!("exactly {CTX_SIZE} bytes; this file has 100")));
    let out = ntx(&["translate", table.to_str().unwrap(), "banana"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn ntx_builds_and_explains_the_original_table() {
    let dir = scratch("host_tables_original");
    let spec = dir.join("original.toml");
    std::fs::write(
        &spec,
        "[original]\nengine_base = 0x2801000000\nhbm_scratch = \"0x42_1234_5678\"\n",
    )
    .unwrap();
    let table = dir.join("original.bin");
    let bytes = ntx_build(&spec, &table);
    let want = neuron_translate::initial_table(&neuron_translate::InitInputs {
        engine_base: 0x28_0100_0000,
        hbm_scratch: 0x42_1234_5678,
    });
    assert_eq!(bytes, want.to_bytes());
    let out = ntx(&["explain", table.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "slot 0  reusable  empty",
        "register 0x100218 (MEM_WINDOW3_LO)  [the original's reusable-0 window, PUBLIC]",
        "register 0x100230 (MEM_WINDOW6_LO)  [the original's reusable-2 window, PUBLIC]",
        "slot 3  pinned    SoC 0x00000027fc000000..=0x00000027ffffffff (64 MiB) -> local 0x80000000..=0x83ffffff  register 0x0  [the original's sbuf window, PUBLIC]",
        "slot 4  pinned    SoC 0x0000004210000000..=0x0000004213ffffff (64 MiB) -> local 0x84000000..=0x87ffffff  register 0x0  [the original's hbm-scratch window, PUBLIC]",
        "No problems found.",
    ] {
        assert!(text.contains(line), "{line:?} not in:\n{text}");
    }
    let out = ntx(&["explain", "--format", "json", table.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"][0]["register"], "MEM_WINDOW3");
    assert_eq!(v["records"][3]["original"], "sbuf");
    assert_eq!(v["records"][3]["original_provenance"], "PUBLIC");
    assert!(v["records"][3]["original_source"]
        .as_str()
        .unwrap()
        .contains("ENGINE_BASE_ADDR - 41 MiB"));
    assert_eq!(v["records"][3]["register"], serde_json::Value::Null);
    // The contract's worked example, through ntx.
    let out = ntx(&["translate", table.to_str().unwrap(), "0x2802012345"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("a refill takes slot 0 (cursor 0), tag 0x0000002802000000, local 0x07012345")
            && text.contains("writes 0x00000028 to register 0x10021c (MEM_WINDOW3_HI), then 0x02000000 to 0x100218 (MEM_WINDOW3_LO)"),
        "{text}"
    );
    // [original] and windows together: refused.
    std::fs::write(
        &spec,
        "[original]\nengine_base = 0\nhbm_scratch = 0\n[[window]]\nslot = 0\nkind = \"reusable\"\nsize = 16\nlocal_base = 0\nreg_location = 4\n",
    )
    .unwrap();
    let out = ntx(&[
        "build",
        spec.to_str().unwrap(),
        "-o",
        table.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("either [original] or [[window]]s"));
}
