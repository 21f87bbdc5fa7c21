//! Compiles the C++ accessor's three-tensor kernel (csrc/accessor_bench.cpp) for the host
//! benchmarks (benches/host.rs).
fn main() {
    println!("cargo:rerun-if-changed=csrc/accessor_bench.cpp");
    println!("cargo:rerun-if-changed=../include/neuron_translate.hpp");
    println!("cargo:rerun-if-changed=../include/neuron_translate.h");
    cc::Build::new()
        .cpp(true)
        .file("csrc/accessor_bench.cpp")
        .include("../include")
        .std("c++17")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .opt_level(2)
        .compile("neuron_translate_accessor_bench");
}
