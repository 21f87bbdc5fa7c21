//! The runtime of the custom-op SDK: what runs beneath the C++ headers of sdk/include
//! (`<torch/torch.h>`, `<neuron/neuron-utils.hpp>`, `"torchneuron/register.h"`) when an
//! author's kernel runs on a workstation. docs/customop-host.md tells what it simulates.
//!
//! Its modules are in four folders, one layer each, declared below bottom first (one
//! declaration per paragraph, so that formatting keeps the order). A module uses modules
//! of its own folder and of the folders declared before it, never after
//! (`abi-tests/tests/layers.rs` reads this order and holds the code to it).

/// Rules and plain data, no op in sight: the C structs, element types, `.npy`, the TCM
/// pool, the kinds of misuse, exit statuses, limits.
pub mod base;

/// What one core's process holds and does: its tensors, the operations, the accessors'
/// checks, the ops it registered.
pub mod percore;

/// A call checked and run: the shape function, a process per core, the kernel on the
/// emulated Q7, the checks across cores, the reports, the output.
pub mod run;

/// Where calls come in: the C ABI the headers call, the runner API, the server the
/// Python front end talks to.
pub mod edges;

#[cfg(test)]
mod unit;
