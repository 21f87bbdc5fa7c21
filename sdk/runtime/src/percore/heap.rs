//! The device's HBM heap, where a kernel's own tensors live: on the device `torch::empty`
//! and every operation's result take their bytes from `NeuronAllocator::allocate`, which
//! calls `neuron_hbm_allocate` and asserts that it succeeded. That is the xmem heap
//! ([`crate::base::xmem`]) with 32 block descriptors, set up afresh for each call of the
//! op. With the descriptors all in use the heap no longer splits a free block but hands it
//! over whole, and the next tensor finds no block: the device's kernel aborts there. The
//! model follows every kernel tensor's block through it, on the host run and on the
//! emulated Q7 alike (docs/customop-api.md, "Device parity": the decode's evidence).
//!
//! Left out: a tensor of no elements (whether the device's allocator is asked for 0 bytes,
//! which xmem refuses, the decode does not say), and the HBM stack a kernel built with a
//! larger `STACK_SIZE` may take from the same heap (whether it switches depends on the
//! device's stack at the call).

use crate::base::misuse::Kind;
use crate::base::xmem::{DEFAULT_ALIGN, DESCRIPTORS};
use crate::percore::state::{Phase, Runtime};

/// Where the block for a kernel's new tensor of `bytes` starts in this call's heap, or
/// `None` when the heap does not model it (outside a kernel, no bytes, more than a 32-bit
/// size can ask). Where the device's heap has no block, reports `hbm-heap-exhausted` at the
/// author's line and stops the core.
pub fn take(rt: &mut Runtime, bytes: u64) -> Option<u32> {
    if rt.job.phase != Phase::Kernel || bytes == 0 {
        return None;
    }
    let size = u32::try_from(bytes).ok()?;
    if let Some(at) = rt.job.hbm_heap.alloc(size, DEFAULT_ALIGN) {
        return Some(at);
    }
    let live = rt.job.hbm_heap.taken_count();
    let detail = format!(
        "a tensor of {bytes} bytes, with {live} blocks live (the kernel's tensors, neuron_hbm_allocate's): the device's HBM heap \
         (neuron_hbm_allocate's, {DESCRIPTORS} block descriptors) has no block for it, since once its \
         descriptors are all in use it hands a free block over whole rather than split it; the \
         device's allocator asserts here (NeuronAllocator::allocate); keep fewer tensors alive at \
         once (let temporaries go, write into a tensor with an _out operation)"
    );
    rt.misuse_here(Kind::HbmHeapExhausted, None, None, detail);
    None
}

/// Gives the block at `at` back to this call's heap (a tensor of an earlier call holds
/// none: [`Runtime::begin_job`] lets go of them).
pub fn give_back(rt: &mut Runtime, at: u32) {
    rt.job.hbm_heap.free(at);
}
