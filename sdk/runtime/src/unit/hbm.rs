//! `neuron_hbm_allocate`, `neuron_hbm_deallocate` and `neuron_memcpy`'s check
//! ([`crate::percore::hbm`]).

use super::{runtime, stops, take, tensor};
use crate::percore::hbm;
use crate::percore::state::{Arena, Runtime};

/// A kernel's runtime on `cores` cores with 1 MiB of HBM.
fn with_hbm(cores: u32) -> Runtime {
    let mut rt = runtime(cores);
    rt.arena = Arena::new(0x10_0000, 1 << 20);
    rt
}

#[test]
fn blocks_come_from_the_heap_of_32_descriptors_aligned_and_go_back() {
    let mut rt = with_hbm(1);
    let mut given = Vec::new();
    while let Some(addr) = hbm::allocate(&mut rt, 64, 0) {
        given.push(addr);
    }
    // 31 split off the pool's one free block; the 32nd takes what is left whole.
    assert_eq!(given.len(), 32);
    assert!(
        take(&mut rt).is_empty(),
        "no block is the device's -1, not a report"
    );
    assert!(hbm::deallocate(&mut rt, given[3]));
    assert!(hbm::allocate(&mut rt, 64, 0).is_some());
    // A new call: an empty heap, the arena's bytes given back.
    let stop = rt.job.on_error;
    rt.begin_job("t", 0, 1, crate::percore::state::Phase::Kernel, stop);
    assert_eq!(rt.arena.largest_free(), 1 << 20);
    let a = hbm::allocate(&mut rt, 100, 0).unwrap();
    // The arena's bytes behind it: 100 and the alignment's 64, in 64-byte units.
    assert_eq!(rt.arena.largest_free(), (1 << 20) - 192);
    let b = hbm::allocate(&mut rt, 100, 4096).unwrap();
    assert_eq!((a % 64, b % 4096), (0, 0));
    assert!(hbm::deallocate(&mut rt, b));
    assert!(take(&mut rt).is_empty());
    // What xmem aborts on, and an address no live block starts at: the core stops.
    assert!(stops(&mut rt, |rt| assert!(
        hbm::allocate(rt, 0, 0).is_none()
    )));
    assert!(stops(&mut rt, |rt| assert!(
        hbm::allocate(rt, 8, 48).is_none()
    )));
    assert!(stops(&mut rt, |rt| assert!(!hbm::deallocate(rt, b))));
    assert!(stops(&mut rt, |rt| assert!(!hbm::deallocate(rt, a + 64))));
    let said = take(&mut rt);
    let kinds: Vec<&str> = said.iter().map(|l| l.split(']').next().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "error[operation-error",
            "error[operation-error",
            "error[hbm-free-foreign",
            "error[hbm-free-foreign"
        ],
        "{said:?}"
    );
}

#[test]
fn a_copy_must_lie_in_one_tensor_or_block_and_counts_as_a_tcm_copy_of_the_tensor() {
    let mut rt = with_hbm(2);
    let t = tensor(&mut rt, &[100], 0x1000);
    hbm::copy(&mut rt, 0x1000 + 40, 80, None, true);
    let a = &rt.job.accesses;
    assert_eq!(a.len(), 1);
    assert_eq!(
        (a[0].tensor, a[0].first, a[0].count, a[0].write),
        (0x1000, 10, 20, true)
    );
    assert_eq!(rt.job.counts.tcm_out_bytes, 80);
    // Not on whole elements: allowed, not recorded.
    hbm::copy(&mut rt, 0x1000 + 2, 4, None, false);
    // Inside a block of neuron_hbm_allocate's: allowed, not recorded.
    let block = hbm::allocate(&mut rt, 256, 0).unwrap();
    hbm::copy(&mut rt, block, 256, None, false);
    assert_eq!(rt.job.accesses.len(), 1);
    assert!(take(&mut rt).is_empty());
    // Past either's end, or where nothing lives: the core stops.
    for (addr, bytes) in [
        (0x1000 + 396, 8),
        (block + 200, 64),
        (0x9000, 4),
        (u64::MAX - 2, 8),
    ] {
        assert!(stops(&mut rt, |rt| hbm::copy(rt, addr, bytes, None, false)));
    }
    let said = take(&mut rt);
    assert_eq!(said.len(), 4);
    assert!(said
        .iter()
        .all(|l| l.starts_with("error[hbm-copy-out-of-bounds] op t, core 0: neuron_memcpy of ")));
    let _ = t;
}
