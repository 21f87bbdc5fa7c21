//! Compiles src/hbm_scratch.c: `extended_isa::sdk::hbm_scratch` defined weak in C (Rust has no
//! stable weak definitions), so that a program defining it itself keeps its own.

fn main() {
    println!("cargo:rerun-if-changed=src/hbm_scratch.c");
    cc::Build::new()
        .file("src/hbm_scratch.c")
        .compile("nt_customop_hbm_scratch");
}
