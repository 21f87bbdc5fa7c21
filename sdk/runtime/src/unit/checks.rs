//! The checks across cores of [`crate::run::checks`].

use crate::base::misuse::{At, Kind};
use crate::percore::state::{Access, Counts};
use crate::run::checks::{across_cores, take_result};
use crate::run::options::Options;
use crate::run::report::{CoreReport, Returned};

const OUT: u64 = 0x9000;

fn core(core: u32, accesses: &[(u64, u64, u64, bool)]) -> CoreReport {
    CoreReport {
        core,
        translations: 0,
        hits: [0; 5],
        refills: [0; 5],
        counts: Counts::default(),
        pool_high_water: 0,
        dst_called: true,
        dst_at: Some(At::Calls(vec![0xd5, u64::from(core)])),
        fp_invalid: false,
        returned: None,
        accesses: accesses
            .iter()
            .map(|&(tensor, first, count, write)| Access {
                tensor,
                first,
                count,
                write,
                at: Some(At::Calls(vec![tensor + first, u64::from(core)])),
            })
            .collect(),
        reports: Vec::new(),
        device: None,
        profile: None,
        printed: String::new(),
    }
}

fn options(cores: u32) -> Options {
    Options {
        op: "t".into(),
        cores,
        ..Options::default()
    }
}

fn lines(o: &Options, reports: &[CoreReport], numel: u64) -> Vec<String> {
    across_cores(o, reports, (OUT, numel))
        .iter()
        .map(|r| r.line())
        .collect()
}

#[test]
fn cores_sharing_the_output_fairly_report_nothing() {
    let a = core(
        0,
        &[(OUT, 0, 5, true), (OUT, 5, 5, true), (0x100, 0, 10, false)],
    );
    let b = core(
        1,
        &[
            (OUT, 10, 10, true),
            (0x100, 0, 10, false),
            (OUT, 3, 0, true),
        ],
    );
    assert!(lines(&options(2), &[a, b], 20).is_empty());
}

#[test]
fn a_shared_write_a_read_of_anothers_write_and_unwritten_output_are_reported() {
    let a = core(0, &[(OUT, 0, 6, true), (0x100, 0, 4, true)]);
    let b = core(
        1,
        &[(OUT, 4, 4, true), (0x100, 2, 3, false), (OUT, 20, 2, true)],
    );
    assert_eq!(
        lines(&options(2), &[a, b], 24),
        [
            "warning[core-reads-other-core-write] op t, tensor at HBM 0x100, index 2..4: core 1 read elements 2..4, which core 0 wrote",
            "error[cores-write-same-element] op t, output, index 4..6: cores 0 and 1 both wrote elements 4..6",
            "error[output-unwritten] op t, output, index 8..20: no core wrote output elements 8..20 of 24; the output is what get_dst_tensor() gave",
            "error[output-unwritten] op t, output, index 22..24: no core wrote output elements 22..24 of 24; the output is what get_dst_tensor() gave",
        ]
    );
}

#[test]
fn a_finding_across_cores_is_placed_at_the_first_cores_copy() {
    let a = core(0, &[(OUT, 0, 6, true), (0x100, 0, 4, true)]);
    let b = core(1, &[(OUT, 4, 4, true), (0x100, 2, 3, false)]);
    let found = across_cores(&options(2), &[a, b], (OUT, 10));
    let at = |k: Kind| {
        found
            .iter()
            .find(|r| r.kind == k)
            .and_then(|r| r.at.clone())
    };
    // Core 0's write of elements 0..6 holds the first shared element, 4.
    assert_eq!(at(Kind::SharedWrite), Some(At::Calls(vec![OUT, 0])));
    // Core 1 read elements 2..5 of what core 0 wrote.
    assert_eq!(at(Kind::CrossRead), Some(At::Calls(vec![0x102, 1])));
    // Elements 8..10 no core wrote: named where core 0 asked for the output.
    assert_eq!(at(Kind::Unwritten), Some(At::Calls(vec![0xd5, 0])));
}

#[test]
fn a_finding_is_placed_at_the_copy_of_its_tensor_and_direction_that_holds_the_element() {
    // Before the copy that wrote element 4 of the output, core 0 wrote those elements of
    // another tensor and read them of the output.
    let a = core(
        0,
        &[(0x100, 0, 8, true), (OUT, 0, 8, false), (OUT, 2, 4, true)],
    );
    let b = core(1, &[(OUT, 4, 4, true)]);
    let found = across_cores(&options(2), &[a, b], (OUT, 8));
    let shared = found.iter().find(|r| r.kind == Kind::SharedWrite).unwrap();
    assert_eq!(shared.at, Some(At::Calls(vec![OUT + 2, 0])));
}

#[test]
fn the_output_is_checked_for_gaps_only_under_several_cores() {
    let a = core(0, &[(OUT, 2, 3, true)]);
    assert!(lines(&options(1), std::slice::from_ref(&a), 10).is_empty());
    assert_eq!(
        lines(&options(2), &[a, core(1, &[])], 10),
        [
            "error[output-unwritten] op t, output, index 0..2: no core wrote output elements 0..2 of 10; the output is what get_dst_tensor() gave",
            "error[output-unwritten] op t, output, index 5..10: no core wrote output elements 5..10 of 10; the output is what get_dst_tensor() gave",
        ]
    );
    let c = core(
        0,
        &[(OUT, 0, 4, true), (OUT, 2, 2, true), (OUT, 4, 6, true)],
    );
    assert!(
        lines(&options(2), &[c], 10).is_empty(),
        "overlapping ranges of one core"
    );
}

