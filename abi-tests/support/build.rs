//! Compiles the reference model (abi-tests/csrc/reference.c) for the host tests and the
//! device benchmarks' comparisons, and the NX register page helper the C and Rust tests
//! share (abi-tests/csrc/nx_page.c, over abi-tests/consumers/host_nx.h), and the device
//! runtime's span by lookup for the host (abi-tests/csrc/span_host.c, over sdk/device/span.c).
fn main() {
    for f in [
        "../csrc/reference.c",
        "../csrc/nx_page.c",
        "../consumers/host_nx.h",
        "../csrc/span_host.c",
        "../../sdk/device/span.c",
    ] {
        println!("cargo:rerun-if-changed={f}");
    }
    println!("cargo:rerun-if-changed=../../include/neuron_translate.h");
    let build = |file: &str, lib: &str| {
        cc::Build::new()
            .file(file)
            .include("../../include")
            .std("c11")
            .warnings(true)
            .extra_warnings(true)
            .warnings_into_errors(true)
            .opt_level(2)
            .compile(lib);
    };
    build("../csrc/reference.c", "neuron_translate_reference");
    build("../csrc/nx_page.c", "nt_support_nx_page");
    build("../csrc/span_host.c", "nt_support_span_host");
}
