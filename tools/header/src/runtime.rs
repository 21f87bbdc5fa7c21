//! The custom-op SDK's C header, `sdk/include/neuron_customop_host/runtime.h`, generated
//! from the runtime's sources: the structs, the invoker's type and every `nt_customop_*`
//! function come from cbindgen (`tools/header/cbindgen-runtime.toml`) on the files that
//! declare them; the constants the headers use come from the runtime's own values.

use std::fmt::Write as _;
use std::path::Path;

use neuron_customop_host::base::limits::{DEVICE_CPU_COUNT, STACK_DEFAULT, STACK_MAX};
use neuron_customop_host::edges::ffi::{
    ARG_DOUBLE, ARG_INT, ARG_NONE, ARG_SCALAR_FLOAT, ARG_SCALAR_INT, ARG_TENSOR,
};
use neuron_customop_host::percore::state::MAX_DIMS;

/// The committed copy, relative to the repository root.
pub const COMMITTED: &str = "sdk/include/neuron_customop_host/runtime.h";

/// The runtime's files that declare the C ABI: its types, then its functions.
const SOURCES: [&str; 4] = [
    "sdk/runtime/src/base/cabi.rs",
    "sdk/runtime/src/edges/ffi.rs",
    "sdk/runtime/src/edges/ffi_access.rs",
    "sdk/runtime/src/edges/api.rs",
];

/// The header for the runtime's sources under `root`.
///
/// # Errors
/// cbindgen's, when it cannot read or parse a source or the configuration.
pub fn generate(root: &Path) -> Result<String, String> {
    let config = "tools/header/cbindgen-runtime.toml";
    let config =
        cbindgen::Config::from_file(root.join(config)).map_err(|e| format!("{config}: {e}"))?;
    let mut builder = cbindgen::Builder::new().with_config(config);
    for src in SOURCES {
        builder = builder.with_src(root.join(src));
    }
    let mut text = Vec::new();
    builder
        .generate()
        .map_err(|e| format!("cbindgen on the runtime: {e}"))?
        .write(&mut text);
    let text = String::from_utf8(text).map_err(|e| format!("cbindgen on the runtime: {e}"))?;
    let (head, body) = text
        .split_once("#include <stdint.h>\n")
        .ok_or("cbindgen wrote no <stdint.h> include")?;
    Ok(format!(
        "{head}#include <stdint.h>\n\n{}{body}",
        constants()
    ))
}

/// The constants the headers use, from the runtime's values.
fn constants() -> String {
    let mut h = String::new();
    h.push_str(
        "/* A core's stack on the device: 4196 bytes unless the build says -DSTACK_SIZE=N, at\n \
         * most 4 MiB (the shipped library's stack_switch.hpp). bind.hpp refuses more at\n \
         * compile time. */\n",
    );
    let _ = writeln!(h, "#define NT_CUSTOMOP_STACK_DEFAULT {STACK_DEFAULT}");
    let _ = writeln!(h, "#define NT_CUSTOMOP_STACK_MAX {STACK_MAX}\n");
    h.push_str(
        "/* get_cpu_count() on one core: the device's parallel.o says 8 whatever the build. */\n",
    );
    let _ = writeln!(
        h,
        "#define NT_CUSTOMOP_DEVICE_CPU_COUNT {DEVICE_CPU_COUNT}\n"
    );
    h.push_str("/* Most dimensions of a tensor. */\n");
    let _ = writeln!(h, "#define NT_CUSTOMOP_MAX_DIMS {MAX_DIMS}\n");
    h.push_str("/* What an nt_customop_arg holds (its kind). */\nenum {\n");
    for (name, value, what) in [
        ("NONE", ARG_NONE, "nothing"),
        ("TENSOR", ARG_TENSOR, "meta"),
        ("INT", ARG_INT, "i: an int64_t parameter"),
        ("DOUBLE", ARG_DOUBLE, "f: a double parameter"),
        ("SCALAR_INT", ARG_SCALAR_INT, "i: an integral Scalar"),
        (
            "SCALAR_FLOAT",
            ARG_SCALAR_FLOAT,
            "f: a floating-point Scalar",
        ),
    ] {
        let _ = writeln!(h, "    NT_CUSTOMOP_ARG_{name} = {value}, /* {what} */");
    }
    h.push_str("};\n\n");
    h
}
