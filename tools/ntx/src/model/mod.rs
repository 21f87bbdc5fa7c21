//! What an object file offers and needs, as a linker sees it: the ABI model `ntx abi-diff`
//! compares. Built from an ELF relocatable (with the `object` crate), from a member of an
//! `ar` archive, or from a reference manifest.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

mod read;
pub use read::from_elf;

use object::elf;

/// Serialises a value as its `Display` text (the spellings `readelf` uses).
fn as_text<T: fmt::Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

/// A spelling of an ELF field that none of its values has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {field} {given:?} (one of: {})", known.join(", "))]
pub struct UnknownSpelling {
    /// The field (`binding`, `type`, ...).
    pub field: &'static str,
    /// What was given.
    pub given: String,
    /// The spellings the field has.
    pub known: &'static [&'static str],
}

/// Declares a C-like enum over an ELF field, with its `readelf` spellings (Display,
/// FromStr, Serialize) and a catch-all for other values.
macro_rules! elf_enum {
    ($(#[$m:meta])* $name:ident ($raw:ty, $other:literal) { $($(#[$vm:meta])* $v:ident = $val:path, $text:literal;)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vm])* $v,)*
            /// Any other value of the field.
            Other($raw),
        }

        impl $name {
            /// The field's value, named.
            pub fn from_raw(v: $raw) -> Self {
                match v {
                    $($val => $name::$v,)*
                    o => $name::Other(o),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $($name::$v => f.write_str($text),)*
                    $name::Other(o) => write!(f, concat!($other, " {}"), o),
                }
            }
        }

        impl FromStr for $name {
            type Err = UnknownSpelling;
            fn from_str(s: &str) -> Result<Self, UnknownSpelling> {
                match s {
                    $($text => Ok($name::$v),)*
                    _ => Err(UnknownSpelling { field: $other, given: s.to_string(),
                        known: &[$($text),*] }),
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                as_text(self, s)
            }
        }
    };
}

elf_enum! {
    /// A symbol's binding (`STB_*`).
    Binding (u8, "binding") {
        /// `STB_LOCAL`.
        Local = elf::STB_LOCAL, "LOCAL";
        /// `STB_GLOBAL`.
        Global = elf::STB_GLOBAL, "GLOBAL";
        /// `STB_WEAK`.
        Weak = elf::STB_WEAK, "WEAK";
        /// `STB_GNU_UNIQUE`.
        Unique = elf::STB_GNU_UNIQUE, "UNIQUE";
    }
}

elf_enum! {
    /// A symbol's type (`STT_*`).
    SymbolType (u8, "type") {
        /// `STT_NOTYPE`.
        NoType = elf::STT_NOTYPE, "NOTYPE";
        /// `STT_OBJECT`.
        Object = elf::STT_OBJECT, "OBJECT";
        /// `STT_FUNC`.
        Func = elf::STT_FUNC, "FUNC";
        /// `STT_SECTION`.
        Section = elf::STT_SECTION, "SECTION";
        /// `STT_FILE`.
        File = elf::STT_FILE, "FILE";
        /// `STT_COMMON`.
        Common = elf::STT_COMMON, "COMMON";
        /// `STT_TLS`.
        Tls = elf::STT_TLS, "TLS";
        /// `STT_GNU_IFUNC`.
        Ifunc = elf::STT_GNU_IFUNC, "IFUNC";
    }
}

elf_enum! {
    /// A symbol's visibility (`STV_*`, the low two bits of `st_other`).
    Visibility (u8, "visibility") {
        /// `STV_DEFAULT`.
        Default = elf::STV_DEFAULT, "DEFAULT";
        /// `STV_INTERNAL`.
        Internal = elf::STV_INTERNAL, "INTERNAL";
        /// `STV_HIDDEN`.
        Hidden = elf::STV_HIDDEN, "HIDDEN";
        /// `STV_PROTECTED`.
        Protected = elf::STV_PROTECTED, "PROTECTED";
    }
}

/// What kind of section a symbol is defined in, by the section's name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum SectionKind {
    /// `.text`, `.text.*`.
    Text,
    /// `.literal`, `.literal.*` (Xtensa literal pools).
    Literal,
    /// `.bss`, `.sbss` and their `.*`.
    Bss,
    /// `.tbss`.
    Tbss,
    /// `.data`, `.sdata`.
    Data,
    /// `.tdata`.
    Tdata,
    /// `.rodata`.
    Rodata,
    /// A common symbol (no section yet).
    Common,
    /// An absolute symbol.
    Abs,
    /// A special section index `object` does not name.
    Unknown,
    /// Any other section, by its name.
    Named(String),
}

