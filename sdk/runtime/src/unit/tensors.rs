//! The written-element tracking of [`crate::percore::tensors`]: `track`, `untrack`, `note`.

use super::{runtime, stops, take, tensor};
use crate::percore::tensors::{self, note};

const WHAT: &str = "a copy";

#[test]
fn writes_merge_and_a_read_of_a_gap_names_the_first_gap() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[100], 0x1000);
    tensors::track(&mut rt, h);
    assert_eq!(rt.entry(h).meta.track, 1);
    note(&mut rt, h, 10, 10, true, WHAT);
    note(&mut rt, h, 40, 10, true, WHAT);
    note(&mut rt, h, 30, 5, true, WHAT);
    note(&mut rt, h, 20, 10, true, WHAT);
    assert_eq!(rt.entry(h).written, [(10, 35), (40, 50)]);
    note(&mut rt, h, 35, 5, true, WHAT);
    assert_eq!(rt.entry(h).written, [(10, 50)], "touching ranges merge");
    note(&mut rt, h, 60, 10, true, WHAT);
    note(&mut rt, h, 5, 70, true, WHAT);
    assert_eq!(
        rt.entry(h).written,
        [(5, 75)],
        "a range over several merges them"
    );
    for (first, count) in [(5, 70), (10, 1), (74, 1), (5, 0), (0, 0)] {
        note(&mut rt, h, first, count, false, WHAT);
    }
    assert!(take(&mut rt).is_empty());
    assert!(stops(&mut rt, |rt| note(rt, h, 70, 10, false, WHAT)));
    assert!(stops(&mut rt, |rt| note(rt, h, 0, 10, false, WHAT)));
    assert!(stops(&mut rt, |rt| note(rt, h, 4, 2, false, WHAT)));
    assert!(stops(&mut rt, |rt| note(rt, h, 90, 20, false, WHAT)));
    assert_eq!(
        take(&mut rt),
        [
            "error[uninitialized-read] op t, core 0, tensor 1, index 75..80: a copy read elements 75..80, which nothing wrote",
            "error[uninitialized-read] op t, core 0, tensor 1, index 0..5: a copy read elements 0..5, which nothing wrote",
            "error[uninitialized-read] op t, core 0, tensor 1, index 4..5: a copy read elements 4..5, which nothing wrote",
            "error[uninitialized-read] op t, core 0, tensor 1, index 90..100: a copy read elements 90..100, which nothing wrote",
        ]
    );
}

#[test]
fn a_gap_between_written_ranges_is_found() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[100], 0x1000);
    tensors::track(&mut rt, h);
    for first in [0, 20, 40] {
        note(&mut rt, h, first, 10, true, WHAT);
    }
    note(&mut rt, h, 0, 10, false, WHAT);
    note(&mut rt, h, 42, 3, false, WHAT);
    assert!(stops(&mut rt, |rt| note(rt, h, 5, 30, false, WHAT)));
    assert!(stops(&mut rt, |rt| note(rt, h, 25, 10, false, WHAT)));
    assert_eq!(
        take(&mut rt),
        [
            "error[uninitialized-read] op t, core 0, tensor 1, index 10..20: a copy read elements 10..20, which nothing wrote",
            "error[uninitialized-read] op t, core 0, tensor 1, index 30..35: a copy read elements 30..35, which nothing wrote",
        ]
    );
}

#[test]
fn the_tracking_ends_when_all_is_written_and_only_tracked_tensors_are_checked() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[8], 0x1000);
    note(&mut rt, h, 0, 4, false, WHAT);
    assert!(take(&mut rt).is_empty(), "not tracked");
    tensors::track(&mut rt, h);
    note(&mut rt, h, 4, 10, true, WHAT);
    assert_eq!(rt.entry(h).written, [(4, 8)], "clipped to the tensor");
    note(&mut rt, h, 0, 4, true, WHAT);
    assert_eq!(rt.entry(h).meta.track, 0, "all written");
    assert!(rt.entry(h).written.is_empty());
    tensors::track(&mut rt, h);
    note(&mut rt, h, 0, 2, true, WHAT);
    tensors::untrack(&mut rt, h);
    assert_eq!((rt.entry(h).meta.track, rt.entry(h).written.len()), (0, 0));
    note(&mut rt, h, 2, 2, false, WHAT);
    assert!(take(&mut rt).is_empty());
    tensors::track(&mut rt, h);
    assert!(
        rt.entry(h).written.is_empty(),
        "tracking again starts from nothing"
    );
    let shape = tensors::insert(&mut rt, crate::base::dtype::DType::Float, &[8], None);
    tensors::track(&mut rt, shape);
    assert_eq!(
        rt.entry(shape).meta.track,
        0,
        "nothing to track without storage"
    );
}

#[test]
fn numel_refuses_negative_sizes_and_overflow() {
    assert_eq!(tensors::numel(&[3, 4]), Some(12));
    assert_eq!(tensors::numel(&[]), Some(1));
    assert_eq!(tensors::numel(&[3, -1]), None);
    assert_eq!(tensors::numel(&[1 << 40, 1 << 40]), None);
}

#[test]
fn the_hbm_heap_has_blocks_for_32_kernel_tensors_and_not_a_33rd() {
    use crate::percore::heap;
    let mut rt = runtime(1);
    let blocks: Vec<_> = (0..32).map(|_| heap::take(&mut rt, 16).unwrap()).collect();
    assert!(take(&mut rt).is_empty());
    assert!(stops(&mut rt, |rt| assert!(heap::take(rt, 16).is_none())));
    let said = take(&mut rt);
    assert_eq!(said.len(), 1);
    assert!(
        said[0].starts_with(
            "error[hbm-heap-exhausted] op t, core 0: a tensor of 16 bytes, with 32 blocks live (the kernel's tensors, neuron_hbm_allocate's): "
        ),
        "{said:?}"
    );
    // One given back: each later tensor takes that block whole, and gives it back.
    heap::give_back(&mut rt, blocks[7]);
    for _ in 0..100 {
        let b = heap::take(&mut rt, 16).unwrap();
        heap::give_back(&mut rt, b);
    }
    assert!(take(&mut rt).is_empty());
    // The next call's heap is new, and a tensor of this call holds no block in it.
    let h = tensor(&mut rt, &[4], 0x1000);
    rt.entry(h).heap = Some(blocks[0]);
    let stop = rt.job.on_error;
    rt.begin_job("t", 0, 1, crate::percore::state::Phase::Kernel, stop);
    assert_eq!(rt.entry(h).heap, None);
    assert!((0..32).all(|_| heap::take(&mut rt, 16).is_some()));
    assert!(stops(&mut rt, |rt| assert!(heap::take(rt, 16).is_none())));
    // Outside a kernel, and for no bytes: no block, and nothing said.
    rt.begin_job("t", 0, 1, crate::percore::state::Phase::Host, stop);
    assert!((0..40).all(|_| heap::take(&mut rt, 16).is_none()));
    rt.begin_job("t", 0, 1, crate::percore::state::Phase::Kernel, stop);
    assert!(heap::take(&mut rt, 0).is_none());
    assert!(take(&mut rt).is_empty());
}
