//! What the host model's test files share: a running machine with the table initialised,
//! a translate call, four HBM buffers in regions of their own.
#![allow(dead_code)]

use neuron_translate::abi::{_init_translate_ctx, neuron_translate, neuron_translate_ctx};
use neuron_translate::init::REFILL_WINDOW_SIZE;
use neuron_translate::model::{Config, Machine};
use nt_support::start_exit::set_hbm_scratch;

/// A running machine with the table initialised; hold GLOBAL_LOCK.
pub fn machine() -> Machine {
    let config = Config::default();
    let m = Machine::start(config).expect("the host model starts");
    set_hbm_scratch(config.hbm_scratch);
    _init_translate_ctx();
    m
}

pub fn translate(addr: u64) -> *mut u32 {
    // SAFETY: the table init built; its registers are the model's block.
    unsafe { neuron_translate(neuron_translate_ctx().cast(), addr) }.cast()
}

/// Four HBM buffers, each in a 16 MiB region of its own, each filled with its own word.
pub fn four_regions(m: &Machine) -> [u64; 4] {
    let mut out = [0; 4];
    for (k, o) in out.iter_mut().enumerate() {
        *o = m.alloc(REFILL_WINDOW_SIZE, REFILL_WINDOW_SIZE).unwrap() + 0x1000;
        let word = 0xA0A0_0000u32 + k as u32;
        m.write(*o, &word.to_le_bytes()).unwrap();
    }
    out
}
