//! The accessors' checks, the TCM copies and the TCM blocks of [`crate::percore::access`].

use super::{lines, runtime, stops, take, tensor};
use crate::base::codes::Policy;
use crate::percore::access::{self, AccessorKind};
use crate::percore::decode;
use crate::percore::state::{Access, Runtime};
use crate::percore::tensors;

const STANDARD: AccessorKind = AccessorKind::Standard;
const READ_STREAM: AccessorKind = AccessorKind::ReadStream;
const WRITE_STREAM: AccessorKind = AccessorKind::WriteStream;
const TCM: AccessorKind = AccessorKind::Tcm;

const FLOAT: i32 = 6;
const INT: i32 = 3;

#[test]
fn an_accessor_of_another_type_or_rank_stops_the_core() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[4, 8], 0x1000);
    assert!(!stops(&mut rt, |rt| {
        access::open_checked(rt, h, STANDARD, FLOAT, 2);
    }));
    assert!(stops(&mut rt, |rt| {
        access::open_checked(rt, h, STANDARD, FLOAT, 3);
    }));
    assert!(stops(&mut rt, |rt| {
        access::open_checked(rt, h, READ_STREAM, INT, 0);
    }));
    assert!(stops(&mut rt, |rt| {
        access::open_checked(rt, h, TCM, 99, 0);
    }));
    assert_eq!(
        take(&mut rt),
        [
            "error[accessor-type] op t, core 0, tensor 1: standard accessor <float32, 3> on a 2-dimensional float32 tensor",
            "error[accessor-type] op t, core 0, tensor 1: read stream of int32 on a float32 tensor",
            "error[accessor-type] op t, core 0, tensor 1: TCM accessor of an unknown type on a float32 tensor",
        ]
    );
    let other = tensor(&mut rt, &[4, 8], 0x2000);
    assert!(
        !stops(&mut rt, |rt| {
            access::open_checked(rt, other, WRITE_STREAM, FLOAT, 7);
        }),
        "a stream's dimension count is not checked"
    );
}

#[test]
fn a_kind_or_a_policy_no_header_passes_stops_the_core_where_it_enters() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[4], 0x1000);
    assert!(stops(&mut rt, |rt| {
        assert_eq!(decode::accessor(rt, h, 4), None);
    }));
    assert!(stops(&mut rt, |rt| {
        assert_eq!(decode::policy(rt, h, 3), None);
    }));
    assert_eq!(
        take(&mut rt),
        [
            "error[accessor-type] op t, core 0, tensor 1: an accessor of kind 4, which no header of this SDK passes",
            "error[operation-error] op t, core 0, tensor 1: set_accessor_coherence_policy(3): not a policy (COHERENT 0, INCOHERENT_VERBOSE 1, INCOHERENT_QUIET 2)",
        ]
    );
    assert_eq!(decode::policy(&mut rt, h, -1), Some(None));
    assert_eq!(
        tensors::policy(&mut rt, h, None),
        Policy::Coherent,
        "still COHERENT"
    );
    assert_eq!(
        decode::policy(&mut rt, h, 2),
        Some(Some(Policy::IncoherentQuiet))
    );
    assert_eq!(decode::accessor(&mut rt, h, 3), Some(TCM));
}

#[test]
fn a_shape_functions_input_and_several_cores_allow_no_data_accessor() {
    let mut rt = runtime(2);
    let shape =
        crate::percore::tensors::insert(&mut rt, crate::base::dtype::DType::Float, &[3], None);
    let h = tensor(&mut rt, &[3], 0x1000);
    assert!(stops(&mut rt, |rt| {
        access::open_checked(rt, shape, TCM, FLOAT, 0);
    }));
    for kind in [STANDARD, READ_STREAM, WRITE_STREAM] {
        assert!(stops(&mut rt, |rt| {
            access::open_checked(rt, h, kind, FLOAT, 1);
        }));
    }
    assert!(!stops(&mut rt, |rt| {
        access::open_checked(rt, h, TCM, FLOAT, 0);
    }));
    assert_eq!(
        take(&mut rt),
        [
            "error[shape-function-data-read] op t, core 0, tensor 1: a TCM accessor opened in a shape function (its inputs have no data)",
            "error[accessor-multicore] op t, core 0, tensor 2: a standard accessor under 2 cores: only the TCM accessor is defined there",
            "error[accessor-multicore] op t, core 0, tensor 2: a read stream under 2 cores: only the TCM accessor is defined there",
            "error[accessor-multicore] op t, core 0, tensor 2: a write stream under 2 cores: only the TCM accessor is defined there",
        ]
    );
}

