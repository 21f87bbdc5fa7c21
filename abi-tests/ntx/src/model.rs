//! What an object file offers and needs, as a linker sees it: the ABI model `ntx abi-diff`
//! compares. Built from an ELF relocatable (with the `object` crate), from a member of an
//! `ar` archive, or from a reference manifest.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use object::elf;
use object::read::elf::{ElfFile, FileHeader};
use object::{
    Endianness, FileKind, Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget,
    SymbolIndex, SymbolSection,
};
use serde::Serialize;

/// An error that names the file and says what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    /// The file (or `file(member)`).
    pub file: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl std::error::Error for InputError {}

impl InputError {
    /// An error about `file`.
    pub fn new(file: impl Into<String>, message: impl Into<String>) -> Self {
        InputError {
            file: file.into(),
            message: message.into(),
        }
    }
}

/// A defined symbol with global or weak binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DefinedSymbol {
    /// `GLOBAL` or `WEAK`.
    pub binding: String,
    /// `FUNC`, `OBJECT`, `NOTYPE`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// `DEFAULT`, `HIDDEN`, `PROTECTED`, `INTERNAL`.
    pub visibility: String,
    /// The section's kind: `text`, `bss`, `data`, `rodata`, `literal`, `common`, `abs`, or
    /// the section's own name.
    pub section: String,
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

/// An Xtensa relocation type's name (binutils include/elf/xtensa.h).
pub fn xtensa_reloc_name(t: u32) -> String {
    match t {
        0 => "R_XTENSA_NONE".into(),
        1 => "R_XTENSA_32".into(),
        5 => "R_XTENSA_RELATIVE".into(),
        11 => "R_XTENSA_ASM_EXPAND".into(),
        14 => "R_XTENSA_32_PCREL".into(),
        17 => "R_XTENSA_DIFF8".into(),
        18 => "R_XTENSA_DIFF16".into(),
        19 => "R_XTENSA_DIFF32".into(),
        20..=34 => format!("R_XTENSA_SLOT{}_OP", t - 20),
        35..=49 => format!("R_XTENSA_SLOT{}_ALT", t - 35),
        other => format!("R_XTENSA_{other}"),
    }
}

fn is_slot_op(t: u32) -> bool {
    (20..=34).contains(&t)
}
fn is_slot_alt(t: u32) -> bool {
    (35..=49).contains(&t)
}

fn binding_name(b: u8) -> String {
    match b {
        elf::STB_LOCAL => "LOCAL".into(),
        elf::STB_GLOBAL => "GLOBAL".into(),
        elf::STB_WEAK => "WEAK".into(),
        elf::STB_GNU_UNIQUE => "UNIQUE".into(),
        o => format!("binding {o}"),
    }
}

fn type_name(t: u8) -> String {
    match t {
        elf::STT_NOTYPE => "NOTYPE".into(),
        elf::STT_OBJECT => "OBJECT".into(),
        elf::STT_FUNC => "FUNC".into(),
        elf::STT_SECTION => "SECTION".into(),
        elf::STT_FILE => "FILE".into(),
        elf::STT_COMMON => "COMMON".into(),
        elf::STT_TLS => "TLS".into(),
        elf::STT_GNU_IFUNC => "IFUNC".into(),
        o => format!("type {o}"),
    }
}

fn visibility_name(v: u8) -> String {
    match v & 3 {
        elf::STV_DEFAULT => "DEFAULT".into(),
        elf::STV_INTERNAL => "INTERNAL".into(),
        elf::STV_HIDDEN => "HIDDEN".into(),
        _ => "PROTECTED".into(),
    }
}

