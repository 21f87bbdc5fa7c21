//! What an object file offers and needs, as a linker sees it: the ABI model `ntx abi-diff`
//! compares. Built from an ELF relocatable (with the `object` crate), from a member of an
//! `ar` archive, or from a reference manifest.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use object::elf;
use object::read::elf::{ElfFile, FileHeader};
use object::{
    Endianness, FileKind, Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget,
    SymbolIndex, SymbolSection,
};
use serde::{Serialize, Serializer};

use crate::error::{Error, ErrorKind};

/// Serialises a value as its `Display` text (the spellings `readelf` uses).
fn as_text<T: fmt::Display, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
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
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$v),)*
                    _ => Err(format!(concat!("unknown ", $other, " {:?} (one of: {})"), s,
                        [$($text),*].join(", "))),
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
    type Err = String;
    /// The spellings of `Display`; anything else is a section's own name.
    fn from_str(s: &str) -> Result<Self, String> {
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

/// Builds the model of an ELF relocatable.
pub fn from_elf(data: &[u8], source: &str) -> Result<AbiModel, Error> {
    let err = |m: String| Error::new(ErrorKind::MalformedElf, source, m);
    match FileKind::parse(data) {
        Ok(FileKind::Elf32) => {
            let f = ElfFile::<elf::FileHeader32<Endianness>>::parse(data)
                .map_err(|e| err(format!("not a valid ELF32 file: {e}")))?;
            from_elf_file(&f, "ELF32", source)
        }
        Ok(FileKind::Elf64) => {
            let f = ElfFile::<elf::FileHeader64<Endianness>>::parse(data)
                .map_err(|e| err(format!("not a valid ELF64 file: {e}")))?;
            from_elf_file(&f, "ELF64", source)
        }
        Ok(other) => Err(err(format!("not an ELF file (a {other:?} file)"))),
        Err(e) => Err(err(format!("not an ELF file: {e}"))),
    }
}

/// What the reading passes share: every section's name and alignment, by index.
struct Sections {
    names: BTreeMap<usize, String>,
    aligns: BTreeMap<usize, u64>,
}

/// A function's address range in its section.
struct FuncRange {
    start: u64,
    end: u64,
    name: String,
}

/// What the symbol table tells the reference pass: functions by section, every symbol's
/// shown name and whether it is external, and the named symbol at each place.
#[derive(Default)]
struct Symbols {
    funcs: BTreeMap<usize, Vec<FuncRange>>,
    names: BTreeMap<usize, (String, bool)>,
    by_address: BTreeMap<(usize, u64), String>,
}

/// One relocation: offset, type, target symbol, addend.
type Reloc = (u64, u32, Option<SymbolIndex>, i64);

fn from_elf_file<H: FileHeader<Endian = Endianness>>(
    f: &ElfFile<'_, H>,
    class: &str,
    source: &str,
) -> Result<AbiModel, Error> {
    let err = |m: String| Error::new(ErrorKind::MalformedElf, source, m);
    let endian = f.endian();
    let header = f.elf_header();
    if header.e_type(endian) != elf::ET_REL {
        return Err(err(format!(
            "not a relocatable object (e_type {})",
            header.e_type(endian)
        )));
    }
    let machine = header.e_machine(endian);
    let mut model = AbiModel {
        source: source.into(),
        class: class.into(),
        endian: if f.is_little_endian() {
            "little"
        } else {
            "big"
        }
        .into(),
        machine: machine_name(machine),
        flags: Some(header.e_flags(endian)),
        defined: BTreeMap::new(),
        undefined: BTreeSet::new(),
        references: BTreeMap::new(),
        notable_sections: Some(BTreeSet::new()),
        xtensa_abi: None,
        evidence: BTreeMap::new(),
    };
    let sections = read_sections(f, &mut model, source)?;
    let symbols = read_symbols(f, &sections, &mut model, source)?;
    let relocs = read_relocations(f);
    read_references(
        f,
        &sections,
        &symbols,
        &relocs,
        machine == elf::EM_XTENSA,
        &mut model,
    );
    Ok(model)
}

/// Section names and alignments; the notable sections and the `.xtensa.info` ABI.
fn read_sections<H: FileHeader<Endian = Endianness>>(
    f: &ElfFile<'_, H>,
    model: &mut AbiModel,
    source: &str,
) -> Result<Sections, Error> {
    let err = |m: String| Error::new(ErrorKind::MalformedElf, source, m);
    let mut out = Sections {
        names: BTreeMap::new(),
        aligns: BTreeMap::new(),
    };
    for s in f.sections() {
        let name = s
            .name()
            .map_err(|e| err(format!("bad section name: {e}")))?
            .to_string();
        if let (Some(n), Some(set)) = (notable(&name), model.notable_sections.as_mut()) {
            set.insert(n);
        }
        if name == ".xtensa.info" {
            let data = s
                .data()
                .map_err(|e| err(format!("bad .xtensa.info: {e}")))?;
            let text = String::from_utf8_lossy(data);
            model.xtensa_abi = text
                .split(['\n', '\0'])
                .find_map(|l| l.strip_prefix("ABI="))
                .map(|v| v.trim().to_string());
        }
        out.aligns.insert(s.index().0, s.align());
        out.names.insert(s.index().0, name);
    }
    Ok(out)
}

/// The exported symbols, the imports, and what the reference pass needs.
fn read_symbols<H: FileHeader<Endian = Endianness>>(
    f: &ElfFile<'_, H>,
    sections: &Sections,
    model: &mut AbiModel,
    source: &str,
) -> Result<Symbols, Error> {
    let mut out = Symbols::default();
    for sym in f.symbols() {
        let name = sym
            .name()
            .map_err(|e| {
                Error::new(
                    ErrorKind::MalformedElf,
                    source,
                    format!("bad symbol name: {e}"),
                )
            })?
            .to_string();
        let (st_info, st_other) = match sym.flags() {
            object::SymbolFlags::Elf { st_info, st_other } => (st_info, st_other),
            _ => (0, 0),
        };
        let binding = Binding::from_raw(st_info >> 4);
        let stype = SymbolType::from_raw(st_info & 0xf);
        let external = binding != Binding::Local;
        let section_index = match sym.section() {
            SymbolSection::Section(i) => Some(i.0),
            _ => None,
        };
        let shown = match section_index.and_then(|i| sections.names.get(&i)) {
            Some(sec) if stype == SymbolType::Section => sec.clone(),
            _ => name.clone(),
        };
        out.names.insert(sym.index().0, (shown, external));
        if let Some(i) = section_index {
            if stype == SymbolType::Func {
                out.funcs.entry(i).or_default().push(FuncRange {
                    start: sym.address(),
                    end: sym.address().saturating_add(sym.size().max(1)),
                    name: name.clone(),
                });
            }
            if stype != SymbolType::Section && !name.is_empty() {
                out.by_address
                    .entry((i, sym.address()))
                    .or_insert_with(|| name.clone());
            }
        }
        if !external || name.is_empty() {
            continue;
        }
        if sym.section() == SymbolSection::Undefined {
            model.undefined.insert(name);
            continue;
        }
        let d = defined_symbol(&sym, sections, (binding, stype, st_other));
        model.defined.insert(name, d);
    }
    Ok(out)
}

/// A defined external symbol: its attributes and, in a section, its place.
fn defined_symbol<'d, 'f, H: FileHeader<Endian = Endianness>>(
    sym: &object::read::elf::ElfSymbol<'d, 'f, H>,
    sections: &Sections,
    (binding, stype, st_other): (Binding, SymbolType, u8),
) -> DefinedSymbol {
    let (section, placed) = match sym.section() {
        SymbolSection::Section(i) => (
            SectionKind::of_section(sections.names.get(&i.0).map_or("", |n| n)),
            sections
                .aligns
                .get(&i.0)
                .map(|&a| (sym.address(), guaranteed_align(a, sym.address()))),
        ),
        SymbolSection::Common => (SectionKind::Common, None),
        SymbolSection::Absolute => (SectionKind::Abs, None),
        _ => (SectionKind::Unknown, None),
    };
    DefinedSymbol {
        binding,
        kind: stype,
        visibility: Visibility::from_raw(st_other & 3),
        section,
        size: sym.size(),
        offset: placed.map(|p| p.0),
        align: placed.map(|p| p.1),
    }
}

/// Every section's relocations, by section index, for the literal look-ups.
fn read_relocations<H: FileHeader<Endian = Endianness>>(
    f: &ElfFile<'_, H>,
) -> BTreeMap<usize, Vec<Reloc>> {
    let mut relocs: BTreeMap<usize, Vec<Reloc>> = BTreeMap::new();
    for s in f.sections() {
        for (off, r) in s.relocations() {
            let rtype = match r.flags() {
                RelocationFlags::Elf { r_type } => r_type,
                _ => elf::R_XTENSA_NONE,
            };
            let target = match r.target() {
                RelocationTarget::Symbol(i) => Some(i),
                _ => None,
            };
            relocs
                .entry(s.index().0)
                .or_default()
                .push((off, rtype, target, r.addend()));
        }
    }
    relocs
}

/// The function-to-symbol references, from the relocations of the executable sections:
/// each is attributed to the function whose range holds it; an `l32r` of a literal is
/// followed to the literal word's `R_XTENSA_32`.
fn read_references<H: FileHeader<Endian = Endianness>>(
    f: &ElfFile<'_, H>,
    sections: &Sections,
    symbols: &Symbols,
    relocs: &BTreeMap<usize, Vec<Reloc>>,
    is_xtensa: bool,
    model: &mut AbiModel,
) {
    let resolver = Resolver {
        f,
        sections,
        symbols,
    };
    for (sec, list) in relocs {
        let sec_name = sections.names.get(sec).cloned().unwrap_or_default();
        // Literal words are reached through the l32r that loads them; the other notable
        // sections (unwind tables, property tables) are not code.
        if notable(&sec_name).is_some() || SectionKind::of_section(&sec_name) != SectionKind::Text {
            continue;
        }
        for &(off, rtype, target, addend) in list {
            let Some(target) = target else { continue };
            let from = symbols
                .funcs
                .get(sec)
                .and_then(|v| v.iter().find(|r| r.start <= off && off < r.end))
                .map_or_else(|| sec_name.clone(), |r| r.name.clone());
            let found = match resolver.literal_section(target) {
                Some(lit) if is_xtensa && is_slot_op(rtype) => {
                    resolver.through_literal(relocs, lit, target, addend, rtype)
                }
                _ => resolver.direct(target, addend, rtype, is_xtensa),
            };
            let Some(((to, external), mechanism, names)) = found else {
                continue;
            };
            if !external && !model.undefined.contains(&to) {
                continue;
            }
            let entry = model.references.entry((from, to)).or_default();
            entry.mechanisms.insert(mechanism);
            entry.relocations.extend(names);
        }
    }
    // A CONST16 reference needs both halves; a lone SLOT_OP direct against a symbol is an
    // ordinary instruction-slot relocation (a call, say).
    for r in model.references.values_mut() {
        if r.mechanisms.contains(&Mechanism::Const16)
            && !r.relocations.iter().any(|n| n.ends_with("_ALT"))
        {
            r.mechanisms.remove(&Mechanism::Const16);
            r.mechanisms.insert(Mechanism::Direct);
        }
    }
}

/// A resolved reference: (symbol name, external), how, the relocation names.
type Resolved = ((String, bool), Mechanism, [String; 2]);

/// Turns relocation targets into the named symbols they stand for.
struct Resolver<'a, 'd, H: FileHeader<Endian = Endianness>> {
    f: &'a ElfFile<'d, H>,
    sections: &'a Sections,
    symbols: &'a Symbols,
}

impl<H: FileHeader<Endian = Endianness>> Resolver<'_, '_, H> {
    fn symbol_section(&self, i: SymbolIndex) -> Option<usize> {
        self.f
            .symbol_by_index(i)
            .ok()
            .and_then(|s| s.section_index())
            .map(|s| s.0)
    }

    /// The literal section `target` is in, if it is in one.
    fn literal_section(&self, target: SymbolIndex) -> Option<usize> {
        self.symbol_section(target).filter(|s| {
            self.sections
                .names
                .get(s)
                .is_some_and(|n| n.starts_with(".literal"))
        })
    }

    /// The named symbol a target stands for: itself, or, for a section symbol plus addend,
    /// the symbol defined at that place.
    fn resolve(&self, target: SymbolIndex, addend: i64) -> Option<(String, bool)> {
        let (name, external) = self.symbols.names.get(&target.0)?.clone();
        let is_section = self
            .f
            .symbol_by_index(target)
            .map(|s| s.kind() == object::SymbolKind::Section)
            .unwrap_or(false);
        if !is_section {
            return Some((name, external));
        }
        let sec = self.symbol_section(target)?;
        match self.symbols.by_address.get(&(sec, addend as u64)) {
            // A section-relative reference to a named symbol: external if the symbol is.
            Some(n) => Some((
                n.clone(),
                self.symbols.names.values().any(|(m, ext)| m == n && *ext),
            )),
            None => Some((format!("{name}+{addend:#x}"), false)),
        }
    }

    /// An `l32r` of a literal: the symbol whose address the literal word holds.
    fn through_literal(
        &self,
        relocs: &BTreeMap<usize, Vec<Reloc>>,
        lit: usize,
        target: SymbolIndex,
        addend: i64,
        rtype: u32,
    ) -> Option<Resolved> {
        let at = self
            .f
            .symbol_by_index(target)
            .map(|s| s.address())
            .unwrap_or(0)
            .wrapping_add(addend as u64);
        let &(_, wtype, wt, wa) = relocs
            .get(&lit)?
            .iter()
            .find(|r| r.0 == at && r.1 == elf::R_XTENSA_32)?;
        let to = self.resolve(wt?, wa)?;
        Some((
            to,
            Mechanism::L32rLiteral,
            [xtensa_reloc_name(rtype), xtensa_reloc_name(wtype)],
        ))
    }

    /// Any other relocation against a symbol.
    fn direct(
        &self,
        target: SymbolIndex,
        addend: i64,
        rtype: u32,
        is_xtensa: bool,
    ) -> Option<Resolved> {
        let to = self.resolve(target, addend)?;
        let (mechanism, name) = if is_xtensa {
            let m = if is_slot_alt(rtype) || is_slot_op(rtype) {
                Mechanism::Const16
            } else {
                Mechanism::Direct
            };
            (m, xtensa_reloc_name(rtype))
        } else {
            (Mechanism::Direct, format!("type {rtype}"))
        };
        Some((to, mechanism, [name.clone(), name]))
    }
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