/// Opens `kinds` in turn on a new tensor under `policy`; the reports.
fn open_all(policy: Policy, kinds: &[AccessorKind]) -> Vec<String> {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[64], 0x1000);
    tensors::policy(&mut rt, h, Some(policy));
    for &k in kinds {
        let _ = stops(&mut rt, |rt| {
            access::open_checked(rt, h, k, FLOAT, 1);
        });
    }
    lines(&rt)
}

#[test]
fn the_coherence_rules_hold_under_each_policy() {
    let fine: [&[AccessorKind]; 5] = [
        &[READ_STREAM, READ_STREAM, TCM],
        &[WRITE_STREAM, TCM],
        &[STANDARD, STANDARD, TCM],
        &[TCM, READ_STREAM],
        &[TCM, WRITE_STREAM],
    ];
    for kinds in fine {
        assert_eq!(
            open_all(Policy::Coherent, kinds),
            Vec::<String>::new(),
            "{kinds:?}"
        );
    }
    let broken: [(&[AccessorKind], &str); 6] = [
        (&[STANDARD, READ_STREAM], "a read stream opened beside 1 standard accessor(s), 0 read and 0 write stream(s)"),
        (&[WRITE_STREAM, READ_STREAM], "a read stream opened beside 0 standard accessor(s), 0 read and 1 write stream(s)"),
        (&[READ_STREAM, WRITE_STREAM], "a write stream opened beside 0 standard accessor(s), 1 read and 0 write stream(s)"),
        (&[WRITE_STREAM, WRITE_STREAM], "a write stream opened beside 0 standard accessor(s), 0 read and 1 write stream(s)"),
        (&[STANDARD, WRITE_STREAM], "a write stream opened beside 1 standard accessor(s), 0 read and 0 write stream(s)"),
        (&[READ_STREAM, STANDARD], "a standard accessor opened beside 0 standard accessor(s), 1 read and 0 write stream(s)"),
    ];
    for (kinds, what) in broken {
        let e = format!("error[incoherent-accessors] op t, core 0, tensor 1: {what}");
        assert_eq!(open_all(Policy::Coherent, kinds), [e], "{kinds:?}");
        let w = format!("warning[incoherent-accessors-allowed] op t, core 0, tensor 1: {what}");
        assert_eq!(open_all(Policy::IncoherentVerbose, kinds), [w], "{kinds:?}");
        assert_eq!(
            open_all(Policy::IncoherentQuiet, kinds),
            Vec::<String>::new(),
            "{kinds:?}"
        );
    }
    assert_eq!(
        open_all(Policy::Coherent, &[WRITE_STREAM, STANDARD]),
        ["error[incoherent-accessors] op t, core 0, tensor 1: a standard accessor opened beside 0 standard accessor(s), 0 read and 1 write stream(s)"]
    );
}

#[test]
fn four_streams_get_tcm_buffers_and_a_closed_one_gives_its_back() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[64], 0x1000);
    let buffers: Vec<*mut u8> = (0..4)
        .map(|_| access::open_checked(&mut rt, h, READ_STREAM, FLOAT, 1))
        .collect();
    assert!(buffers.iter().all(|b| !b.is_null()));
    assert_eq!(
        (rt.job.counts.fast_streams, rt.job.fast_streams_open),
        (4, 4)
    );
    assert!(access::open_checked(&mut rt, h, READ_STREAM, FLOAT, 1).is_null());
    assert_eq!(
        take(&mut rt),
        ["warning[slow-stream] op t, core 0, tensor 1: 4 open streams: this one goes element by element"]
    );
    assert_eq!(rt.job.counts.slow_streams, 1);
    access::close(&mut rt, h, READ_STREAM, core::ptr::null_mut());
    access::close(&mut rt, h, READ_STREAM, buffers[1]);
    assert_eq!(rt.job.fast_streams_open, 3);
    assert_eq!(rt.entry(h).open.read_streams, 3);
    let again = access::open_checked(&mut rt, h, READ_STREAM, FLOAT, 1);
    assert!(!again.is_null());
    for b in buffers.iter().filter(|b| **b != buffers[1]) {
        access::close(&mut rt, h, READ_STREAM, *b);
    }
    assert_eq!(rt.entry(h).open.read_streams, 1);
    access::close(&mut rt, h, READ_STREAM, again);
    let w = access::open_checked(&mut rt, h, WRITE_STREAM, FLOAT, 1);
    assert_eq!(rt.entry(h).open.write_streams, 1);
    access::close(&mut rt, h, WRITE_STREAM, w);
    let s = access::open_checked(&mut rt, h, STANDARD, FLOAT, 1);
    assert!(s.is_null());
    assert_eq!(rt.job.counts.standard_accessors, 1);
    assert_eq!(rt.entry(h).open.standard, 1);
    access::close(&mut rt, h, STANDARD, s);
    let open = rt.entry(h).open;
    assert_eq!(
        (open.standard, open.read_streams, open.write_streams),
        (0, 0, 0)
    );
    assert_eq!(
        (rt.job.fast_streams_open, rt.job.counts.fast_streams),
        (0, 6)
    );
}

