//! The checks made after the cores ran, across them: elements two cores wrote, elements a
//! core read that another wrote, output elements no core wrote, and each core's result
//! against the shape function's.

use crate::base::dtype::DType;
use crate::base::misuse::{Kind, Report};
use crate::percore::state::Runtime;
use crate::run::options::Options;
use crate::run::report::{cross_core, CoreReport};

/// Sorted, merged ranges of one tensor's elements that `core` wrote (or read).
fn ranges(r: &CoreReport, tensor: u64, write: bool) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = r
        .accesses
        .iter()
        .filter(|a| a.tensor == tensor && a.write == write && a.count > 0)
        .map(|a| (a.first, a.first + a.count))
        .collect();
    v.sort_unstable();
    merged(v)
}

/// The stretches both `a` and `b` (sorted, merged) hold, in order.
fn overlaps(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| (x.0.max(y.0), x.1.min(y.1))))
        .filter(|(s, e)| s < e)
        .collect();
    v.sort_unstable();
    v
}

/// Pairs of cores `(a, b)` and the elements of one tensor where both did what `kind`
/// finds.
type Pairs = Vec<(u32, u32, Vec<(u64, u64)>)>;

/// A finding between pairs of cores on `tensor` as one report: a single pair in its own
/// words (`say(a, b, first range)`); several grouped (pairs that `did` the elements),
/// naming the pairs, the elements and the first ranges, each pair's words kept in
/// `instances`.
fn pairwise(
    o: &Options,
    (kind, did): (Kind, &str),
    tensor: &str,
    pairs: &Pairs,
    say: impl Fn(u32, u32, &str) -> String,
) -> Option<Report> {
    let range = |(s, e): (u64, u64)| format!("{s}..{e}");
    let instances: Vec<String> = pairs
        .iter()
        .map(|(a, b, r)| {
            say(
                *a,
                *b,
                &r.iter().map(|x| range(*x)).collect::<Vec<_>>().join(", "),
            )
        })
        .collect();
    let first = *pairs.first()?.2.first()?;
    if let [(a, b, _)] = pairs.as_slice() {
        return Some(cross_core(
            &o.op,
            kind,
            tensor,
            range(first),
            say(*a, *b, &range(first)),
        ));
    }
    let mut all: Vec<(u64, u64)> = pairs.iter().flat_map(|p| p.2.iter().copied()).collect();
    all.sort_unstable();
    let union = merged(all);
    let elements: u64 = union.iter().map(|(s, e)| e - s).sum();
    let shown: Vec<String> = union.iter().take(3).map(|x| range(*x)).collect();
    let more = if union.len() > 3 { ", ..." } else { "" };
    let named: Vec<String> = pairs
        .iter()
        .take(4)
        .map(|(a, b, _)| format!("{a}-{b}"))
        .collect();
    let etc = if pairs.len() > 4 { ", ..." } else { "" };
    let detail = format!(
        "{} pairs of cores ({}{etc}) {did} {elements} elements in {} range{} ({}{more}); \
         --stats=json lists each pair",
        pairs.len(),
        named.join(", "),
        union.len(),
        if union.len() == 1 { "" } else { "s" },
        shown.join(", "),
    );
    let mut cores: Vec<u32> = pairs.iter().flat_map(|p| [p.0, p.1]).collect();
    cores.sort_unstable();
    cores.dedup();
    let mut r = cross_core(&o.op, kind, tensor, range(union[0]), detail);
    r.cores = cores;
    r.instances = instances;
    Some(r)
}

/// Report `r` of `pairs` on `tensor` placed where the first pair's first core made the copy
/// (a write, or a read: `write`) of the first element found.
fn placed(
    r: Option<Report>,
    reports: &[CoreReport],
    pairs: &Pairs,
    tensor: u64,
    write: bool,
) -> Option<Report> {
    let mut r = r?;
    let (core, _, found) = pairs.first()?;
    let element = found.first()?.0;
    r.at = reports
        .iter()
        .filter(|c| c.core == *core)
        .flat_map(|c| c.accesses.iter())
        .find(|a| {
            a.tensor == tensor
                && a.write == write
                && (a.first..a.first + a.count).contains(&element)
        })
        .and_then(|a| a.at.clone());
    Some(r)
}

