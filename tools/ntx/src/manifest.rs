//! The reference manifest: the original `translation.o`'s ABI as the seed page records it
//! (`abi-tests/reference/translation.toml`), every entry with its seed section and tag.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::error::{Error, ErrorKind};
use crate::model::{reference_key, AbiModel, DefinedSymbol, Mechanism, Reference, OBJECT_EVIDENCE};

/// The manifest file, as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The object as a whole.
    pub object: ObjectEntry,
    /// Defined global symbols.
    #[serde(default, rename = "symbol")]
    pub symbols: Vec<SymbolEntry>,
    /// Undefined symbols.
    #[serde(default, rename = "import")]
    pub imports: Vec<ImportEntry>,
    /// Function → symbol references.
    #[serde(default, rename = "reference")]
    pub references: Vec<ReferenceEntry>,
}

/// `[object]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectEntry {
    /// Member name in the vendor archive.
    pub name: String,
    /// The vendor archive.
    pub archive: String,
    /// `ELF32`.
    pub class: String,
    /// `little`.
    pub endian: String,
    /// `Xtensa`.
    pub machine: String,
    /// Seed section.
    pub seed: String,
    /// Confidence tag.
    pub confidence: String,
}

/// `[[symbol]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SymbolEntry {
    /// ELF name.
    pub name: String,
    /// `GLOBAL` / `WEAK`.
    pub binding: String,
    /// `FUNC` / `OBJECT`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `DEFAULT`, ...
    pub visibility: String,
    /// `text`, `bss`, ...
    pub section: String,
    /// `st_size`, for data objects.
    pub size: Option<u64>,
    /// Offset in the section, for data objects whose layout is known.
    pub offset: Option<u64>,
    /// The alignment consumers may rely on (a minimum), for data objects whose layout is
    /// known.
    pub align: Option<u64>,
    /// Seed section.
    pub seed: String,
    /// Confidence tag.
    pub confidence: String,
}

/// `[[import]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportEntry {
    /// ELF name.
    pub name: String,
    /// Who defines it.
    pub defined_by: String,
    /// Seed section.
    pub seed: String,
    /// Confidence tag.
    pub confidence: String,
}

/// `[[reference]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceEntry {
    /// The referring function.
    pub from: String,
    /// The referenced symbol.
    pub to: String,
    /// Relocation types the seed quotes (empty: not recorded).
    #[serde(default)]
    pub relocations: Vec<String>,
    /// `.text` offsets the seed quotes.
    #[serde(default)]
    pub offsets: Vec<u64>,
    /// Seed section.
    pub seed: String,
    /// Confidence tag.
    pub confidence: String,
}

impl Manifest {
    /// Parses a manifest.
    pub fn parse(text: &str, source: &str) -> Result<Manifest, Error> {
        toml::from_str(text).map_err(|e| {
            Error::new(
                ErrorKind::MalformedManifest,
                source,
                format!("not a valid manifest: {e}"),
            )
        })
    }

    /// The model the manifest describes; an unknown binding, type or visibility is an
    /// error naming the symbol.
    pub fn to_model(&self, source: &str) -> Result<AbiModel, Error> {
        let mut defined = std::collections::BTreeMap::new();
        let o = &self.object;
        let mut evidence = BTreeMap::from([(
            OBJECT_EVIDENCE.to_string(),
            format!("{} of {}: {} ({})", o.name, o.archive, o.seed, o.confidence),
        )]);
        for s in &self.symbols {
            evidence.insert(s.name.clone(), format!("{} ({})", s.seed, s.confidence));
            let bad = |e: crate::model::UnknownSpelling| {
                Error::new(
                    ErrorKind::MalformedManifest,
                    source,
                    format!("symbol {}: {e}", s.name),
                )
            };
            let symbol = DefinedSymbol {
                binding: s.binding.parse().map_err(bad)?,
                kind: s.kind.parse().map_err(bad)?,
                visibility: s.visibility.parse().map_err(bad)?,
                section: s.section.parse().unwrap_or_else(|never| match never {}),
                size: s.size.unwrap_or(0),
                offset: s.offset,
                align: s.align,
            };
            defined.insert(s.name.clone(), symbol);
        }
        let mut undefined = BTreeSet::new();
        for i in &self.imports {
            undefined.insert(i.name.clone());
            evidence.insert(
                i.name.clone(),
                format!("defined by {}; {} ({})", i.defined_by, i.seed, i.confidence),
            );
        }
        let mut references: BTreeMap<(String, String), Reference> = BTreeMap::new();
        for r in &self.references {
            let at: Vec<String> = r.offsets.iter().map(|o| format!("{o:#x}")).collect();
            let place = if at.is_empty() {
                String::new()
            } else {
                format!(" at .text {}", at.join(", "))
            };
            evidence.insert(
                reference_key(&r.from, &r.to),
                format!("{}{place} ({})", r.seed, r.confidence),
            );
            let e = references
                .entry((r.from.clone(), r.to.clone()))
                .or_default();
            let alt = r.relocations.iter().any(|n| n.contains("_ALT"));
            let op = r.relocations.iter().any(|n| n.contains("_OP"));
            let word = r.relocations.iter().any(|n| n == "R_XTENSA_32");
            e.mechanisms.insert(match (alt, op, word) {
                _ if r.relocations.is_empty() => Mechanism::Unrecorded,
                (true, true, _) => Mechanism::Const16,
                (false, true, true) => Mechanism::L32rLiteral,
                _ => Mechanism::Direct,
            });
            e.relocations.extend(r.relocations.iter().cloned());
        }
        Ok(AbiModel {
            source: source.into(),
            class: self.object.class.clone(),
            endian: self.object.endian.clone(),
            machine: self.object.machine.clone(),
            flags: None,
            defined,
            undefined,
            references,
            notable_sections: None,
            xtensa_abi: None,
            evidence,
        })
    }
}