/// Section name prefixes and the kinds they mean.
const SECTION_KINDS: [(&str, SectionKind); 9] = [
    (".text", SectionKind::Text),
    (".literal", SectionKind::Literal),
    (".bss", SectionKind::Bss),
    (".sbss", SectionKind::Bss),
    (".tbss", SectionKind::Tbss),
    (".data", SectionKind::Data),
    (".sdata", SectionKind::Data),
    (".tdata", SectionKind::Tdata),
    (".rodata", SectionKind::Rodata),
];

impl SectionKind {
    /// The kind of a section, by its name: `.text` and `.text.foo` are both text.
    pub fn of_section(name: &str) -> SectionKind {
        for (prefix, kind) in &SECTION_KINDS {
            if name == *prefix
                || name
                    .strip_prefix(prefix)
                    .is_some_and(|r| r.starts_with('.'))
            {
                return kind.clone();
            }
        }
        SectionKind::Named(name.to_string())
    }
}

impl fmt::Display for SectionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SectionKind::Text => "text",
            SectionKind::Literal => "literal",
            SectionKind::Bss => "bss",
            SectionKind::Tbss => "tbss",
            SectionKind::Data => "data",
            SectionKind::Tdata => "tdata",
            SectionKind::Rodata => "rodata",
            SectionKind::Common => "common",
            SectionKind::Abs => "abs",
            SectionKind::Unknown => "unknown",
            SectionKind::Named(n) => n,
        })
    }
}

impl FromStr for SectionKind {
    type Err = std::convert::Infallible;
    /// The spellings of `Display`; anything else is a section's own name.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let all = [
            SectionKind::Text,
            SectionKind::Literal,
            SectionKind::Bss,
            SectionKind::Tbss,
            SectionKind::Data,
            SectionKind::Tdata,
            SectionKind::Rodata,
            SectionKind::Common,
            SectionKind::Abs,
            SectionKind::Unknown,
        ];
        Ok(all
            .into_iter()
            .find(|k| k.to_string() == s)
            .unwrap_or_else(|| SectionKind::Named(s.to_string())))
    }
}

impl Serialize for SectionKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        as_text(self, s)
    }
}

/// A defined symbol with global or weak binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DefinedSymbol {
    /// `GLOBAL` or `WEAK`.
    pub binding: Binding,
    /// `FUNC`, `OBJECT`, `NOTYPE`, ...
    #[serde(rename = "type")]
    pub kind: SymbolType,
    /// `DEFAULT`, `HIDDEN`, `PROTECTED`, `INTERNAL`.
    pub visibility: Visibility,
    /// The kind of section it is defined in.
    pub section: SectionKind,
    /// `st_size` (compared for data objects only).
    pub size: u64,
    /// Offset in its section (`st_value` of a relocatable), where known.
    pub offset: Option<u64>,
    /// The alignment the symbol is guaranteed in a link: its section's alignment, reduced
    /// by its offset's lowest set bit. Where known.
    pub align: Option<u64>,
}

/// The alignment a symbol at `offset` of a section aligned to `section_align` keeps in any
/// link.
pub fn guaranteed_align(section_align: u64, offset: u64) -> u64 {
    let section_align = section_align.max(1);
    if offset == 0 {
        section_align
    } else {
        section_align.min(1 << offset.trailing_zeros())
    }
}

/// How a function reaches a symbol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mechanism {
    /// A CONST16 pair: `R_XTENSA_SLOTn_ALT` (high half) and `R_XTENSA_SLOTn_OP` (low half)
    /// against the symbol.
    Const16,
    /// An `l32r` (`R_XTENSA_SLOT0_OP` against a literal) whose literal word holds the
    /// symbol's address (`R_XTENSA_32`).
    L32rLiteral,
    /// A call or any other relocation against the symbol directly.
    Direct,
    /// Not recorded (a manifest entry that gives no relocation types).
    Unrecorded,
}

impl fmt::Display for Mechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mechanism::Const16 => "CONST16 pair (SLOT0_ALT + SLOT0_OP)",
            Mechanism::L32rLiteral => "l32r literal (SLOT0_OP + R_XTENSA_32)",
            Mechanism::Direct => "direct relocation",
            Mechanism::Unrecorded => "unrecorded mechanism",
        })
    }
}

/// One reference: the relocation types that make it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Reference {
    /// How it is made.
    pub mechanisms: BTreeSet<Mechanism>,
    /// The relocation type names seen.
    pub relocations: BTreeSet<String>,
}