/// Sorted stretches merged where they touch or overlap.
fn merged(sorted: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in sorted {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// The checks across cores: shared writes, reads of another core's writes, every output
/// element written by a core that called get_dst_tensor(). A finding between several pairs
/// of cores on one tensor is one report ([`pairwise`]).
pub fn across_cores(o: &Options, reports: &[CoreReport], output: (u64, u64)) -> Vec<Report> {
    let mut found = Vec::new();
    let mut tensors: Vec<u64> = reports
        .iter()
        .flat_map(|r| r.accesses.iter().map(|a| a.tensor))
        .collect();
    tensors.sort_unstable();
    tensors.dedup();
    let name = |t: u64| {
        if t == output.0 {
            "output".to_string()
        } else {
            format!("tensor at HBM {t:#x}")
        }
    };
    for &t in &tensors {
        let (mut shared, mut cross): (Pairs, Pairs) = (Vec::new(), Vec::new());
        for a in reports {
            for b in reports.iter().filter(|b| b.core > a.core) {
                let both = overlaps(&ranges(a, t, true), &ranges(b, t, true));
                if !both.is_empty() {
                    shared.push((a.core, b.core, both));
                }
            }
            for b in reports.iter().filter(|b| b.core != a.core) {
                let both = overlaps(&ranges(a, t, false), &ranges(b, t, true));
                if !both.is_empty() {
                    cross.push((a.core, b.core, both));
                }
            }
        }
        let both_wrote = (Kind::SharedWrite, "both wrote");
        let r = pairwise(o, both_wrote, &name(t), &shared, |a, b, r| {
            format!("cores {a} and {b} both wrote elements {r}")
        });
        found.extend(placed(r, reports, &shared, t, true));
        let read_other = (
            Kind::CrossRead,
            "(reader-writer) read what the other wrote:",
        );
        let r = pairwise(o, read_other, &name(t), &cross, |a, b, r| {
            format!("core {a} read elements {r}, which core {b} wrote")
        });
        found.extend(placed(r, reports, &cross, t, false));
    }
    if o.cores > 1 {
        let mut written: Vec<(u64, u64)> = reports
            .iter()
            .flat_map(|r| ranges(r, output.0, true))
            .collect();
        written.sort_unstable();
        // Named where the first core that asked for the output asked for it.
        let at = reports.iter().find_map(|r| r.dst_at.clone());
        for (s, e) in gaps(&written, output.1) {
            let d = format!(
                "no core wrote output elements {s}..{e} of {}; the output is what get_dst_tensor() gave",
                output.1
            );
            let r = cross_core(&o.op, Kind::Unwritten, "output", format!("{s}..{e}"), d);
            found.push(Report {
                at: at.clone(),
                ..r
            });
        }
    }
    found
}

/// The stretches of elements `0..n` that no range of `written` (sorted by start, maybe
/// overlapping) covers.
pub fn gaps(written: &[(u64, u64)], n: u64) -> Vec<(u64, u64)> {
    let mut found = Vec::new();
    let mut next = 0;
    for &(s, e) in written.iter().chain([&(n, n)]) {
        if s > next {
            found.push((next, s));
        }
        next = next.max(e);
    }
    found
}

/// The elements of `0..n` the sorted ranges `written` cover (overlaps counted once).
pub fn covered(written: &[(u64, u64)], n: u64) -> u64 {
    n - gaps(written, n).iter().map(|(s, e)| e - s).sum::<u64>()
}

/// The result a core leaves: `get_dst_tensor()` (nothing to copy) or the tensor it
/// returned, checked against the shape function's. Reports what is wrong.
pub fn take_result(
    rt: &mut Runtime,
    o: &Options,
    r: &CoreReport,
    output: u32,
    found: &mut Vec<Report>,
) {
    let (dtype, sizes, addr) = {
        let e = rt.entry(output);
        (
            e.meta.dtype,
            e.meta.sizes[..e.meta.ndim as usize].to_vec(),
            e.meta.hbm_addr,
        )
    };
    let mut report = |kind: Kind, detail: String| {
        found.push(Report {
            core: Some(r.core),
            ..cross_core(&o.op, kind, "output", String::new(), detail)
        })
    };
    if r.dst_called {
        return;
    }
    if o.cores > 1 {
        report(
            Kind::NoDstTensor,
            "the kernel returned without calling get_dst_tensor()".into(),
        );
        return;
    }
    let Some(ret) = &r.returned else { return };
    if ret.dtype != dtype || ret.sizes != sizes {
        let name = |c: i32| DType::from_code(c).map_or("?", DType::name);
        let d = format!(
            "returned {:?} {} where the shape function gave {sizes:?} {}",
            ret.sizes,
            name(ret.dtype),
            name(dtype)
        );
        report(Kind::ReturnMismatch, d);
        return;
    }
    if ret.hbm_addr != addr {
        let m = rt.machine.as_ref().expect("the model runs");
        m.copy(ret.hbm_addr, addr, ret.bytes)
            .expect("the returned tensor and the output are in HBM");
    }
}

/// The bits of the NaN an invalid operation gives on x86 (`inf - inf`, `0 * inf`), where the
/// Q7 gives the same NaN with its sign clear, for each floating-point element type: (the
/// element's bytes, x86's, the Q7's). A half or bfloat16 gets it through a float's.
fn default_nan(dtype: DType) -> Option<(usize, u32, u32)> {
    match dtype {
        DType::Float => Some((4, 0xffc0_0000, 0x7fc0_0000)),
        DType::Half => Some((2, 0xfe00, 0x7e00)),
        DType::BFloat16 => Some((2, 0xffc0, 0x7fc0)),
        _ => None,
    }
}

/// On the host run, after a kernel raised the invalid-operation flag
/// ([`crate::base::fpflags`]): output elements holding x86's default NaN, which the device
/// would hold with its sign clear wherever an invalid operation made it (x86 has no
/// default-NaN mode to match; docs/customop-api.md, "Device parity"). The output is read
/// a megabyte at a time.
pub fn x86_default_nan(rt: &mut Runtime, op: &str, output: u32) -> Option<Report> {
    let (dtype, addr, bytes) = {
        let e = rt.entry(output);
        (e.dtype, e.meta.hbm_addr, e.bytes)
    };
    let (size, x86, q7) = default_nan(dtype)?;
    let m = rt.machine.as_ref()?;
    let element = |e: &[u8]| match *e {
        [a, b] => u32::from(u16::from_le_bytes([a, b])),
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    };
    let (mut first, mut count, mut at) = (None, 0u64, 0u64);
    let mut chunk = vec![0u8; 1 << 20];
    while at < bytes {
        let n = chunk
            .len()
            .min(usize::try_from(bytes - at).unwrap_or(usize::MAX));
        m.read(addr + at, &mut chunk[..n]).ok()?;
        for (k, e) in chunk[..n].chunks_exact(size).enumerate() {
            if element(e) == x86 {
                first.get_or_insert(at / size as u64 + k as u64);
                count += 1;
            }
        }
        at += n as u64;
    }
    let first = first?;
    let d = format!(
        "{count} element(s) from here hold {x86:#x}: the NaN an \
         invalid operation (inf - inf, 0 * inf, sqrt(-1)) gives on x86; the Q7 gives {q7:#x} \
         for it (where the NaN came from an input or a constant, the device has these bits too)"
    );
    Some(cross_core(
        op,
        Kind::X86DefaultNan,
        "output",
        first.to_string(),
        d,
    ))
}
