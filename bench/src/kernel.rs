//! The C++ accessor's three-tensor kernel on the device (bench/qemu/kernel_bench.cpp),
//! counted under qemu with the window emulation left out.

use std::path::Path;

use nt_support::qemu::{
    compile_c_with, count_between_marks, functions, link_args, root, start_object, DEVICE_CXXFLAGS,
    EMU_WRAP,
};

/// The C++ accessor's three-tensor kernel (bench/qemu/kernel_bench.cpp): elements the
/// accessor walks, and the first elements the per-element path does (each costs it the
/// same, and qemu's log of it is long).
pub const KERNEL_ELEMS: u64 = 1 << 20;
pub const KERNEL_PER_ELEMENT_ELEMS: u64 = 1 << 14;
/// The accessor must take at least this many times fewer instructions per element than
/// the per-element path (issue #26).
pub const KERNEL_SPEEDUP_TARGET: f64 = 6.0;

/// The three-tensor kernel's counts under qemu, the window emulation left out: (the
/// accessor over KERNEL_ELEMS elements, the per-element path over KERNEL_PER_ELEMENT_ELEMS).
pub fn kernel_counts(out_dir: &Path, support: &Path) -> (u64, u64) {
    let q = root().join("abi-tests/qemu");
    let (include, consumers) = (root().join("include"), root().join("abi-tests/consumers"));
    let main = out_dir.join("kernel_bench.o");
    let programs = root().join("bench/qemu");
    let defines = [
        format!("-DKB_ELEMS={KERNEL_ELEMS}u"),
        format!("-DKB_PER_ELEMENT_ELEMS={KERNEL_PER_ELEMENT_ELEMS}u"),
    ];
    let mut flags: Vec<&str> = DEVICE_CXXFLAGS.to_vec();
    flags.extend(defines.iter().map(String::as_str));
    compile_c_with(
        &programs.join("kernel_bench.cpp"),
        &main,
        &[&include, &q, &consumers],
        &flags,
    );
    let elf = out_dir.join("kernel_bench.elf");
    let objs = [start_object(out_dir), main, support.to_path_buf()];
    let device = nt_support::tools::product("NT_DEVICE_OBJ");
    link_args(&objs, &device, &[], &EMU_WRAP, &elf);
    let funcs = functions(&elf);
    // The hardware's work (emu_windows.hpp: the window moves and the wrapper that calls
    // them), not the kernel's.
    let skip: Vec<(u32, u32)> = funcs
        .iter()
        .filter(|(n, _)| n.contains("3emu") || n.starts_with("__wrap_"))
        .map(|(_, r)| *r)
        .collect();
    assert!(
        skip.len() >= 3,
        "the emulation's functions in {}",
        elf.display()
    );
    let mark = funcs
        .get("bench_mark")
        .expect("bench_mark in kernel_bench.cpp")
        .0;
    let counts = count_between_marks(&elf, mark, &skip);
    // Marks: accessor | check and reset | per element | check.
    assert_eq!(
        counts.len(),
        4,
        "four marks in kernel_bench.cpp: {counts:?}"
    );
    (counts[0], counts[2])
}
