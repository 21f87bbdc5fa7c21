//! Comparing two ABI models: every difference a linker or a running consumer could notice,
//! classed as a `break` (a consumer linked against the reference may fail to link or
//! misbehave), an `addition` (something new that breaks nobody), or a `note` (a difference
//! worth knowing that is neither).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use serde::Serialize;

pub use crate::finding::{Class, Finding, FindingKind};
use crate::model::{
    demangle, reference_key, AbiModel, DefinedSymbol, Mechanism, SymbolType, OBJECT_EVIDENCE,
};
use crate::suppress::{Rule, Suppressions};

/// The result of a diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Format version of the JSON output.
    pub version: u32,
    /// The reference's source.
    pub reference: String,
    /// The candidate's source.
    pub candidate: String,
    /// Where the reference's facts come from, when it records that (a manifest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_evidence: Option<String>,
    /// Counts by class, of the findings no suppression accepts.
    pub breaks: usize,
    /// Additions.
    pub additions: usize,
    /// Notes.
    pub notes: usize,
    /// Findings a suppression rule accepts (listed, not counted above).
    pub suppressed: usize,
    /// Every finding, breaks first.
    pub findings: Vec<Finding>,
    /// Suppression rules that matched no finding (stale rules are worth removing).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unused_suppressions: Vec<Rule>,
}

impl Report {
    /// True when nothing breaks (suppressed breaks aside).
    pub fn compatible(&self) -> bool {
        self.breaks == 0
    }

    /// The findings that fail a run with `--fail-on threshold`: those not suppressed whose
    /// class is `threshold` or more severe.
    pub fn failing(&self, threshold: Class) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(move |f| f.suppressed.is_none() && f.class <= threshold)
    }

    /// Whether a run with `--fail-on threshold` fails.
    pub fn fails(&self, threshold: Class) -> bool {
        self.failing(threshold).next().is_some()
    }

    /// Marks the findings `rules` accept as suppressed (the first matching rule's reason),
    /// recounts, and records the rules that matched nothing.
    pub fn suppress(&mut self, rules: &Suppressions) {
        let mut used = vec![false; rules.rules.len()];
        for f in &mut self.findings {
            if let Some((i, r)) = rules.find(f) {
                used[i] = true;
                f.suppressed = Some(r.reason.clone());
            }
        }
        self.unused_suppressions = rules
            .rules
            .iter()
            .zip(used)
            .filter(|(_, u)| !u)
            .map(|(r, _)| r.clone())
            .collect();
        self.recount();
    }

    fn recount(&mut self) {
        let count = |c| {
            self.findings
                .iter()
                .filter(|f| f.class == c && f.suppressed.is_none())
                .count()
        };
        (self.breaks, self.additions, self.notes) = (
            count(Class::Break),
            count(Class::Addition),
            count(Class::Note),
        );
        self.suppressed = self
            .findings
            .iter()
            .filter(|f| f.suppressed.is_some())
            .count();
    }

    /// The one-line summary the text output starts with.
    pub fn summary(&self) -> String {
        let suppressed = if self.suppressed > 0 {
            format!(", {} suppressed", self.suppressed)
        } else {
            String::new()
        };
        format!(
            "{}: {} break(s), {} addition(s), {} note(s){suppressed}: {} against {}",
            if self.compatible() {
                "COMPATIBLE"
            } else {
                "INCOMPATIBLE"
            },
            self.breaks,
            self.additions,
            self.notes,
            self.candidate,
            self.reference
        )
    }

    /// Text for a person: the summary, then one block per finding, then the suppression
    /// rules that matched nothing.
    pub fn to_text(&self) -> String {
        let mut s = self.summary();
        s.push('\n');
        if let Some(e) = &self.reference_evidence {
            let _ = writeln!(s, "  reference: {e}");
        }
        for f in &self.findings {
            let class = match (f.class, f.suppressed.is_some()) {
                (Class::Break, false) => "BREAK".to_string(),
                (c, false) => c.to_string(),
                (c, true) => format!("suppressed {c}"),
            };
            let _ = write!(s, "  [{class}] {}: {}", f.kind, f.message);
            if let Some(d) = &f.demangled {
                let _ = write!(s, " ({d})");
            }
            s.push('\n');
            let suppressed = f.suppressed.as_deref().map(|v| ("suppressed", v));
            for (label, v) in f.facts().chain(suppressed) {
                let _ = writeln!(s, "      {label}: {v}");
            }
        }
        for r in &self.unused_suppressions {
            let _ = writeln!(
                s,
                "  warning: suppression {} {:?} matched no finding ({})",
                r.kind, r.symbol, r.reason
            );
        }
        s
    }

    /// Adds findings made elsewhere (e.g. [`unresolved_consumers`]), keeping the order and
    /// the counts.
    pub fn extend(&mut self, more: Vec<Finding>) {
        self.findings.extend(more);
        self.findings
            .sort_by(|a, b| (a.class, a.kind, &a.symbol).cmp(&(b.class, b.kind, &b.symbol)));
        self.recount();
    }
}

