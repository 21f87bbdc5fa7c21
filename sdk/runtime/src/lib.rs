//! The runtime of the custom-op SDK: what runs beneath the C++ headers of sdk/include
//! (`<torch/torch.h>`, `<neuron/neuron-utils.hpp>`, `"torchneuron/register.h"`) when an
//! author's kernel runs on a workstation. docs/customop-host.md tells what it simulates.
//!
//! Its modules are in layers, each using only its own and the ones below
//! (docs/architecture.md lists them; a test holds the code to that list):
//!
//! 1. Rules, with no runtime state: [`cabi`] (the C ABI's plain structs and codes),
//!    [`dtype`], [`npy`], [`tcm`] (the pool), [`misuse`] (the kinds of misuse and their
//!    reports), [`status`] (exit statuses), [`limits`], [`filler`].
//! 2. One core's state: [`state`], [`tensors`], [`access`] (the accessors' checks),
//!    [`ops`], [`registry`].
//! 3. Running an op: [`child`] (a phase in a process of its own), [`worker`] (the
//!    processes kept between calls), [`options`],
//!    [`outfile`], [`report`], [`checks`] (across cores), [`stats`], [`shape`] (the shape
//!    function), [`cores`] (a process per core), [`device`], [`device_count`] and
//!    [`device_print`] (a core's kernel on the emulated Q7, what it executed and printed), [`run`].
//! 4. The edges: [`ffi`] and [`ffi_access`] (the C ABI the headers call: converts and
//!    forwards), [`api`] (the runner API's C ABI) and [`serve`] (the op's program as a
//!    server for the Python front end).

pub mod access;
pub mod api;
pub mod cabi;
pub mod checks;
pub mod child;
pub mod cores;
pub mod device;
pub mod device_count;
pub mod device_print;
pub mod dtype;
pub mod ffi;
pub mod ffi_access;
pub mod filler;
pub mod limits;
pub mod misuse;
pub mod npy;
pub mod ops;
pub mod options;
pub mod outfile;
pub mod param_names;
pub mod registry;
pub mod report;
pub mod run;
pub mod serve;
pub mod shape;
pub mod stack;
pub mod state;
pub mod stats;
pub mod status;
pub mod tcm;
pub mod tensors;
pub mod worker;

#[cfg(test)]
mod unit;
