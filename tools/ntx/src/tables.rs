//! `ntx explain`, `ntx translate`, `ntx build`: window tables for people and host programs.

use std::fmt::Write as _;

use neuron_translate::layout::offsets::CTX_SIZE;
use neuron_translate::tables::{
    describe, Extent, RecordShape, Severity, SlotUse, TableBuilder, TableDescription, Window,
};
use neuron_translate::InitInputs;
use neuron_translate::{RegisterLog, TranslationCtx};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{Error, ErrorKind};

/// Reads a table image: exactly 168 bytes.
pub fn parse_table(data: &[u8], source: &str) -> Result<TranslationCtx, Error> {
    let bytes: &[u8; CTX_SIZE] = data.try_into().map_err(|_| {
        Error::new(
            ErrorKind::MalformedTable,
            source,
            format!(
                "a window table is exactly {CTX_SIZE} bytes; this file has {}",
                data.len()
            ),
        )
    })?;
    Ok(TranslationCtx::from_bytes(bytes))
}

fn size_text(size: u128) -> String {
    const UNITS: [(u128, &str); 4] = [
        (1 << 40, "TiB"),
        (1 << 30, "GiB"),
        (1 << 20, "MiB"),
        (1 << 10, "KiB"),
    ];
    for (u, name) in UNITS {
        if size >= u && size.is_multiple_of(u) {
            return format!("{} {name}", size / u);
        }
    }
    format!("{size} bytes")
}

/// `ntx explain`, as text.
pub fn explain_text(d: &TableDescription) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Window table: 5 windows, searched in order 0 to 4; the first whose range holds an address translates it."
    );
    let _ = writeln!(
        s,
        "Slots 0-2 are reusable: an address no window holds takes the next one round-robin (next: slot {}, cursor {}).",
        d.victim, d.next_alloc
    );
    let _ = writeln!(s, "Slots 3-4 are pinned: never replaced.\n");
    for r in &d.records {
        let _ = write!(s, "slot {}  {:<8}  ", r.slot, r.use_.to_string());
        match r.shape {
            RecordShape::Window {
                soc_start,
                size,
                local_start,
            } => {
                let soc_end = u128::from(soc_start) + size - 1;
                let local_end = u128::from(local_start) + size - 1;
                let _ = write!(
                    s,
                    "SoC {soc_start:#018x}..={soc_end:#018x} ({}) -> local {local_start:#010x}..={local_end:#010x}",
                    size_text(size)
                );
            }
            RecordShape::Empty => {
                let _ = write!(
                    s,
                    "empty: matches no address (tag {:#x}, mask {:#x})",
                    r.record.ptr, r.record.mask
                );
            }
            RecordShape::Scattered => {
                let _ = write!(
                    s,
                    "scattered: matches addresses a with (a & {:#018x}) == {:#018x}, local base {:#010x}",
                    r.record.mask, r.record.ptr, r.record.window
                );
            }
        }
        let _ = write!(s, "  register {:#x}", r.record.reg_location);
        if let Some(reg) = r.register {
            let _ = write!(s, " ({}_LO)", reg.name);
        }
        if let Some(a) = r.original {
            let _ = write!(
                s,
                "  [the original's {} window, {}]",
                a.name,
                a.provenance.label()
            );
        }
        s.push('\n');
    }
    if d.problems.is_empty() {
        let _ = writeln!(s, "\nNo problems found.");
    } else {
        let _ = writeln!(s, "\nProblems:");
        for p in &d.problems {
            let sev = match p.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
            };
            let _ = writeln!(s, "  {sev}: {}", p.message);
        }
    }
    s
}