/// Findings as they are made.
#[derive(Default)]
struct Findings(Vec<Finding>);

impl Findings {
    fn add(
        &mut self,
        class: Class,
        kind: FindingKind,
        symbol: Option<&str>,
        (reference, candidate): (Option<String>, Option<String>),
        message: String,
    ) {
        self.0.push(Finding {
            class,
            kind,
            symbol: symbol.map(String::from),
            demangled: symbol.and_then(demangle),
            reference,
            candidate,
            evidence: None,
            message,
            suppressed: None,
        });
    }
}

fn mechanisms(set: &BTreeSet<Mechanism>) -> String {
    set.iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn abi_name(v: &str) -> String {
    match v {
        "0" => "ABI=0 (windowed)".into(),
        "1" => "ABI=1 (call0)".into(),
        o => format!("ABI={o}"),
    }
}

/// Whether two models can be compared at all: the same ELF class, byte order and machine.
/// A mismatch is not a finding but a wrong input (`ntx` exits 2): an error of kind
/// [`crate::error::ErrorKind::NotComparable`] on the candidate's file.
pub fn comparable(reference: &AbiModel, candidate: &AbiModel) -> Result<(), crate::error::Error> {
    for (what, r, c) in [
        ("ELF class", &reference.class, &candidate.class),
        ("byte order", &reference.endian, &candidate.endian),
        ("machine", &reference.machine, &candidate.machine),
    ] {
        if r != c {
            return Err(crate::error::Error::new(
                crate::error::ErrorKind::NotComparable,
                &candidate.source,
                format!(
                    "{} is {what} {c} but {} is {what} {r}: not comparable",
                    candidate.source, reference.source
                ),
            ));
        }
    }
    Ok(())
}

/// Compares `candidate` against `reference` (which must be [`comparable`]).
pub fn diff(reference: &AbiModel, candidate: &AbiModel) -> Report {
    let mut f = Findings::default();
    header(&mut f, reference, candidate);
    symbols(&mut f, reference, candidate);
    imports(&mut f, reference, candidate);
    references(&mut f, reference, candidate);
    sections(&mut f, reference, candidate);
    // Each finding about a symbol or import the reference records evidence for carries it
    // (the reference findings got theirs, by `from -> to`, as they were made).
    for finding in f.0.iter_mut().filter(|x| x.evidence.is_none()) {
        finding.evidence = finding
            .symbol
            .as_ref()
            .and_then(|k| reference.evidence.get(k).cloned());
    }
    let mut report = Report {
        version: 1,
        reference: reference.source.clone(),
        candidate: candidate.source.clone(),
        reference_evidence: reference.evidence.get(OBJECT_EVIDENCE).cloned(),
        breaks: 0,
        additions: 0,
        notes: 0,
        suppressed: 0,
        findings: Vec::new(),
        unused_suppressions: Vec::new(),
    };
    report.extend(f.0);
    report
}

/// The calling convention and the ELF flags.
fn header(f: &mut Findings, reference: &AbiModel, candidate: &AbiModel) {
    if let (Some(r), Some(c)) = (&reference.xtensa_abi, &candidate.xtensa_abi) {
        if r != c {
            f.add(
                Class::Break,
                FindingKind::XtensaAbi,
                None,
                (Some(abi_name(r)), Some(abi_name(c))),
                "the objects use different Xtensa calling conventions (.xtensa.info ABI)".into(),
            );
        }
    }
    if let (Some(r), Some(c)) = (reference.flags, candidate.flags) {
        if r != c {
            f.add(
                Class::Note,
                FindingKind::EFlags,
                None,
                (Some(format!("{r:#x}")), Some(format!("{c:#x}"))),
                "e_flags differ".into(),
            );
        }
    }
}

/// The defined symbols: missing, changed, added.
fn symbols(f: &mut Findings, reference: &AbiModel, candidate: &AbiModel) {
    for (name, r) in &reference.defined {
        let Some(c) = candidate.defined.get(name) else {
            f.add(
                Class::Break,
                FindingKind::SymbolMissing,
                Some(name),
                (
                    Some(format!("{} {} in {}", r.binding, r.kind, r.section)),
                    None,
                ),
                format!("{name} is not defined by the candidate"),
            );
            continue;
        };
        for (kind, what, rv, cv) in [
            (
                FindingKind::SymbolBinding,
                "binding",
                r.binding.to_string(),
                c.binding.to_string(),
            ),
            (
                FindingKind::SymbolType,
                "type",
                r.kind.to_string(),
                c.kind.to_string(),
            ),
            (
                FindingKind::SymbolVisibility,
                "visibility",
                r.visibility.to_string(),
                c.visibility.to_string(),
            ),
            (
                FindingKind::SymbolSection,
                "section",
                r.section.to_string(),
                c.section.to_string(),
            ),
        ] {
            if rv != cv {
                let message = format!("{what} of {name} differs");
                f.add(
                    Class::Break,
                    kind,
                    Some(name),
                    (Some(rv), Some(cv)),
                    message,
                );
            }
        }
        if r.kind == SymbolType::Object && c.kind == SymbolType::Object {
            data_layout(f, name, r, c);
        }
    }
    for (name, c) in &candidate.defined {
        if reference.defined.contains_key(name) {
            continue;
        }
        let (class, message) = if reference.undefined.contains(name) {
            (Class::Break, format!("{name} is an import of the reference but defined by the candidate (duplicate definition at link time)"))
        } else {
            (Class::Addition, format!("{name} is a new global symbol"))
        };
        let what = format!("{} {} in {}", c.binding, c.kind, c.section);
        f.add(
            class,
            FindingKind::SymbolAdded,
            Some(name),
            (None, Some(what)),
            message,
        );
    }
}

/// A data object's size, alignment and place in its section. A smaller size or alignment
/// breaks consumers (they read past it, or use wider accesses than it allows); a larger
/// alignment or another offset does not (consumers reach the object by name), so those are
/// notes.
fn data_layout(f: &mut Findings, name: &str, r: &DefinedSymbol, c: &DefinedSymbol) {
    if r.size != c.size {
        f.add(
            Class::Break,
            FindingKind::SymbolSize,
            Some(name),
            (Some(r.size.to_string()), Some(c.size.to_string())),
            format!("size of data object {name} differs"),
        );
    }
    if let (Some(ra), Some(ca)) = (r.align, c.align) {
        if ca < ra {
            f.add(
                Class::Break,
                FindingKind::SymbolAlignment,
                Some(name),
                (Some(ra.to_string()), Some(ca.to_string())),
                format!("{name} is less aligned than in the reference"),
            );
        }
    }
    if let (Some(ro), Some(co)) = (r.offset, c.offset) {
        if ro != co {
            f.add(
                Class::Note,
                FindingKind::SymbolOffset,
                Some(name),
                (
                    Some(format!("{} + {ro:#x}", r.section)),
                    Some(format!("{} + {co:#x}", c.section)),
                ),
                format!("{name} sits elsewhere in its section (consumers reach it by name)"),
            );
        }
    }
}

/// The undefined symbols: new ones break a link that worked, dropped ones are notes.
fn imports(f: &mut Findings, reference: &AbiModel, candidate: &AbiModel) {
    for name in &candidate.undefined {
        if !reference.undefined.contains(name) {
            f.add(Class::Break, FindingKind::ImportAdded, Some(name), (None, Some("undefined".into())),
                format!("the candidate needs {name}, which the reference does not: a link that worked may fail"));
        }
    }
    for name in &reference.undefined {
        if !candidate.undefined.contains(name) && !candidate.defined.contains_key(name) {
            f.add(
                Class::Note,
                FindingKind::ImportUnused,
                Some(name),
                (Some("undefined".into()), None),
                format!("the candidate no longer needs {name}"),
            );
        }
    }
}

/// The function-to-symbol references.
fn references(f: &mut Findings, reference: &AbiModel, candidate: &AbiModel) {
    for ((from, to), r) in &reference.references {
        let evidence = reference.evidence.get(&reference_key(from, to)).cloned();
        let before = f.0.len();
        let dropped_import = reference.undefined.contains(to)
            && !candidate.undefined.contains(to)
            && !candidate.defined.contains_key(to);
        match candidate.references.get(&(from.clone(), to.clone())) {
            // Reported once, as import-unused: no consumer can notice the reference is gone.
            None if dropped_import => {}
            None => f.add(
                Class::Break,
                FindingKind::ReferenceMissing,
                Some(from),
                (Some(reference_key(from, to)), None),
                format!("{from} no longer references {to}"),
            ),
            Some(c) => {
                let recorded = !r.mechanisms.contains(&Mechanism::Unrecorded);
                if recorded && r.mechanisms != c.mechanisms {
                    f.add(
                        Class::Note,
                        FindingKind::ReferenceMechanism,
                        Some(from),
                        (
                            Some(mechanisms(&r.mechanisms)),
                            Some(mechanisms(&c.mechanisms)),
                        ),
                        format!("{from} -> {to}: same reference, different relocation mechanism"),
                    );
                }
            }
        }
        for made in &mut f.0[before..] {
            made.evidence = evidence.clone();
        }
    }
    for (from, to) in candidate.references.keys() {
        if !reference
            .references
            .contains_key(&(from.clone(), to.clone()))
        {
            // A new reference to an import the reference lacks is already a break above.
            f.add(
                Class::Note,
                FindingKind::ReferenceAdded,
                Some(from),
                (None, Some(reference_key(from, to))),
                format!(
                    "{from} references {to}, which the reference's {from} does not (as recorded)"
                ),
            );
        }
    }
}

/// The sections of note.
fn sections(f: &mut Findings, reference: &AbiModel, candidate: &AbiModel) {
    match (&reference.notable_sections, &candidate.notable_sections) {
        (Some(r), Some(c)) => {
            for s in r.difference(c) {
                f.add(
                    Class::Note,
                    FindingKind::SectionMissing,
                    None,
                    (Some(s.clone()), None),
                    format!("no {s} section in the candidate"),
                );
            }
            for s in c.difference(r) {
                f.add(
                    Class::Note,
                    FindingKind::SectionAdded,
                    None,
                    (None, Some(s.clone())),
                    format!("the candidate has {s}"),
                );
            }
        }
        (None, Some(c)) => {
            for s in c {
                f.add(
                    Class::Note,
                    FindingKind::SectionPresent,
                    None,
                    (None, Some(s.clone())),
                    format!("the candidate has {s} (the reference records no sections)"),
                );
            }
        }
        _ => {}
    }
}

/// What the other members of an archive need from the member being replaced and the
/// candidate does not define: one break per (member, symbol), each a link that would fail.
/// `members` are the other members' names and models; `reference` is the member replaced.
pub fn unresolved_consumers(
    members: &[(String, AbiModel)],
    reference: &AbiModel,
    candidate: &AbiModel,
) -> Vec<Finding> {
    let mut f = Findings::default();
    for (member, m) in members {
        for name in &m.undefined {
            if reference.defined.contains_key(name) && !candidate.defined.contains_key(name) {
                f.add(
                    Class::Break,
                    FindingKind::ConsumerUnresolved,
                    Some(name),
                    (Some(format!("defined, needed by {member}")), None),
                    format!("{member} needs {name}, which the candidate does not define: linking {member} would fail"),
                );
            }
        }
    }
    f.0
}

#[cfg(test)]
mod tests {
    use super::FindingKind::{self, *};

    #[test]
    fn finding_kinds_are_declared_in_the_order_of_their_spellings() {
        let mut by_ord: Vec<FindingKind> = FindingKind::ALL.to_vec();
        by_ord.sort();
        let mut by_text = FindingKind::ALL.to_vec();
        by_text.sort_by_key(|k| k.to_string());
        assert_eq!(by_ord, by_text);
        assert_eq!(by_ord, FindingKind::ALL);
        assert_eq!(EFlags.to_string(), "e_flags");
        assert_eq!(ConsumerUnresolved.to_string(), "consumer-unresolved");
    }

    /// The README's table of kinds lists every kind, and nothing else: each spelling in its
    /// first column parses back to a kind of `ALL`.
    #[test]
    fn the_readme_lists_exactly_the_kinds() {
        let readme = include_str!("../README.md");
        let table = readme
            .split("### Finding kinds")
            .nth(1)
            .expect("README has a Finding kinds section");
        let mut listed = Vec::new();
        for row in table
            .lines()
            .skip_while(|l| !l.starts_with("| kind"))
            .skip(2)
        {
            let Some(first) = row.strip_prefix("| ").and_then(|r| r.split(" |").next()) else {
                break;
            };
            for name in first.split(", ") {
                let name = name.trim_matches('`');
                let kind: FindingKind = serde_json::from_value(serde_json::json!(name))
                    .unwrap_or_else(|e| panic!("README kind {name}: {e}"));
                listed.push(kind);
            }
        }
        listed.sort();
        assert_eq!(listed, FindingKind::ALL);
    }
}
