//! `neuron_translate`: a binary-compatible, hardened replacement for `translation.o` of the
//! AWS Neuron `libneuroncustomop.a`, the device-side address translation of the Vision-Q7
//! GPSIMD cores.
//!
//! A 64-bit HBM/SoC address is matched against a 5-window table ([`TranslationCtx`]) and
//! leaves as a 32-bit NX-local address; on a miss, one of three reusable windows is
//! retargeted and its SoC window register reprogrammed.
//!
//! * [`layout`]: the 168-byte table, pinned at compile time.
//! * [`translate`]: the logic, as safe methods on [`TranslationCtx`].
//! * [`window_reg`]: the register seam ([`WindowRegisters`]) and the MMIO implementation.
//! * [`regs`]: the NX register block: `ENGINE_BASE_ADDR` and the `MEM_WINDOW`s, once.
//! * [`init`]: the original's initial table, every value with its source, in one place.
//! * [`abi`]: the exported C symbols (names in [`symbols`]).
//!
//! Safe Rust use, with a register sink of your own:
//!
//! ```
//! use neuron_translate::{MapRecord, TranslationCtx, RegisterAddress, WindowRegisters};
//! // Any register sink will do; this one records what a refill would program.
//! struct Log(Vec<(usize, u64)>);
//! impl WindowRegisters for Log {
//!     fn program(&mut self, reg: RegisterAddress, tag: u64) { self.0.push((reg.get(), tag)); }
//! }
//! let mut t = TranslationCtx::empty();
//! t.records[3] = MapRecord { ptr: 0x40_0000_0000, window: 0x10_0000, mask: !0xFFFF, ..Default::default() };
//! let mut log = Log(Vec::new());
//! assert_eq!(t.translate(0x40_0000_1234, &mut log), Ok(0x10_1234));
//! assert!(log.0.is_empty());
//! ```
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

// On a host, std is always linked: its panic runtime is what a test build (which unwinds)
// and the static library need. The device (`target_os = "none"`) never links it.
#[cfg(any(test, feature = "std", not(target_os = "none")))]
extern crate std;

#[macro_use]
pub mod symbols;

pub mod abi;
pub mod init;
pub mod layout;
#[cfg(feature = "std")]
pub mod model;
pub mod regs;
#[cfg(feature = "std")]
pub mod tables;
pub mod translate;
pub mod window_reg;

pub use init::{initial_table, sbuf_window, InitInputs};
pub use layout::{MapRecord, TranslationCtx};
pub use translate::{Mapping, Refill, RefillError};
#[cfg(any(test, feature = "std"))]
pub use window_reg::RegisterLog;
pub use window_reg::{Mmio, RegisterAddress, WindowRegisters};