/// The kind of a section, by its name.
pub fn section_kind(name: &str) -> String {
    for (prefix, kind) in [
        (".text", "text"),
        (".literal", "literal"),
        (".bss", "bss"),
        (".sbss", "bss"),
        (".tbss", "tbss"),
        (".data", "data"),
        (".sdata", "data"),
        (".tdata", "tdata"),
        (".rodata", "rodata"),
    ] {
        if name == prefix || name.starts_with(&format!("{prefix}.")) {
            return kind.into();
        }
    }
    name.into()
}

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
pub fn from_elf(data: &[u8], source: &str) -> Result<AbiModel, InputError> {
    let err = |m: String| InputError::new(source, m);
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

struct FuncRange {
    start: u64,
    end: u64,
    name: String,
}

fn from_elf_file<'d, H: FileHeader<Endian = Endianness>>(
    f: &ElfFile<'d, H>,
    class: &str,
    source: &str,
) -> Result<AbiModel, InputError> {
    let err = |m: String| InputError::new(source, m);
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
            "little".into()
        } else {
            "big".into()
        },
        machine: machine_name(machine),
        flags: Some(header.e_flags(endian)),
        defined: BTreeMap::new(),
        undefined: BTreeSet::new(),
        references: BTreeMap::new(),
        notable_sections: Some(BTreeSet::new()),
        xtensa_abi: None,
    };

    let mut section_names = BTreeMap::new();
    let mut section_aligns = BTreeMap::new();
    for s in f.sections() {
        section_aligns.insert(s.index().0, s.align());
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
        section_names.insert(s.index().0, name);
    }

    // Symbols: the exported ones, the imports, and the functions' address ranges.
    let mut funcs: BTreeMap<usize, Vec<FuncRange>> = BTreeMap::new();
    let mut symbols: BTreeMap<usize, (String, bool)> = BTreeMap::new(); // name, external
    let mut by_address: BTreeMap<(usize, u64), String> = BTreeMap::new();
    for sym in f.symbols() {
        let name = sym
            .name()
            .map_err(|e| err(format!("bad symbol name: {e}")))?
            .to_string();
        let (st_info, st_other) = match sym.flags() {
            object::SymbolFlags::Elf { st_info, st_other } => (st_info, st_other),
            _ => (0, 0),
        };
        let binding = st_info >> 4;
        let stype = st_info & 0xf;
        let external = binding != elf::STB_LOCAL;
        let section_name = match sym.section() {
            SymbolSection::Section(i) => section_names.get(&i.0).cloned(),
            _ => None,
        };
        let shown = if stype == elf::STT_SECTION {
            section_name.clone().unwrap_or_default()
        } else {
            name.clone()
        };
        symbols.insert(sym.index().0, (shown, external));
        if let SymbolSection::Section(i) = sym.section() {
            if stype == elf::STT_FUNC {
                funcs.entry(i.0).or_default().push(FuncRange {
                    start: sym.address(),
                    end: sym.address().saturating_add(sym.size().max(1)),
                    name: name.clone(),
                });
            }
            if stype != elf::STT_SECTION && !name.is_empty() {
                by_address
                    .entry((i.0, sym.address()))
                    .or_insert_with(|| name.clone());
            }
        }
        if !external || name.is_empty() {
            continue;
        }
        match sym.section() {
            SymbolSection::Undefined => {
                model.undefined.insert(name);
            }
            s => {
                let placed = match s {
                    SymbolSection::Section(i) => section_aligns
                        .get(&i.0)
                        .map(|&a| (sym.address(), guaranteed_align(a, sym.address()))),
                    _ => None,
                };
                let section = match s {
                    SymbolSection::Section(i) => {
                        section_kind(section_names.get(&i.0).map_or("", |n| n))
                    }
                    SymbolSection::Common => "common".into(),
                    SymbolSection::Absolute => "abs".into(),
                    _ => "unknown".into(),
                };
                model.defined.insert(
                    name,
                    DefinedSymbol {
                        binding: binding_name(binding),
                        kind: type_name(stype),
                        visibility: visibility_name(st_other),
                        section,
                        size: sym.size(),
                        offset: placed.map(|p| p.0),
                        align: placed.map(|p| p.1),
                    },
                );
            }
        }
    }

    // Relocations of every section, by section index and offset, for literal look-ups.
    // section index -> (offset, type, target symbol, addend)
    type Relocs = BTreeMap<usize, Vec<(u64, u32, Option<SymbolIndex>, i64)>>;
    let mut relocs: Relocs = BTreeMap::new();
    for s in f.sections() {
        for (off, r) in s.relocations() {
            let rtype = match r.flags() {
                RelocationFlags::Elf { r_type } => r_type,
                _ => 0,
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
    let symbol_section = |i: SymbolIndex| {
        f.symbol_by_index(i)
            .ok()
            .and_then(|s| s.section_index())
            .map(|s| s.0)
    };
    let is_section_sym = |i: SymbolIndex| {
        f.symbol_by_index(i)
            .map(|s| s.kind() == object::SymbolKind::Section)
            .unwrap_or(false)
    };
    let symbol_value = |i: SymbolIndex| f.symbol_by_index(i).map(|s| s.address()).unwrap_or(0);
    // The named symbol a relocation target stands for: itself, or, for a section symbol plus
    // addend, the symbol defined at that place.
    let resolve = |target: SymbolIndex, addend: i64| -> Option<(String, bool)> {
        let (name, external) = symbols.get(&target.0)?.clone();
        if is_section_sym(target) {
            let sec = symbol_section(target)?;
            if let Some(n) = by_address.get(&(sec, addend as u64)) {
                let ext = model.defined.contains_key(n);
                return Some((n.clone(), ext));
            }
            return Some((format!("{name}+{addend:#x}"), false));
        }
        Some((name, external))
    };

    let is_xtensa = machine == elf::EM_XTENSA;
    for (sec, list) in &relocs {
        let sec_name = section_names.get(sec).cloned().unwrap_or_default();
        if sec_name.starts_with(".literal") || notable(&sec_name).is_some_and(|n| n != ".literal*")
        {
            continue; // literal words are reached through the l32r that loads them
        }
        if !section_kind(&sec_name).eq("text") {
            continue;
        }
        for &(off, rtype, target, addend) in list {
            let Some(target) = target else { continue };
            let from = funcs
                .get(sec)
                .and_then(|v| v.iter().find(|r| r.start <= off && off < r.end))
                .map_or_else(|| sec_name.clone(), |r| r.name.clone());
            // An l32r of a literal: follow the literal word's own relocation.
            let literal_section = symbol_section(target).filter(|s| {
                section_names
                    .get(s)
                    .is_some_and(|n| n.starts_with(".literal"))
            });
            let (to, mechanism, names) =
                if let (true, Some(lit)) = (is_xtensa && is_slot_op(rtype), literal_section) {
                    let at = symbol_value(target).wrapping_add(addend as u64);
                    let word = relocs
                        .get(&lit)
                        .and_then(|v| v.iter().find(|r| r.0 == at && r.1 == 1));
                    match word {
                        Some(&(_, wtype, Some(wt), wa)) => match resolve(wt, wa) {
                            Some(t) => (
                                t,
                                Mechanism::L32rLiteral,
                                [xtensa_reloc_name(rtype), xtensa_reloc_name(wtype)],
                            ),
                            None => continue,
                        },
                        _ => continue, // a literal constant, not a symbol
                    }
                } else {
                    let Some(t) = resolve(target, addend) else {
                        continue;
                    };
                    let m = if is_xtensa && (is_slot_alt(rtype) || is_slot_op(rtype)) {
                        Mechanism::Const16
                    } else {
                        Mechanism::Direct
                    };
                    let n = if is_xtensa {
                        xtensa_reloc_name(rtype)
                    } else {
                        format!("type {rtype}")
                    };
                    (t, m, [n.clone(), n])
                };
            let ((to, external), _) = (to, ());
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
    Ok(model)
}

/// Demangles an Itanium C++ name, or returns `None` for a C name.
pub fn demangle(name: &str) -> Option<String> {
    if !name.starts_with("_Z") {
        return None;
    }
    cpp_demangle::Symbol::new(name).ok().map(|s| s.to_string())
}
