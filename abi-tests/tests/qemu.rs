//! The device object itself, unmodified, under qemu-xtensa: the standard vectors through it
//! and through the seed's reference C compiled for the same core, both checked against the
//! host library (three implementations, one answer); and the trap of contract §4.

use std::path::PathBuf;

use nt_support::gen::{standard_vectors, STANDARD};
use nt_support::qemu::{compile_c, link, root, run, start_object, vectors_header};
use nt_support::tools::scratch;

/// The driver `main_src` with the standard vectors (or none) and the reference C.
fn program(name: &str, main_src: &str, with_vectors: bool) -> PathBuf {
    let headers = if with_vectors {
        vec![(
            "vectors.h",
            vectors_header(&standard_vectors(STANDARD.0, STANDARD.1)),
        )]
    } else {
        Vec::new()
    };
    nt_support::qemu::program(name, main_src, &headers, true)
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn device_object_and_reference_c_agree_with_the_host_library_on_every_vector() {
    let elf = program("vectors", "driver.c", true);
    let out = run(&elf);
    let text = String::from_utf8_lossy(&out.stdout);
    println!("{text}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n_ops: usize = standard_vectors(STANDARD.0, STANDARD.1)
        .iter()
        .map(|(_, v)| v.ops.len())
        .sum();
    assert!(
        text.contains(&format!("device object agreed on {n_ops} calls")),
        "{text}"
    );
    assert!(text.contains("; failures 0"), "{text}");
    assert!(
        text.contains("qemu: init and refills through MEM_WINDOW3/5/6 agreed"),
        "{text}"
    );
    // The reference C ran on the two deviation-free shapes: two thirds of the calls.
    assert!(
        text.contains(&format!("reference C on {} calls", n_ops * 2 / 3)),
        "{text}"
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_tensor_loops_read_the_same_elements_on_the_device() {
    let dir = scratch("qemu_tensor");
    let q = root().join("abi-tests/qemu");
    let consumers = root().join("abi-tests/consumers");
    let include = root().join("include");
    let main = dir.join("main.o");
    nt_support::qemu::compile_c_with(
        &consumers.join("tensor_main.c"),
        &main,
        &[&include, &q, &consumers],
        &["-DNT_QEMU"],
    );
    let support = dir.join("support.o");
    compile_c(&q.join("support.c"), &support, &[&q, &include]);
    let elf = dir.join("tensor.elf");
    link(&[start_object(&dir), main, support], &elf);
    let out = run(&elf);
    assert_eq!(
        out.status.code(),
        Some(0),
        "check {:?} failed: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn a_refill_with_a_null_register_traps_on_the_device() {
    let elf = program("trap", "trap.c", false);
    let out = run(&elf);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("before"), "{text}");
    assert!(!text.contains("returned"), "the call returned: {text}");
    // qemu-user re-raises the guest's SIGILL on itself.
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGILL),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