/// `ntx explain --format json`.
pub fn explain_json(d: &TableDescription) -> Value {
    let records: Vec<Value> = d
        .records
        .iter()
        .map(|r| {
            let mut v = json!({
                "slot": r.slot,
                "use": r.use_.to_string(),
                "tag": format!("{:#x}", r.record.ptr),
                "mask": format!("{:#x}", r.record.mask),
                "window": format!("{:#x}", r.record.window),
                "reg_location": format!("{:#x}", r.record.reg_location),
                "register": r.register.map(|reg| reg.name),
                "original": r.original.map(|a| a.name),
                "original_provenance": r.original.map(|a| a.provenance.label()),
                "original_source": r.original.map(|a| a.source),
            });
            v["shape"] = json!(match r.shape {
                RecordShape::Window { .. } => "window",
                RecordShape::Empty => "empty",
                RecordShape::Scattered => "scattered",
            });
            if let RecordShape::Window {
                soc_start,
                size,
                local_start,
            } = r.shape
            {
                v["soc_start"] = json!(format!("{soc_start:#x}"));
                v["size"] = json!(format!("{size:#x}"));
                v["local_start"] = json!(format!("{local_start:#x}"));
            }
            v
        })
        .collect();
    let problems: Vec<Value> = d
        .problems
        .iter()
        .map(|p| {
            json!({
                "severity": match p.severity { Severity::Error => "error", Severity::Warning => "warning" },
                "slot": p.slot,
                "kind": p.kind,
                "message": p.message,
            })
        })
        .collect();
    json!({ "version": 1, "next_alloc": d.next_alloc, "victim": d.victim, "records": records, "problems": problems })
}

/// `ntx explain` on bytes.
pub fn explain(data: &[u8], source: &str, json_out: bool) -> Result<String, Error> {
    let d = describe(&parse_table(data, source)?);
    Ok(if json_out {
        serde_json::to_string_pretty(&explain_json(&d)).unwrap_or_default() + "\n"
    } else {
        explain_text(&d)
    })
}

/// An address as written on a command line or in a spec: decimal or 0x-hex, `_` allowed.
pub fn parse_u64(text: &str) -> Option<u64> {
    let t = text.trim().replace('_', "");
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => t.parse().ok(),
    }
}

/// `ntx translate`: the addresses in order, each seeing the table as the ones before left
/// it (a refill changes the table, as on the device).
pub fn translate(table: &mut TranslationCtx, addrs: &[u64]) -> String {
    let mut s =
        String::from("Addresses in order; a refill changes the table for the ones after it.\n");
    for &a in addrs {
        if let Some(m) = table.lookup(a) {
            let _ = writeln!(
                s,
                "{a:#018x}: slot {}, local {:#010x} (the window maps SoC {:#018x}..={:#018x})",
                m.slot,
                table.records[m.slot].local(a),
                m.start,
                m.end
            );
            continue;
        }
        match table.plan_refill(a) {
            Ok(plan) => {
                let cursor = table.next_alloc;
                let mut regs = RegisterLog::default();
                table.apply_refill(&plan, &mut regs);
                let reg = plan.register.get() as u64;
                let name = |suffix: &str| {
                    neuron_translate::regs::pair_at(reg)
                        .map(|p| format!(" ({}_{suffix})", p.name))
                        .unwrap_or_default()
                };
                let _ = writeln!(
                    s,
                    "{a:#018x}: no window holds it; a refill takes slot {} (cursor {cursor}), tag {:#018x}, local {:#010x};\n    \
                     writes {:#010x} to register {:#x}{}, then {:#010x} to {reg:#x}{}; cursor becomes {}",
                    plan.slot,
                    plan.tag,
                    plan.local,
                    (plan.tag >> 32) as u32,
                    reg + 4,
                    name("HI"),
                    plan.tag as u32,
                    name("LO"),
                    plan.next_alloc
                );
            }
            Err(e) => {
                let _ = writeln!(
                    s,
                    "{a:#018x}: no window holds it, and the refill would trap: {e}"
                );
            }
        }
    }
    s
}

/// A table spec (`ntx build`), TOML: either `[[window]]`s, or `[original]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// The refill cursor.
    #[serde(default)]
    pub next_alloc: u8,
    /// The windows.
    #[serde(default, rename = "window")]
    pub windows: Vec<SpecWindow>,
    /// The original's initial table, for these inputs.
    pub original: Option<SpecOriginal>,
}

/// `[original]`: the table `_init_translate_ctx` builds.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecOriginal {
    /// `ENGINE_BASE_ADDR`.
    pub engine_base: Num,
    /// `extended_isa::sdk::hbm_scratch`.
    pub hbm_scratch: Num,
}

/// One `[[window]]`. Numbers may be TOML integers or strings (for values past i64).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecWindow {
    /// 0..5.
    pub slot: usize,
    /// `"reusable"` or `"pinned"`.
    pub kind: String,
    /// SoC base; absent for an empty window (no SoC range until a refill).
    pub soc_base: Option<Num>,
    /// Size in bytes (or give `mask`).
    pub size: Option<Num>,
    /// Mask (or give `size`).
    pub mask: Option<Num>,
    /// Local base.
    pub local_base: Num,
    /// Register location.
    pub reg_location: Num,
}