/// The ABI of one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AbiModel {
    /// Where it came from.
    pub source: String,
    /// `ELF32` or `ELF64`.
    pub class: String,
    /// `little` or `big`.
    pub endian: String,
    /// `e_machine` as a name (`Xtensa`, `x86-64`, or the number).
    pub machine: String,
    /// `e_flags`, where known.
    pub flags: Option<u32>,
    /// Global and weak defined symbols by name.
    pub defined: BTreeMap<String, DefinedSymbol>,
    /// Undefined symbols.
    pub undefined: BTreeSet<String>,
    /// (function, symbol) → how. Only references to global, weak or undefined symbols.
    pub references: BTreeMap<(String, String), Reference>,
    /// Sections of note that are present: `.xt.prop`, `.xtensa.info`, `.literal*`,
    /// `.eh_frame`, `.init_array`, `.fini_array`, `.ctors`, `.dtors`. `None` where the
    /// source does not record sections (a manifest).
    pub notable_sections: Option<BTreeSet<String>>,
    /// The `ABI=` value of `.xtensa.info` (`0` windowed, `1` call0), where present.
    pub xtensa_abi: Option<String>,
    /// Where the source's facts come from, where it records that (a manifest does): by
    /// symbol or import name, by reference (`from -> to`), and for the object as a whole
    /// under [`OBJECT_EVIDENCE`].
    pub evidence: BTreeMap<String, String>,
}

/// The key of [`AbiModel::evidence`] for the object as a whole.
pub const OBJECT_EVIDENCE: &str = "object";

/// The key of [`AbiModel::evidence`] and the text of findings for a reference.
pub fn reference_key(from: &str, to: &str) -> String {
    format!("{from} -> {to}")
}

/// `e_machine` as a name.
pub fn machine_name(m: u16) -> String {
    match m {
        elf::EM_XTENSA => "Xtensa".into(),
        elf::EM_X86_64 => "x86-64".into(),
        elf::EM_386 => "i386".into(),
        elf::EM_AARCH64 => "AArch64".into(),
        elf::EM_RISCV => "RISC-V".into(),
        other => format!("machine {other}"),
    }
}

/// The instruction-slot relocations: `R_XTENSA_SLOTn_OP` for n in 0..=14.
fn is_slot_op(t: u32) -> bool {
    (elf::R_XTENSA_SLOT0_OP..=elf::R_XTENSA_SLOT14_OP).contains(&t)
}

/// The alternate-slot relocations (CONST16's high half): `R_XTENSA_SLOTn_ALT`.
fn is_slot_alt(t: u32) -> bool {
    (elf::R_XTENSA_SLOT0_ALT..=elf::R_XTENSA_SLOT14_ALT).contains(&t)
}

/// An Xtensa relocation type's name (binutils include/elf/xtensa.h).
pub fn xtensa_reloc_name(t: u32) -> String {
    match t {
        elf::R_XTENSA_NONE => "R_XTENSA_NONE".into(),
        elf::R_XTENSA_32 => "R_XTENSA_32".into(),
        elf::R_XTENSA_RELATIVE => "R_XTENSA_RELATIVE".into(),
        elf::R_XTENSA_ASM_EXPAND => "R_XTENSA_ASM_EXPAND".into(),
        elf::R_XTENSA_32_PCREL => "R_XTENSA_32_PCREL".into(),
        elf::R_XTENSA_DIFF8 => "R_XTENSA_DIFF8".into(),
        elf::R_XTENSA_DIFF16 => "R_XTENSA_DIFF16".into(),
        elf::R_XTENSA_DIFF32 => "R_XTENSA_DIFF32".into(),
        t if is_slot_op(t) => format!("R_XTENSA_SLOT{}_OP", t - elf::R_XTENSA_SLOT0_OP),
        t if is_slot_alt(t) => format!("R_XTENSA_SLOT{}_ALT", t - elf::R_XTENSA_SLOT0_ALT),
        other => format!("R_XTENSA_{other}"),
    }
}

/// The name under which a notable section is recorded.
fn notable(name: &str) -> Option<String> {
    if name.starts_with(".literal") {
        return Some(".literal*".into());
    }
    for n in [
        ".xt.prop",
        ".xt.lit",
        ".xtensa.info",
        ".eh_frame",
        ".init_array",
        ".fini_array",
        ".ctors",
        ".dtors",
    ] {
        if name == n || name.starts_with(&format!("{n}.")) {
            return Some(n.into());
        }
    }
    None
}

/// Demangles an Itanium C++ name, or returns `None` for a C name or one that does not
/// demangle (a name can parse and still fail to print, such as a template parameter
/// reference outside a template: `Display` would then panic in `to_string`).
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    symbol
        .demangle(&cpp_demangle::DemangleOptions::default())
        .ok()
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn names_that_parse_but_do_not_print_are_not_demangled() {
        // Found by the abi_parse fuzzer: `T0_` names a template parameter with no
        // template around it.
        assert_eq!(
            demangle("_Z31neuron_translate_mapping_lookupPvyPyT0_"),
            None
        );
        assert_eq!(
            demangle("_Z16neuron_translatePvy").as_deref(),
            Some("neuron_translate(void*, unsigned long long)")
        );
        assert_eq!(demangle("neuron_translate_span"), None);
    }
}