#[test]
fn a_standard_accessor_keeps_the_tracking_with_or_without_sanitize() {
    // Its elements are proxies that tell of each read and write.
    for sanitize in [false, true] {
        let mut rt = runtime(1);
        rt.job.sanitize = sanitize;
        let h = tensor(&mut rt, &[8], 0x1000);
        crate::percore::tensors::track(&mut rt, h);
        access::open_checked(&mut rt, h, STANDARD, FLOAT, 1);
        assert_eq!(rt.entry(h).meta.track, 1);
    }
}

#[test]
fn indices_and_streams_past_the_end_stop_the_core() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[5], 0x1000);
    assert!(stops(&mut rt, |rt| access::bad_index(rt, h, 0, 7, 5)));
    assert!(stops(&mut rt, |rt| access::bad_index(rt, h, -1, 3, 1)));
    assert!(stops(&mut rt, |rt| access::bad_stream(
        rt, h, false, false, 5
    )));
    assert!(stops(&mut rt, |rt| access::bad_stream(
        rt, h, false, true, 6
    )));
    assert!(stops(&mut rt, |rt| access::bad_stream(
        rt, h, true, true, 2
    )));
    assert!(stops(&mut rt, |rt| access::bad_stream(
        rt, h, true, false, 2
    )));
    assert_eq!(
        take(&mut rt),
        [
            "error[index-out-of-range] op t, core 0, tensor 1, index 7: index 7 in dimension 0 of size 5",
            "error[index-out-of-range] op t, core 0, tensor 1, index 3: dimension 3 of a 1-dimensional tensor",
            "error[stream-past-end] op t, core 0, tensor 1, index 5: a stream read at element 5 of 5",
            "error[stream-past-end] op t, core 0, tensor 1, index 6: a stream written at element 6 of 5",
            "error[stream-after-close] op t, core 0, tensor 1, index 2: a stream written after close()",
            "error[stream-after-close] op t, core 0, tensor 1, index 2: a stream read after close()",
        ]
    );
}

#[test]
fn a_tcm_copy_past_the_end_stops_the_core_and_each_copy_is_counted() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[10], 0x1000);
    access::tcm_copy(&mut rt, h, FLOAT, 0, 10, false);
    access::tcm_copy(&mut rt, h, FLOAT, 10, 0, true);
    assert!(stops(&mut rt, |rt| access::tcm_copy(
        rt, h, FLOAT, 4, 7, true
    )));
    assert!(stops(&mut rt, |rt| access::tcm_copy(
        rt,
        h,
        FLOAT,
        4,
        u64::MAX,
        false
    )));
    assert!(stops(&mut rt, |rt| access::tcm_copy(
        rt, h, INT, 0, 1, false
    )));
    assert_eq!(
        take(&mut rt),
        [
            "error[tcm-copy-past-end] op t, core 0, tensor 1, index 4..11: tcm_to_tensor of 7 elements from element 4: the tensor has 10",
            format!("error[tcm-copy-past-end] op t, core 0, tensor 1, index 4..{}: tensor_to_tcm of {} elements from element 4: the tensor has 10", u64::MAX, u64::MAX).as_str(),
            "error[accessor-type] op t, core 0, tensor 1: TCM accessor of int32 on a float32 tensor",
        ]
    );
    assert_eq!(
        (rt.job.counts.tcm_in_bytes, rt.job.counts.tcm_out_bytes),
        (40, 0)
    );
    access::count_tcm(&mut rt, 3, 5);
    assert_eq!(
        (rt.job.counts.tcm_in_bytes, rt.job.counts.tcm_out_bytes),
        (43, 5)
    );
}

