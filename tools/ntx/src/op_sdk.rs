//! The installed SDK as its pkg-config files describe it (`neuron_customop_host`,
//! `neuron_customop_device`): its flags and its compiler, found beside ntx's own prefix.

use std::process::Command;

use crate::op_error::OpError;

fn words(flags: &str) -> Vec<String> {
    flags.split_whitespace().map(str::to_string).collect()
}

/// `pkg-config ARGS PACKAGE` with the SDK's package files found: ntx's own prefix
/// (`<bin>/../lib/pkgconfig`) is searched after `PKG_CONFIG_PATH`. Its output's words.
pub fn pkg_config(args: &[&str], package: &str) -> Result<Vec<String>, OpError> {
    let tool = std::env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    let mut path = std::env::var("PKG_CONFIG_PATH").unwrap_or_default();
    if let Some(prefix) = std::env::current_exe()
        .ok()
        .and_then(|e| Some(e.parent()?.parent()?.to_path_buf()))
    {
        let own = prefix.join("lib/pkgconfig");
        path = if path.is_empty() {
            own.display().to_string()
        } else {
            format!("{path}:{}", own.display())
        };
    }
    let out = Command::new(&tool)
        .env("PKG_CONFIG_PATH", &path)
        .args(args)
        .arg(package)
        .output()
        .map_err(OpError::start(&tool))?;
    if !out.status.success() {
        return Err(OpError::NoPackage {
            tool,
            package: package.into(),
            said: String::from_utf8_lossy(&out.stderr).trim().into(),
        });
    }
    Ok(words(&String::from_utf8_lossy(&out.stdout)))
}

/// The SDK's compile and link flags from pkg-config.
pub fn sdk_flags() -> Result<(Vec<String>, Vec<String>), OpError> {
    let query = |what: &str| pkg_config(&[what], "neuron_customop_host");
    Ok((query("--cflags")?, query("--libs")?))
}

/// The host's C++ compiler: the SDK's clang (pkg-config `neuron_customop_host`'s `cxx`),
/// the device's front end, whatever `$CXX` says.
pub fn host_compiler() -> Result<String, OpError> {
    let cxx = pkg_config(&["--variable", "cxx"], "neuron_customop_host")?.join(" ");
    if cxx.is_empty() {
        return Err(OpError::NoCompiler);
    }
    Ok(cxx)
}
