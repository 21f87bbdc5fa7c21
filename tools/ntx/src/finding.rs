//! What a diff finds: a finding's class (how much it matters), its kind (what it is
//! about, with a stable spelling) and the finding itself. The comparison ([`crate::diff`])
//! makes them; suppression files ([`crate::suppress`]) accept them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The class of a finding, most severe first (`--fail-on` takes the same spellings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Consumers of the reference may fail to link or misbehave.
    Break,
    /// New in the candidate; harmless to consumers of the reference.
    Addition,
    /// Neither, but worth knowing.
    Note,
}

/// The kind of a finding. The spellings (kebab-case, `e_flags`) are the JSON format's and
/// stable; [`FindingKind::meaning`] says what each means. Declared in the alphabetical order of
/// the spellings, which is the order findings of one class are listed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    ConsumerUnresolved,
    #[serde(rename = "e_flags")]
    EFlags,
    ImportAdded,
    ImportUnused,
    ReferenceAdded,
    ReferenceMechanism,
    ReferenceMissing,
    SectionAdded,
    SectionMissing,
    SectionPresent,
    SymbolAdded,
    SymbolAlignment,
    SymbolBinding,
    SymbolMissing,
    SymbolOffset,
    SymbolSection,
    SymbolSize,
    SymbolType,
    SymbolVisibility,
    XtensaAbi,
}

impl FindingKind {
    /// Every kind, in declaration order.
    pub const ALL: [FindingKind; 20] = [
        FindingKind::ConsumerUnresolved,
        FindingKind::EFlags,
        FindingKind::ImportAdded,
        FindingKind::ImportUnused,
        FindingKind::ReferenceAdded,
        FindingKind::ReferenceMechanism,
        FindingKind::ReferenceMissing,
        FindingKind::SectionAdded,
        FindingKind::SectionMissing,
        FindingKind::SectionPresent,
        FindingKind::SymbolAdded,
        FindingKind::SymbolAlignment,
        FindingKind::SymbolBinding,
        FindingKind::SymbolMissing,
        FindingKind::SymbolOffset,
        FindingKind::SymbolSection,
        FindingKind::SymbolSize,
        FindingKind::SymbolType,
        FindingKind::SymbolVisibility,
        FindingKind::XtensaAbi,
    ];

    /// What a finding of this kind means, in one sentence (the SARIF rules carry it;
    /// abi-tests/README.md explains each kind at length).
    pub fn meaning(self) -> &'static str {
        use FindingKind::*;
        match self {
            ConsumerUnresolved => {
                "Another archive member needs a symbol the candidate does not define."
            }
            EFlags => "The ELF header flags differ.",
            ImportAdded => "A new import.",
            ImportUnused => "An import no longer needed.",
            ReferenceAdded => "A new reference.",
            ReferenceMechanism => "The same reference, another relocation mechanism.",
            ReferenceMissing => "A reference no longer made.",
            SectionAdded => "A section of note is new.",
            SectionMissing => "A section of note is missing.",
            SectionPresent => "A section of note the reference does not record.",
            SymbolAdded => "A new global symbol.",
            SymbolAlignment => "A data object less aligned.",
            SymbolBinding => "Another binding.",
            SymbolMissing => "A symbol of the reference is not defined.",
            SymbolOffset => "A data object elsewhere in its section.",
            SymbolSection => "Another section kind.",
            SymbolSize => "A data object of another size.",
            SymbolType => "Another type.",
            SymbolVisibility => "Another visibility.",
            XtensaAbi => "`.xtensa.info` says another calling convention.",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        spelling(self, f)
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        spelling(self, f)
    }
}

/// The serde spelling is the one name of each class and kind.
fn spelling(v: &impl Serialize, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let v = serde_json::to_value(v).map_err(|_| fmt::Error)?;
    f.write_str(v.as_str().ok_or(fmt::Error)?)
}

/// One difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Break, addition or note.
    pub class: Class,
    /// What kind of difference.
    pub kind: FindingKind,
    /// The symbol concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Its demangled C++ name, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub demangled: Option<String>,
    /// What the reference has (absent when it has nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// What the candidate has (absent when it has nothing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    /// Where the reference's fact comes from, when the reference records it (a manifest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// A sentence for a person.
    pub message: String,
    /// The reason of the suppression rule that accepts it, when one does; a suppressed
    /// finding is listed but not counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suppressed: Option<String>,
}

impl Finding {
    /// What each side has and where the reference's fact comes from, those present, with
    /// their labels: the lines every rendering shows under a finding.
    pub fn facts(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("reference", &self.reference),
            ("candidate", &self.candidate),
            ("evidence", &self.evidence),
        ]
        .into_iter()
        .filter_map(|(label, v)| v.as_deref().map(|v| (label, v)))
    }
}