/// The kinds of the reports so far, emptied.
fn kinds(rt: &mut crate::percore::state::Runtime) -> Vec<&'static str> {
    rt.job.reports.drain(..).map(|r| r.kind.name()).collect()
}

#[test]
fn a_tcm_copys_local_buffer_in_static_data_stops_the_core() {
    static DATA: [u8; 64] = [7; 64];
    let mut rt = runtime(1);
    let p = std::hint::black_box(&DATA).as_ptr() as usize;
    assert!(stops(&mut rt, |rt| access::tcm_local(rt, p, 64, 9)));
    assert_eq!(kinds(&mut rt), ["tcm-copy-not-dataram"]);
    // Memory of its own (tcm_malloc's, the heap's) is dataram on the device: nothing said.
    let heap = Box::new([0u8; 64]);
    access::tcm_local(&mut rt, heap.as_ptr() as usize, 64, 9);
    assert!(kinds(&mut rt).is_empty());
}

#[test]
fn a_stack_buffer_is_said_once_and_only_past_the_default_stack() {
    use crate::base::limits::STACK_DEFAULT;
    use crate::base::stack::Watch;
    let local = [0u8; 64];
    let p = std::hint::black_box(&local).as_ptr() as usize;
    // The kernel was called above the buffer: it is in the kernel's frames.
    let top = p + 64 + 4096;
    for limit in [STACK_DEFAULT - 1, STACK_DEFAULT] {
        let mut rt = runtime(1);
        rt.stack = Watch::start(limit, top);
        access::tcm_local(&mut rt, p, 64, 1);
        assert!(
            kinds(&mut rt).is_empty(),
            "the default stack ({limit} bytes) is never switched"
        );
    }
    let mut rt = runtime(1);
    rt.stack = Watch::start(STACK_DEFAULT + 1, top);
    access::tcm_local(&mut rt, p, 64, 1);
    access::tcm_local(&mut rt, p, 64, 1);
    assert_eq!(
        kinds(&mut rt),
        ["tcm-copy-stack-switched"],
        "said once a run"
    );
    let heap = Box::new([0u8; 64]);
    access::tcm_local(&mut rt, heap.as_ptr() as usize, 64, 1);
    assert!(
        kinds(&mut rt).is_empty(),
        "a buffer off the stack is not the stack's"
    );
    // Another report first does not hide the stack's.
    let mut rt = runtime(1);
    rt.stack = Watch::start(STACK_DEFAULT + 1, top);
    rt.misuse(
        crate::base::misuse::Kind::StackOverflowHost,
        None,
        None,
        "deep".into(),
    );
    access::tcm_local(&mut rt, p, 64, 1);
    assert_eq!(
        kinds(&mut rt),
        ["stack-overflow-host", "tcm-copy-stack-switched"]
    );
}

#[test]
fn consecutive_copies_of_a_tensor_merge_into_one_access() {
    let mut rt = runtime(2);
    let a = tensor(&mut rt, &[100], 0x1000);
    let b = tensor(&mut rt, &[100], 0x2000);
    let at = |tensor, first, count, write| Access {
        tensor,
        first,
        count,
        write,
        at: None,
    };
    // On several cores each access keeps its place (the test's own stack here): compared
    // apart.
    let unplaced = |rt: &Runtime| -> Vec<Access> {
        assert!(rt.job.accesses.iter().all(|a| a.at.is_some()));
        rt.job
            .accesses
            .iter()
            .map(|a| Access {
                at: None,
                ..a.clone()
            })
            .collect()
    };
    for k in 0..3 {
        access::tcm_copy(&mut rt, a, FLOAT, 10 * k, 10, false);
        access::tcm_copy(&mut rt, b, FLOAT, 10 * k, 10, true);
    }
    access::tcm_copy(&mut rt, a, FLOAT, 50, 5, false);
    access::tcm_copy(&mut rt, a, FLOAT, 55, 5, true);
    access::tcm_copy(&mut rt, b, FLOAT, 30, 1, true);
    assert_eq!(
        unplaced(&rt),
        [
            at(0x1000, 0, 30, false),
            at(0x2000, 0, 31, true),
            at(0x1000, 50, 5, false),
            at(0x1000, 55, 5, true),
        ]
    );
    assert_eq!(
        (rt.job.counts.tcm_in_bytes, rt.job.counts.tcm_out_bytes),
        (140, 144)
    );
    // Only the last four accesses are looked at.
    for k in 0..4 {
        access::tcm_copy(&mut rt, a, FLOAT, 70 + k, 1, k % 2 == 0);
    }
    access::tcm_copy(&mut rt, b, FLOAT, 31, 1, true);
    assert_eq!(rt.job.accesses.len(), 9);
    assert_eq!(unplaced(&rt)[8], at(0x2000, 31, 1, true));
}

