//! Reading an ELF relocatable into an [`AbiModel`] with the `object` crate: its sections,
//! its symbols (with their bindings, types, visibilities and sizes) and the references its
//! relocations make.

use std::collections::{BTreeMap, BTreeSet};

use object::elf;
use object::read::elf::{ElfFile, FileHeader};
use object::{
    Endianness, FileKind, Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget,
    SymbolIndex, SymbolSection,
};

use super::*;
use crate::error::{Error, ErrorKind};

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
