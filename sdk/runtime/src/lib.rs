//! The runtime of the custom-op SDK: what runs beneath the C++ headers of sdk/include
//! (`<torch/torch.h>`, `<neuron/neuron-utils.hpp>`, `"torchneuron/register.h"`) when an
//! author's kernel runs on a workstation. docs/customop-host.md tells what it simulates.
//!
//! * [`tensors`]: tensors in the host model's HBM, by handle, shared by copies.
//! * [`ops`]: the tensor operations and their element-type rules.
//! * [`access`]: the accessors' checks, TCM copies and the TCM pool ([`tcm`]).
//! * [`misuse`]: what the device leaves undefined, by name, as errors and warnings.
//! * [`registry`], [`run`], [`cores`], [`stats`]: the ops a program registers, and the
//!   runner that calls one on 1 to 8 cores (a process each).
//! * [`npy`], [`dtype`]: NumPy's file format and the eight element types.
//! * [`ffi`], [`api`]: the C ABI the headers call, and the runner API's.

pub mod access;
pub mod api;
pub mod cores;
pub mod dtype;
pub mod ffi;
pub mod filler;
pub mod misuse;
pub mod npy;
pub mod ops;
pub mod registry;
pub mod run;
pub mod state;
pub mod stats;
pub mod tcm;
pub mod tensors;