#[test]
fn a_core_reading_what_it_wrote_itself_is_fine() {
    let a = core(0, &[(0x100, 0, 4, true), (0x100, 0, 4, false)]);
    let b = core(1, &[(0x100, 4, 4, true), (0x100, 4, 4, false)]);
    assert!(lines(&options(2), &[a, b], 0).is_empty());
    let c = core(2, &[(0x100, 3, 2, false)]);
    let a = core(0, &[(0x100, 0, 4, true)]);
    let b = core(1, &[(0x100, 4, 4, true)]);
    let l = lines(&options(3), &[a, b, c], 0);
    assert_eq!(
        l,
        ["warning[core-reads-other-core-write] op t, cores 0 to 2, tensor at HBM 0x100, index 3..5: 2 pairs of cores (2-0, 2-1) (reader-writer) read what the other wrote: 2 elements in 1 range (3..5); --stats=json lists each pair"],
        "core 2 read both, one report"
    );
}

#[test]
fn a_result_without_get_dst_tensor_is_checked_against_the_shape_functions() {
    let mut rt = super::runtime(1);
    let out = super::tensor(&mut rt, &[2, 3], OUT);
    let mut r = core(0, &[]);
    r.dst_called = false;
    let returned = |sizes: Vec<i64>, dtype| Returned {
        dtype,
        sizes,
        hbm_addr: OUT,
        bytes: 24,
    };
    let check = |rt: &mut crate::percore::state::Runtime, o: &Options, r: &CoreReport| {
        let mut found = Vec::new();
        take_result(rt, o, r, out, &mut found);
        found.iter().map(|r| r.line()).collect::<Vec<_>>()
    };
    assert!(
        check(&mut rt, &options(1), &r).is_empty(),
        "nothing returned"
    );
    r.returned = Some(returned(vec![2, 3], 6));
    assert!(
        check(&mut rt, &options(1), &r).is_empty(),
        "the output itself"
    );
    r.returned = Some(returned(vec![3, 2], 6));
    assert_eq!(
        check(&mut rt, &options(1), &r),
        ["error[returned-tensor-mismatch] op t, core 0, output: returned [3, 2] float32 where the shape function gave [2, 3] float32"]
    );
    r.returned = Some(returned(vec![2, 3], 3));
    assert_eq!(
        check(&mut rt, &options(1), &r),
        ["error[returned-tensor-mismatch] op t, core 0, output: returned [2, 3] int32 where the shape function gave [2, 3] float32"]
    );
    assert_eq!(
        check(&mut rt, &options(2), &r),
        ["error[multicore-no-dst-tensor] op t, core 0, output: the kernel returned without calling get_dst_tensor()"]
    );
    r.dst_called = true;
    assert!(check(&mut rt, &options(2), &r).is_empty());
}

#[test]
fn covered_counts_each_element_once_and_gaps_are_found_between_and_after() {
    use crate::run::checks::{covered, gaps};
    let written = [(0, 4), (2, 6), (8, 10)];
    assert_eq!(gaps(&written, 12), [(6, 8), (10, 12)]);
    assert_eq!(covered(&written, 12), 8, "overlaps counted once");
    assert_eq!(covered(&[], 5), 0);
    assert_eq!(covered(&[(0, 5)], 5), 5);
}

/// The grouped `cores-write-same-element` line of cores writing `writes` (core, first,
/// count) of the output.
fn shared_writes(writes: &[(u32, u64, u64)]) -> String {
    let reports: Vec<CoreReport> = (0..8)
        .map(|c| {
            let mine: Vec<(u64, u64, u64, bool)> = writes
                .iter()
                .filter(|w| w.0 == c)
                .map(|w| (OUT, w.1, w.2, true))
                .collect();
            core(c, &mine)
        })
        .collect();
    let all = lines(&options(8), &reports, 64);
    let found: Vec<&String> = all
        .iter()
        .filter(|l| l.starts_with("error[cores-write-same-element]"))
        .collect();
    assert_eq!(found.len(), 1, "{all:?}");
    found[0].clone()
}

#[test]
fn the_grouped_report_elides_past_four_pairs_and_three_ranges_exactly() {
    // Four pairs (0-1, 0-2, 1-2, 3-4) over three ranges: each named, nothing elided.
    let four = [
        (0, 0, 1),
        (0, 10, 1),
        (1, 0, 1),
        (1, 10, 1),
        (2, 10, 1),
        (3, 20, 1),
        (4, 20, 1),
    ];
    assert_eq!(
        shared_writes(&four),
        "error[cores-write-same-element] op t, cores 0 to 4, output, index 0..1: 4 pairs of cores (0-1, 0-2, 1-2, 3-4) \
         both wrote 3 elements in 3 ranges (0..1, 10..11, 20..21); --stats=json lists each pair"
    );
    // A fifth pair (5-6) over a fourth range: both lists elided after their limit.
    let five = [&four[..], &[(5, 30, 1), (6, 30, 1)]].concat();
    assert_eq!(
        shared_writes(&five),
        "error[cores-write-same-element] op t, cores 0 to 6, output, index 0..1: 5 pairs of cores (0-1, 0-2, 1-2, 3-4, ...) \
         both wrote 4 elements in 4 ranges (0..1, 10..11, 20..21, ...); --stats=json lists each pair"
    );
}
