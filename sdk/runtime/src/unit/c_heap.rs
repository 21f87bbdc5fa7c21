//! The device's C heap a kernel's `malloc` and `operator new` take from
//! ([`crate::percore::c_heap`]).

use super::{runtime, stops, take};
use crate::base::codes::{C_HEAP_ALIGN, C_HEAP_BYTES};
use crate::percore::c_heap::{self, Take};
use crate::percore::state::Phase;

#[test]
fn blocks_fit_the_ten_kib_and_go_back_for_the_next() {
    let mut rt = runtime(1);
    let Take::At(a) = c_heap::take(&mut rt, 6000, 0, false) else {
        panic!("6000 bytes fit")
    };
    assert_eq!(a % C_HEAP_ALIGN as u32, 0);
    assert_eq!(c_heap::usable(&rt, a), Some(6000));
    assert_eq!(
        c_heap::take(&mut rt, 6000, 0, false),
        Take::NoRoom,
        "12000 bytes do not"
    );
    assert!(c_heap::give_back(&mut rt, a));
    assert!(
        !c_heap::give_back(&mut rt, a),
        "freed twice: no live block there"
    );
    assert!(
        matches!(c_heap::take(&mut rt, 6000, 0, false), Take::At(_)),
        "given again"
    );
    let Take::At(z) = c_heap::take(&mut rt, 0, 0, false) else {
        panic!("0 bytes: a block")
    };
    let Take::At(w) = c_heap::take(&mut rt, 1, 64, false) else {
        panic!("aligned")
    };
    assert_eq!(w % 64, 0);
    assert_ne!(z, w);
    let said = take(&mut rt);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].starts_with("warning[malloc-null]") && said[0].contains("6000 bytes"));
    assert!(said[0].contains("1 blocks of 6000 bytes live"), "{said:?}");
}

#[test]
fn malloc_says_null_once_a_call_and_new_stops_the_core() {
    let mut rt = runtime(1);
    let most = C_HEAP_BYTES as u64;
    assert!(
        matches!(c_heap::take(&mut rt, most, 0, false), Take::At(0)),
        "the whole heap"
    );
    assert_eq!(c_heap::take(&mut rt, 1, 0, false), Take::NoRoom);
    assert_eq!(c_heap::take(&mut rt, 64 << 20, 0, false), Take::NoRoom);
    assert_eq!(
        c_heap::take(&mut rt, 1 << 40, 0, false),
        Take::NoRoom,
        "past 32 bits"
    );
    assert_eq!(take(&mut rt).len(), 1, "once a call");
    assert!(stops(&mut rt, |rt| {
        c_heap::take(rt, 16, 0, true);
    }));
    let said = take(&mut rt);
    assert!(said[0].starts_with("error[c-heap-exhausted]") && said[0].contains("std::bad_alloc"));
    // The next call: the heap set up again, and malloc-null said again.
    let stop = rt.job.on_error;
    rt.begin_job("t", 0, 1, Phase::Kernel, stop);
    assert!(matches!(c_heap::take(&mut rt, most, 0, false), Take::At(0)));
    assert_eq!(c_heap::take(&mut rt, 1, 0, false), Take::NoRoom);
    assert_eq!(take(&mut rt).len(), 1);
    // Outside a kernel (a static constructor): the C library's, not modelled.
    rt.begin_job("t", 0, 1, Phase::Host, stop);
    assert_eq!(c_heap::take(&mut rt, 64 << 20, 0, true), Take::Outside);
    assert!(take(&mut rt).is_empty());
}
