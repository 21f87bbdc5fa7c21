//! Compiles the runtime's C: src/hbm_scratch.c (`extended_isa::sdk::hbm_scratch`) and
//! src/ubsan.c (the handlers of the kernels' checks of operations undefined in C++), each defined weak in C (Rust has no
//! stable weak definitions), so that a program or a sanitizer runtime defining them itself
//! keeps its own.

fn main() {
    println!("cargo:rerun-if-changed=src/hbm_scratch.c");
    println!("cargo:rerun-if-changed=src/ubsan.c");
    println!("cargo:rerun-if-changed=../device/ubsan_abi.h");
    cc::Build::new()
        .include("../device")
        .file("src/hbm_scratch.c")
        .file("src/ubsan.c")
        .compile("nt_customop_hbm_scratch");
}