#[test]
fn tcm_blocks_are_watched_under_sanitize_and_leaks_are_placed() {
    let mut rt = runtime(1);
    rt.job.sanitize = true;
    let p = access::tcm_malloc(&mut rt, 64, 0x51) as usize;
    let q = access::tcm_malloc(&mut rt, 32, 0) as usize;
    assert!(access::tcm_malloc(&mut rt, 1 << 20, 0).is_null());
    assert_eq!(rt.job.tcm_blocks, [(p, 64, 0x51), (q, 32, 0)]);
    assert_eq!(
        rt.job.pool.unwritten(p, 64),
        Some((0, 64, "a block of 64 bytes (pool offset 0)".into()))
    );
    assert!(stops(&mut rt, |rt| access::tcm_read(rt, p + 4, 8, 0x91)));
    assert_eq!(
        rt.job.reports[0].at,
        Some(crate::base::misuse::At::Calls(vec![0x90]))
    );
    assert_eq!(
        take(&mut rt),
        ["error[uninitialized-read] op t, core 0: tcm_to_tensor of 8 bytes reads bytes 4..12 of a block of 64 bytes (pool offset 0), which nothing wrote"]
    );
    access::tcm_read(&mut rt, 0x1000, 8, 0x91);
    access::report_leaks(&mut rt, &|site| format!("place {site:#x}"));
    assert_eq!(
        lines(&rt),
        [
            "warning[tcm-leak] op t, core 0: a block of 64 bytes (pool offset 0) allocated at place 0x50 was never freed",
            "warning[tcm-leak] op t, core 0: a block of 32 bytes (pool offset 64) allocated at a place not known was never freed",
        ]
    );
    assert!(rt.job.tcm_blocks.is_empty());
    let mut plain = runtime(1);
    let p = access::tcm_malloc(&mut plain, 64, 0) as usize;
    assert_eq!(
        plain.job.pool.unwritten(p, 64),
        None,
        "not watched without --sanitize"
    );
}

#[test]
fn a_foreign_or_second_tcm_free_stops_the_core() {
    let mut rt = runtime(1);
    let p = access::tcm_malloc(&mut rt, 64, 0);
    let q = access::tcm_malloc(&mut rt, 64, 0);
    access::tcm_free(&mut rt, p);
    assert_eq!(rt.job.tcm_blocks, [(q as usize, 64, 0)]);
    assert!(stops(&mut rt, |rt| access::tcm_free(rt, p)));
    assert_eq!(
        take(&mut rt),
        [format!("error[tcm-free-foreign] op t, core 0: tcm_free({p:p}): not a live block of this core's TCM pool")]
    );
    access::report_leaks(&mut rt, &|_| String::new());
    assert_eq!(rt.job.reports.len(), 1, "{:?}", lines(&rt));
    access::tcm_free(&mut rt, q);
}

#[test]
fn a_tensor_let_go_under_an_open_accessor_or_used_after_stops_the_core() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[4], 0x1000);
    let s = access::open_checked(&mut rt, h, STANDARD, FLOAT, 1);
    tensors::retain(&mut rt, h);
    tensors::release_from_kernel(&mut rt, h);
    assert!(rt.job.reports.is_empty(), "another reference holds it");
    assert!(stops(&mut rt, |rt| tensors::release_from_kernel(rt, h)));
    assert!(matches!(
        rt.job.reports[0].at,
        Some(crate::base::misuse::At::Calls(ref c)) if !c.is_empty()
    ));
    assert_eq!(
        take(&mut rt),
        ["error[tensor-not-live] op t, core 0, tensor 1: the last torch::Tensor holding it was destroyed while 1 accessor(s) of it were open, which then read or write memory the tensor no longer owns: the variable given another tensor, say; keep the tensor while its accessors are used"]
    );
    access::close(&mut rt, h, STANDARD, s);
    tensors::release_from_kernel(&mut rt, h);
    assert!(rt.job.reports.is_empty(), "closed first: let go cleanly");
    assert!(stops(&mut rt, |rt| {
        rt.entry(h);
    }));
    assert!(take(&mut rt)[0].starts_with(
        "error[tensor-not-live] op t, core 0: tensor 1 was used after the last torch::Tensor"
    ));
    assert!(stops(&mut rt, |rt| {
        rt.entry(0);
    }));
}

