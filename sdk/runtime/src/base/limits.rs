//! The API's limits and the checks of `--cores` and `--timeout`: those of sdk/common, which
//! ntx uses too, so that the two say them once.

pub use nt_sdk_common::*;
