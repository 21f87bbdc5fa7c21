//! The custom-op SDK's element types (sdk/include/c10/util/): c10::Half against the
//! compiler's own _Float16 and c10::BFloat16 against rounding written from its definition,
//! over every 16-bit value and tens of millions of floats, ties included, built as C++14
//! (as the device builds kernels) with gcc and clang (abi-tests/customops/half_types.cpp).

use std::process::Command;

use nt_support::qemu::root;
use nt_support::tools::{run_ok, scratch, tool};

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn half_and_bfloat16_round_to_nearest_even_as_the_compiler_and_the_definition_do() {
    let dir = scratch("sdk_types");
    for var in ["HOST_CXX", "HOST_CLANGXX"] {
        let exe = dir.join(format!("half_types-{var}"));
        run_ok(
            Command::new(tool(var))
                .args([
                    "-std=c++14",
                    "-O2",
                    "-Wall",
                    "-Wextra",
                    "-Werror",
                    "-pedantic",
                    "-I",
                ])
                .arg(root().join("sdk/include"))
                .arg(root().join("abi-tests/customops/half_types.cpp"))
                .arg("-o")
                .arg(&exe),
        );
        let out = run_ok(&mut Command::new(&exe));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.ends_with("all conversions right\n"), "{var}:\n{text}");
        let checked: u64 = text.split_whitespace().next().unwrap().parse().unwrap();
        assert!(checked > 30_000_000, "{var}: {text}");
    }
}