#[test]
fn a_stream_that_finds_the_pool_full_says_so_and_a_shape_functions_report_has_no_core() {
    let mut rt = runtime(1);
    let h = tensor(&mut rt, &[64], 0x1000);
    let all = access::tcm_malloc(&mut rt, crate::base::tcm::POOL_BYTES, 0);
    assert!(!all.is_null());
    assert!(access::open_checked(&mut rt, h, READ_STREAM, FLOAT, 1).is_null());
    assert_eq!(
        take(&mut rt),
        ["warning[slow-stream] op t, core 0, tensor 1: the TCM pool has no 4096 bytes left for a stream's buffer (0 open streams; tcm_malloc blocks hold the rest): this one goes element by element"]
    );
    let stop = rt.job.on_error;
    rt.begin_job("t", 0, 1, crate::percore::state::Phase::Shape, stop);
    rt.misuse(
        crate::base::misuse::Kind::IncoherentAllowed,
        None,
        None,
        "in the shape function".into(),
    );
    assert_eq!(
        lines(&rt),
        ["warning[incoherent-accessors-allowed] op t: in the shape function"]
    );
}

#[test]
fn a_span_or_store_outside_the_devices_live_blocks_stops_the_core_there_and_one_inside_does_not() {
    use crate::base::misuse::At;
    let mut rt = runtime(1);
    access::tcm_malloc(&mut rt, 64, 0);
    let b = access::tcm_malloc(&mut rt, 1000, 0);
    rt.job.device_site = Some(0x4010);
    access::device_span(&mut rt, 64, 1000);
    access::device_span(&mut rt, 100, 964);
    assert!(
        rt.job.reports.is_empty(),
        "inside a block: {:?}",
        rt.job.reports
    );
    assert!(stops(&mut rt, |rt| access::device_span(rt, 64, 1001)));
    assert_eq!(rt.job.reports[0].at, Some(At::Device(0x4010)));
    assert!(stops(&mut rt, |rt| access::device_span(rt, -8, 4)));
    assert!(stops(&mut rt, |rt| access::device_store(
        rt, 0x9000, 1070, 2
    )));
    access::tcm_free(&mut rt, b);
    assert!(stops(&mut rt, |rt| access::device_store(rt, 0x9000, 70, 4)));
    assert_eq!(
        take(&mut rt),
        [
            "error[tcm-out-of-bounds] op t, core 0: 1001 bytes from pool offset 64, to be copied or set there: \
             byte 1064 is 0 bytes past the end of a block of 1000 bytes (pool offset 64)",
            "error[tcm-out-of-bounds] op t, core 0: 4 bytes from pool offset -8, to be copied or set there: \
             byte -8 is 8 bytes before the start of a block of 64 bytes (pool offset 0)",
            "error[tcm-out-of-bounds] op t, core 0: a 2-byte store at 0x9000 (pool offset 1070): byte 1070 \
             is 6 bytes past the end of a block of 1000 bytes (pool offset 64)",
            "error[tcm-out-of-bounds] op t, core 0: a 4-byte store at 0x9000 (pool offset 70): byte 70 is \
             6 bytes into a block of 1000 bytes (pool offset 64), already freed",
        ]
    );
}

#[test]
fn a_copy_keeps_its_place_only_where_checks_across_cores_may_name_it() {
    for (cores, placed) in [(1, false), (2, true)] {
        let mut rt = runtime(cores);
        let a = tensor(&mut rt, &[100], 0x1000);
        access::tcm_copy(&mut rt, a, FLOAT, 0, 10, true);
        assert_eq!(rt.job.accesses[0].at.is_some(), placed, "{cores} cores");
    }
}
