//! The device calls a kernel may make on HBM beyond the guide (the decode's `custom_op.h`):
//! `neuron_hbm_allocate` and `neuron_hbm_deallocate` over this call's HBM heap
//! ([`crate::percore::heap`], the heap a kernel's tensors come from), and `neuron_memcpy`
//! between local memory and HBM, whose HBM bytes must lie in one live tensor or block
//! (the device's DMA copies any address: stricter here) and whose copies of a tensor count
//! as its TCM copies do (the checks across cores, the written elements).

use core::ffi::c_void;

use crate::base::misuse::Kind;
use crate::percore::state::{HbmBlock, Runtime};

/// `neuron_hbm_allocate(bytes, &addr, align)`: the SoC address of `bytes` aligned to `align`
/// (64 when 0), or `None` (the device's -1) when the heap has no block. A size of 0 or an
/// alignment not a power of two stop the core (xmem aborts on both).
pub fn allocate(rt: &mut Runtime, bytes: u32, align: u32) -> Option<u64> {
    let align = if align == 0 { 64 } else { align };
    if bytes == 0 || !align.is_power_of_two() {
        let d = format!(
            "neuron_hbm_allocate({bytes}, ..., {align}): the device's heap (xmem) aborts on a size of 0 \
             or an alignment that is not a power of two"
        );
        rt.misuse_here(Kind::OpFailed, None, None, d);
        return None;
    }
    let heap_at = rt.job.hbm_heap.alloc(bytes, align)?;
    let raw_bytes = u64::from(bytes) + u64::from(align);
    let Some(raw) = rt.arena.alloc(raw_bytes) else {
        rt.job.hbm_heap.free(heap_at);
        return None;
    };
    let addr = raw.next_multiple_of(u64::from(align));
    let bytes = u64::from(bytes);
    rt.job.hbm_blocks.push(HbmBlock {
        addr,
        bytes,
        heap_at,
        raw,
        raw_bytes,
    });
    Some(addr)
}

/// `neuron_hbm_deallocate(addr)`: true where `addr` is a live block's, given back; else
/// `hbm-free-foreign` (the device's heap finds no such block).
pub fn deallocate(rt: &mut Runtime, addr: u64) -> bool {
    let Some(k) = rt.job.hbm_blocks.iter().position(|b| b.addr == addr) else {
        let d = format!(
            "neuron_hbm_deallocate({addr:#x}): no block neuron_hbm_allocate gave in this call starts \
             there (or it was freed already)"
        );
        rt.misuse_here(Kind::HbmFreeForeign, None, None, d);
        return false;
    };
    let b = rt.job.hbm_blocks.remove(k);
    rt.job.hbm_heap.free(b.heap_at);
    rt.arena.free(b.raw, b.raw_bytes);
    true
}

/// `neuron_memcpy` of `bytes` between local memory and HBM `addr` (`write`: to HBM): its
/// local side (`local`: in this process, with the call's return address) as a TCM copy's;
/// its HBM side within one live tensor (then recorded as a TCM copy of its elements where
/// it covers whole ones) or one live block, else it stops the core at the call
/// (`hbm-copy-out-of-bounds`).
pub fn copy(
    rt: &mut Runtime,
    addr: u64,
    bytes: u64,
    local: Option<(*const c_void, u64)>,
    write: bool,
) {
    if let Some((p, site)) = local {
        crate::percore::access::tcm_local(rt, p as usize, bytes as usize, site);
    }
    let end = addr.checked_add(bytes);
    let inside = |start: u64, len: u64| addr >= start && end.is_some_and(|e| e <= start + len);
    if rt.job.hbm_blocks.iter().any(|b| inside(b.addr, b.bytes)) {
        return;
    }
    let tensor = rt.tensors.iter().flatten().find_map(|e| {
        let base = e.meta.hbm_addr;
        (e.meta.data_less == 0 && inside(base, e.bytes)).then_some((e.meta.handle, base, e.dtype))
    });
    let Some((h, base, dtype)) = tensor else {
        let d = format!(
            "neuron_memcpy of {bytes} bytes {} HBM {addr:#x}: they are not all inside one live tensor or \
             neuron_hbm_allocate block (the device's DMA copies them anyway, over whatever is there)",
            if write { "to" } else { "from" }
        );
        return rt.misuse_here(Kind::HbmCopyOutOfBounds, None, None, d);
    };
    let (size, offset) = (dtype.size() as u64, addr - base);
    if offset.is_multiple_of(size) && bytes.is_multiple_of(size) {
        let (first, count) = (offset / size, bytes / size);
        crate::percore::access::tcm_copy(rt, h, dtype as i32, first, count, write);
        crate::percore::tensors::note(rt, h, first, count, write, "a neuron_memcpy");
    }
}