/// A number in a spec: an integer or a string (`"0xffff_ffff_ff00_0000"`).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum Num {
    /// A TOML integer.
    Int(i64),
    /// A string, decimal or 0x-hex.
    Text(String),
}

/// What is wrong with one field of a spec (`BadSpec` joins them).
#[derive(Debug, thiserror::Error)]
enum SpecProblem {
    #[error("{what} = {value} is negative")]
    Negative { what: String, value: i64 },
    #[error("{what} = {text:?} is not a number")]
    NotANumber { what: String, text: String },
    #[error("window {slot}: kind {kind:?} is neither \"reusable\" nor \"pinned\"")]
    Kind { slot: usize, kind: String },
    #[error("window {slot}: give exactly one of size and mask")]
    Extent { slot: usize },
    #[error("window {slot}: local_base does not fit 32 bits")]
    LocalBase { slot: usize },
}

impl Num {
    /// The number; `what` names it in the error (`window 0: size`).
    fn value(&self, what: &str) -> Result<u64, SpecProblem> {
        let what = what.to_string();
        match self {
            Num::Int(i) if *i >= 0 => Ok(*i as u64),
            Num::Int(i) => Err(SpecProblem::Negative { what, value: *i }),
            Num::Text(t) => parse_u64(t).ok_or_else(|| SpecProblem::NotANumber {
                what,
                text: t.clone(),
            }),
        }
    }
}

/// `ntx build`: spec text to the 168-byte image, or every reason it cannot be built.
pub fn build(text: &str, source: &str) -> Result<[u8; CTX_SIZE], Error> {
    let bad = |m: String| Error::new(ErrorKind::BadSpec, source, m);
    let spec: Spec =
        toml::from_str(text).map_err(|e| bad(format!("not a valid table spec: {e}")))?;
    let mut b = match &spec.original {
        Some(_) if !spec.windows.is_empty() => {
            return Err(bad("give either [original] or [[window]]s, not both".into()))
        }
        Some(o) => TableBuilder::original(&o.inputs().map_err(|e| bad(e.to_string()))?),
        None => TableBuilder::new(),
    };
    b = b.next_alloc(spec.next_alloc);
    let mut errors = Vec::new();
    for w in &spec.windows {
        match w.window() {
            Ok(win) => b = b.window(win),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if !errors.is_empty() {
        return Err(bad(errors.join("; ")));
    }
    b.build_image()
        .map_err(|e| bad(format!("the table cannot be built:\n{e}")))
}

impl SpecOriginal {
    /// What `_init_translate_ctx` would read.
    fn inputs(&self) -> Result<InitInputs, SpecProblem> {
        Ok(InitInputs {
            engine_base: self.engine_base.value("[original] engine_base")?,
            hbm_scratch: self.hbm_scratch.value("[original] hbm_scratch")?,
        })
    }
}

impl SpecWindow {
    /// The window this entry describes, or the first thing wrong with it.
    fn window(&self) -> Result<Window, SpecProblem> {
        let slot = self.slot;
        let field = |what: &str| format!("window {slot}: {what}");
        let kind = match self.kind.as_str() {
            "reusable" => SlotUse::Reusable,
            "pinned" => SlotUse::Pinned,
            other => {
                return Err(SpecProblem::Kind {
                    slot,
                    kind: other.to_string(),
                })
            }
        };
        let extent = match (&self.size, &self.mask) {
            (Some(s), None) => Extent::Size(s.value(&field("size"))?),
            (None, Some(m)) => Extent::Mask(m.value(&field("mask"))?),
            _ => return Err(SpecProblem::Extent { slot }),
        };
        let soc_base = match &self.soc_base {
            Some(n) => Some(n.value(&field("soc_base"))?),
            None => None,
        };
        let local_base = u32::try_from(self.local_base.value(&field("local_base"))?)
            .map_err(|_| SpecProblem::LocalBase { slot })?;
        Ok(Window {
            slot,
            kind,
            soc_base,
            extent,
            local_base,
            reg_location: self.reg_location.value(&field("reg_location"))?,
        })
    }
}
