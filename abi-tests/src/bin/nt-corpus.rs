//! `nt-corpus DIR`: writes the committed seed corpora of the fuzz targets (fuzz/corpus/),
//! built from the test fixtures and the standard vectors. Run through `make fuzz-corpus`
//! (tool paths from the Makefile); the output is deterministic.

use std::path::Path;

use clap::Parser;
use std::process::Command;

use nt_support::gen::{standard_vectors, LibCall, TableShape};
use nt_support::tools::{product, run_ok, tool};

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// Writes the seed corpora of the fuzz targets into DIR (run through `make fuzz-corpus`).
#[derive(Parser, Debug)]
#[command(name = "nt-corpus")]
struct Args {
    /// The corpus directory (fuzz/corpus).
    dir: std::path::PathBuf,
}

fn main() {
    let out = Args::parse().dir;
    let root = nt_support::root();

    // translate_diff: table image, then 17-byte calls (kind, address, length).
    let dir = out.join("translate_diff");
    for (i, (shape, v)) in standard_vectors(2, 24).iter().enumerate() {
        let mut bytes = v.table.to_bytes().to_vec();
        for (j, op) in v.ops.iter().enumerate() {
            let (kind, addr) = match *op {
                LibCall::Translate(a) if j % 5 == 4 => (2u8, a),
                LibCall::Translate(a) => (0u8, a),
                LibCall::Lookup(a) => (1u8, a),
            };
            bytes.push(kind);
            bytes.extend_from_slice(&addr.to_le_bytes());
            bytes.extend_from_slice(&(((j as u64) + 1) << (j % 40)).to_le_bytes());
        }
        write(&dir, &format!("{shape:?}-{i}"), &bytes);
    }

    // table_decode: a built table, the standard tables, a wrong size.
    let dir = out.join("table_decode");
    let built = nt_support::gen::sample_table().build_image().unwrap();
    write(&dir, "built", &built);
    for (i, (shape, v)) in standard_vectors(1, 1).iter().enumerate() {
        write(&dir, &format!("{shape:?}-{i}"), &v.table.to_bytes());
    }
    write(&dir, "short", &built[..100]);
    let _ = TableShape::Wild;

    // abi_parse: the reference's length, the reference, the candidate: the fixture, the device
    // object, the manifest, an archive of both objects.
    let dir = out.join("abi_parse");
    let scratch = std::env::temp_dir().join("nt-corpus");
    std::fs::create_dir_all(&scratch).unwrap();
    let fixture = scratch.join("original.o");
    run_ok(
        Command::new(tool("XTENSA_AS"))
            .arg("--abi-windowed")
            .arg(root.join("abi-tests/fixtures/original.S"))
            .arg("-o")
            .arg(&fixture),
    );
    let fixture = std::fs::read(&fixture).unwrap();
    let device = std::fs::read(product("NT_DEVICE_OBJ")).unwrap();
    let manifest = std::fs::read(root.join("abi-tests/reference/translation.toml")).unwrap();
    let members = vec![
        ntx::archive::Member {
            name: b"translation.o".to_vec(),
            data: device.clone(),
            date: 0,
            uid: 0,
            gid: 0,
            mode: 0o644,
        },
        ntx::archive::Member {
            name: b"a_long_member_name.o".to_vec(),
            data: fixture.clone(),
            date: 0,
            uid: 0,
            gid: 0,
            mode: 0o644,
        },
    ];
    let archive = ntx::archive::write_gnu(&members);
    let pair = |a: &[u8], b: &[u8]| {
        let mut v = (a.len() as u32).to_le_bytes().to_vec();
        v.extend_from_slice(a);
        v.extend_from_slice(b);
        v
    };
    write(&dir, "fixture-device", &pair(&fixture, &device));
    write(&dir, "manifest-device", &pair(&manifest, &device));
    write(&dir, "archive-fixture", &pair(&archive, &fixture));
    write(&dir, "manifest-archive", &pair(&manifest, &archive));
    println!("wrote the corpora under {}", out.display());
}
