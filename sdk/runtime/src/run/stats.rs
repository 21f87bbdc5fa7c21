//! `--stats`: per core, what the kernel cost (translations, hits and refills per window,
//! bytes through TCM, the pool's high-water mark, accessors) and every warning; as lines,
//! or as one JSON document (`--stats=json`, schema in docs/customop-host.md).

use serde::Serialize;

use crate::base::misuse::Report;
use crate::run::options::{Options, StatsFormat};
use crate::run::report::CoreReport;

/// The JSON document.
#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    op: &'a str,
    cores: u32,
    per_core: &'a [CoreReport],
    /// `--device`: the op's instructions over all cores and the output elements they wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<crate::run::report::DeviceReport>,
    reports: &'a [Report],
}

/// The op's figure on the emulated Q7: every core's counts summed, over the elements the
/// cores wrote together (each its own: two cores writing one element is an error).
fn op_device(cores: &[CoreReport]) -> Option<crate::run::report::DeviceReport> {
    let mut sum = cores.first()?.device?;
    for d in cores[1..].iter().map(|r| r.device) {
        let d = d?;
        sum.counts += d.counts;
        sum.elements += d.elements;
    }
    Some(sum)
}

/// ", N per element it wrote" (nothing for no elements).
fn per_element(d: &crate::run::report::DeviceReport, whose: &str) -> String {
    if d.elements == 0 {
        return String::new();
    }
    let per = d.counts.instructions as f64 / d.elements as f64;
    format!(", {per:.1} per element {whose} ({} elements)", d.elements)
}

/// Prints the stats to stdout, or gives the document back ([`StatsFormat::Return`]).
pub fn print(
    format: StatsFormat,
    o: &Options,
    cores: &[CoreReport],
    reports: &[Report],
) -> Option<serde_json::Value> {
    if format != StatsFormat::Text {
        let doc = Document {
            schema: "neuron-customop-host-stats/2",
            op: &o.op,
            cores: o.cores,
            per_core: cores,
            device: op_device(cores),
            reports,
        };
        if format == StatsFormat::Return {
            return Some(serde_json::to_value(&doc).expect("stats serialize"));
        }
        let text = serde_json::to_string_pretty(&doc).expect("stats serialize");
        println!("{text}");
        return None;
    }
    for r in cores {
        let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join("/");
        println!(
            "core {}: {} translations, hits {} and refills {} (windows 0/1/2/3/4)",
            r.core,
            r.translations,
            list(&r.hits),
            list(&r.refills)
        );
        let c = &r.counts;
        println!(
            "core {}: TCM {} bytes in, {} bytes out; pool high-water {} of {} bytes; {} standard accessors, {} fast and {} slow streams",
            r.core, c.tcm_in_bytes, c.tcm_out_bytes, r.pool_high_water, crate::base::codes::TCM_POOL_BYTES, c.standard_accessors, c.fast_streams, c.slow_streams
        );
        if let Some(d) = &r.device {
            let n = d.counts;
            let per = per_element(d, "it wrote");
            println!(
                "core {}: {} instructions on the emulated Q7{per}: {} in the translation functions, {} in the TCM and stream copies, which moved {} bytes by DMA ({} more in the device runtime, not counted)",
                r.core, n.instructions, n.translation, n.copies, c.tcm_in_bytes + c.tcm_out_bytes, n.runtime
            );
        }
    }
    if let Some(d) = op_device(cores).filter(|_| cores.len() > 1) {
        let per = per_element(&d, "of the output");
        println!(
            "op {}: {} instructions on the emulated Q7 over its {} cores{per}",
            o.op, d.counts.instructions, o.cores
        );
    }
    if cores.iter().any(|r| r.device.is_some()) {
        println!("{COUNTS_ARE}");
    }
    // The warnings are on stderr with the errors (`Output::print_reports`), once.
    None
}

/// What the emulated Q7's counts are, said under them (docs/q7-isa.md).
pub const COUNTS_ARE: &str =
    "(the counts are instructions retired on the Q7's scalar ISA as qemu's \
    de233_fpu core runs it, not cycles: FLIX bundling and the Vision SIMD are not modelled; a TCM \
    copy counts the core's part, its span walk and translates, and the data it moves as DMA bytes; \
    docs/q7-isa.md)";
