//! Compiles the reference model (abi-tests/csrc/reference.c) for the host tests and the
//! device benchmarks' comparisons.
fn main() {
    println!("cargo:rerun-if-changed=../csrc/reference.c");
    cc::Build::new()
        .file("../csrc/reference.c")
        .std("c11")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .opt_level(2)
        .compile("neuron_translate_reference");
}
