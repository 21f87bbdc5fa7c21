//! The machine the host model simulates unless told otherwise, and the inputs `ntx
//! simulate` builds the original table from: HBM at 256 GiB, 1 GiB of it, the HBM scratch
//! window in its top 64 MiB, and an engine base that puts SBUF at `0x50_0000_0000`.

use crate::init::{PINNED_WINDOW_SIZE, SBUF_BELOW_ENGINE_BASE};

/// First SoC address of the HBM region.
pub const HBM_BASE: u64 = 0x40_0000_0000;
/// Its size.
pub const HBM_SIZE: u64 = 1 << 30;
/// `extended_isa::sdk::hbm_scratch`.
pub const HBM_SCRATCH: u64 = HBM_BASE + HBM_SIZE - PINNED_WINDOW_SIZE;
/// `ENGINE_BASE_ADDR`.
pub const ENGINE_BASE: u64 = 0x50_0000_0000 + SBUF_BELOW_ENGINE_BASE;
