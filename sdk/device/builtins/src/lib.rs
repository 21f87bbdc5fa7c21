//! Nothing of its own: the package exists so that `compiler_builtins` can be built for the
//! device target and emitted as assembly (sdk/device/builtins.sh).
#![no_std]
