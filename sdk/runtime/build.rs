//! Compiles the runtime's C: src/hbm_scratch.c (`extended_isa::sdk::hbm_scratch`) and
//! src/ubsan.c (the handlers of the kernels' checks of operations undefined in C++), each defined weak in C (Rust has no
//! stable weak definitions), so that a program or a sanitizer runtime defining them itself
//! keeps its own; and, for the i386 build the op programs link (the device's data model,
//! where `long double` is `double`), src/printf_ld.c: the kernels' `printf`.

fn main() {
    println!("cargo:rerun-if-changed=src/hbm_scratch.c");
    println!("cargo:rerun-if-changed=src/ubsan.c");
    println!("cargo:rerun-if-changed=../device/ubsan_abi.h");
    println!("cargo:rerun-if-changed=src/printf_ld.c");
    let mut c = cc::Build::new();
    c.include("../device")
        .file("src/hbm_scratch.c")
        .file("src/ubsan.c");
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86") {
        c.file("src/printf_ld.c").flag("-mlong-double-64");
    }
    c.compile("nt_customop_hbm_scratch");
}
