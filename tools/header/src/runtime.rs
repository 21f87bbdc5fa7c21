//! The custom-op SDK's C header, `sdk/include/neuron_customop_host/runtime.h`, generated
//! from the runtime's sources: the structs, the invoker's type and every `nt_customop_*`
//! function come from cbindgen (`tools/header/cbindgen-runtime.toml`) on the files that
//! declare them; the codes and limits from the runtime's codes module ([`crate::codes`]).

use std::path::Path;

use crate::{as_text, load_config, GenerateError};

/// The committed copy, relative to the repository root.
pub const COMMITTED: &str = "sdk/include/neuron_customop_host/runtime.h";

/// The runtime's files that declare the C ABI: its types, then its functions.
const SOURCES: [&str; 5] = [
    "sdk/runtime/src/base/cabi.rs",
    "sdk/runtime/src/edges/ffi.rs",
    "sdk/runtime/src/edges/ffi_access.rs",
    "sdk/runtime/src/edges/ffi_heap.rs",
    "sdk/runtime/src/edges/api.rs",
];

/// The header for the runtime's sources under `root`.
///
/// # Errors
/// cbindgen's, when it cannot read or parse a source or the configuration.
pub fn generate(root: &Path) -> Result<String, GenerateError> {
    let config = load_config(root, "tools/header/cbindgen-runtime.toml")?;
    let mut builder = cbindgen::Builder::new().with_config(config);
    for src in SOURCES {
        builder = builder.with_src(root.join(src));
    }
    let mut text = Vec::new();
    builder
        .generate()
        .map_err(|source| GenerateError::Cbindgen {
            src: "the runtime".into(),
            source: Box::new(source),
        })?
        .write(&mut text);
    let text = as_text("the runtime", text)?;
    let (head, body) = text
        .split_once("#include <stdint.h>\n")
        .ok_or(GenerateError::NoStdint)?;
    Ok(format!(
        "{head}#include <stdint.h>\n\n{}{body}",
        crate::codes::runtime_h()
    ))
}
