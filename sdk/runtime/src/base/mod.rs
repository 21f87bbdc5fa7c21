//! Rules and plain data with no op in sight: the C ABI's structs and codes, element
//! types, `.npy` files, the TCM pool and the device's heap it follows, the kinds of misuse
//! and their reports, exit statuses, limits, the HBM filler's thread, the stack's watch and
//! the floating-point flags; the device protocol's payloads.
//! Uses nothing else of the runtime.

pub(crate) mod cabi;
pub mod codes;
pub mod dtype;
pub mod error;
pub(crate) mod filler;
pub(crate) mod fpflags;
pub mod limits;
pub(crate) mod local;
pub mod misuse;
pub mod npy;
pub(crate) mod stack;
pub(crate) mod status;
pub(crate) mod stdout_ring;
pub(crate) mod tcm;
pub mod wire;
pub(crate) mod xmem;
