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
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (s, e) in v {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> Option<(u64, u64)> {
    a.iter()
        .flat_map(|x| b.iter().map(move |y| (x.0.max(y.0), x.1.min(y.1))))
        .find(|(s, e)| s < e)
}

/// The checks across cores: shared writes, reads of another core's writes, every output
/// element written by a core that called get_dst_tensor().
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
        for a in reports {
            for b in reports.iter().filter(|b| b.core > a.core) {
                if let Some((s, e)) = overlap(&ranges(a, t, true), &ranges(b, t, true)) {
                    let d = format!(
                        "cores {} and {} both wrote elements {s}..{e}",
                        a.core, b.core
                    );
                    found.push(cross_core(
                        &o.op,
                        Kind::SharedWrite,
                        &name(t),
                        format!("{s}..{e}"),
                        d,
                    ));
                }
            }
            for b in reports.iter().filter(|b| b.core != a.core) {
                if let Some((s, e)) = overlap(&ranges(a, t, false), &ranges(b, t, true)) {
                    let d = format!(
                        "core {} read elements {s}..{e}, which core {} wrote",
                        a.core, b.core
                    );
                    found.push(cross_core(
                        &o.op,
                        Kind::CrossRead,
                        &name(t),
                        format!("{s}..{e}"),
                        d,
                    ));
                }
            }
        }
    }
    if o.cores > 1 {
        let mut written: Vec<(u64, u64)> = reports
            .iter()
            .flat_map(|r| ranges(r, output.0, true))
            .collect();
        written.sort_unstable();
        for (s, e) in gaps(&written, output.1) {
            let d = format!("no core wrote output elements {s}..{e} of {}", output.1);
            found.push(cross_core(
                &o.op,
                Kind::Unwritten,
                "output",
                format!("{s}..{e}"),
                d,
            ));
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
