//! The one table of ELF names (contract §1).
//!
//! Every exported and imported name of `translation.o` is written exactly once, in the
//! `sym!` macro below. `abi.rs` uses it for `#[export_name]` / `#[link_name]`, the header
//! generator (`tools/header`) and the ABI harness read [`SYMBOLS`], and the reference
//! manifest in `abi-tests/reference/` is checked against [`SYMBOLS`] by a test.

/// The ELF name of one item of the contract, as a string literal usable in attributes.
#[macro_export]
#[doc(hidden)]
macro_rules! sym {
    // Exports (contract §1).
    (translate) => {
        "_Z16neuron_translatePvy"
    };
    (translate_ctx) => {
        "_Z20neuron_translate_ctxv"
    };
    (mapping_lookup) => {
        "_Z31neuron_translate_mapping_lookupPvyPyS0_"
    };
    (init_translate_ctx) => {
        "_Z19_init_translate_ctxv"
    };
    (ctx) => {
        "_ctx"
    };
    (sbuf_window) => {
        "_sbuf_window"
    };
    // This library's addition (not in the original; C linkage).
    (translate_span) => {
        "neuron_translate_span"
    };
    // Imports (contract §1), both defined by start_exit.o.
    (data_scratch_map) => {
        "data_scratch_map"
    };
    (hbm_scratch) => {
        "_ZN12extended_isa3sdk11hbm_scratchE"
    };
}

/// The one-paragraph documentation of each item, written once: carried into the header
/// (tools/header) and into the rustdoc of the exported items (abi.rs).
#[macro_export]
#[doc(hidden)]
macro_rules! sym_doc {
    (translate) => {
        "Translate a 64-bit SoC/HBM address to a 32-bit NX-local address; on a miss, \
         reprogram the round-robin victim window (slots 0..2) and its SoC window register. \
         Returns NULL when ctx is NULL."
    };
    (translate_ctx) => {
        "The current window table (the value of _ctx); NULL before _init_translate_ctx()."
    };
    (mapping_lookup) => {
        "Which SoC range the window holding addr maps, without side effects (never \
         refills, never touches a register): on a hit writes the window's first SoC \
         address to *out_start and its last (inclusive) to *out_end and returns 0; on a \
         miss (or NULL ctx) returns -1 and writes nothing. NULL outputs are skipped."
    };
    (init_translate_ctx) => {
        "Build the initial window table and point _ctx at it: reads ENGINE_BASE_ADDR from \
         the NX register block (NX-local 0x00100028, which must be mapped), sets \
         _sbuf_window to that base minus 41 MiB, and fills three empty reusable 16 MiB \
         windows and two pinned 64 MiB windows (SBUF, HBM scratch). Calling it again \
         re-reads the register and resets the table."
    };
    (ctx) => {
        "The window table in use (a pointer, 4 bytes on the device); NULL before init."
    };
    (sbuf_window) => {
        "SoC address of SBUF, ENGINE_BASE_ADDR - 41 MiB, set by _init_translate_ctx (0 \
         before); read by wrapper_api.o to address SBUF outputs."
    };
    (translate_span) => {
        "neuron_translate, plus how far it reaches: returns the local address of addr \
         (refilling on a miss, exactly as neuron_translate) and writes to *out_span how \
         many bytes from there translate contiguously through the same window, at most \
         len. The span ends at the window's end, at the top of the 32-bit local space \
         and before any address an earlier window would match. Translate once per span \
         instead of once per element. NULL ctx: returns NULL, *out_span = 0; NULL \
         out_span is skipped; len 0 translates as usual with a span of 0."
    };
    (data_scratch_map) => {
        "The core's data scratch map (defined by start_exit.o). The original translation.o \
         imports it; this library does not need it (its table lives in its own .bss)."
    };
    (hbm_scratch) => {
        "SoC/HBM address of the core's HBM scratch region (defined by start_exit.o)."
    };
}

/// What kind of ELF symbol an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    /// `STT_FUNC` in `.text`.
    Function,
    /// `STT_OBJECT`, with its `st_size` in the device object (ELF32). Exports live in
    /// `.bss`; an import is undefined there, so its `st_size` is 0.
    Object {
        /// `st_size` in `translation.o`.
        device_size: u32,
    },
}

/// Whether the object defines the symbol or needs it from elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Defined by `translation.o`, `STB_GLOBAL`.
    Export,
    /// Undefined in `translation.o`, defined by `start_exit.o`.
    Import,
}

/// How a C++ compiler must declare the symbol to reference its ELF name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Linkage {
    /// C++ linkage: the ELF name is the Itanium mangling of the declaration.
    Cxx,
    /// C linkage (`extern "C"`): the ELF name is the plain name.
    C,
}

/// One entry of the symbol table of the drop-in object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Symbol {
    /// The exact ELF name.
    pub elf_name: &'static str,
    /// The C++ (unmangled) name.
    pub cxx_name: &'static str,
    /// Function or object.
    pub kind: SymbolKind,
    /// Export or import.
    pub direction: Direction,
    /// C return type (functions) or object type (objects), in the header's type names.
    pub c_type: &'static str,
    /// C parameter list (functions only), in the header's type names; `void` for none.
    pub c_params: &'static str,
    /// C++ or C linkage.
    pub linkage: Linkage,
    /// In the original translation.o (false: this library's addition, which an ABI diff
    /// against the original reports as an addition).
    pub original: bool,
    /// In this library's object (false: an import of the original that this library
    /// does not need).
    pub in_library: bool,
    /// One-line documentation carried into the header.
    pub doc: &'static str,
}

/// The exports and imports of the contract, in the contract's order: the original's six
/// exports, this library's addition, the original's two imports.
pub const SYMBOLS: &[Symbol] = &[
    Symbol {
        elf_name: sym!(translate),
        cxx_name: "neuron_translate",
        kind: SymbolKind::Function,
        direction: Direction::Export,
        c_type: "void *",
        c_params: "void *ctx, unsigned long long addr",
        linkage: Linkage::Cxx,
        original: true,
        in_library: true,
        doc: sym_doc!(translate),
    },
    Symbol {
        elf_name: sym!(translate_ctx),
        cxx_name: "neuron_translate_ctx",
        kind: SymbolKind::Function,
        direction: Direction::Export,
        c_type: "_translation_ctx_t *",
        c_params: "void",
        linkage: Linkage::Cxx,
        original: true,
        in_library: true,
        doc: sym_doc!(translate_ctx),
    },
    Symbol {
        elf_name: sym!(mapping_lookup),
        cxx_name: "neuron_translate_mapping_lookup",
        kind: SymbolKind::Function,
        direction: Direction::Export,
        c_type: "int",
        c_params: "void *ctx, unsigned long long addr, unsigned long long *out_start, \
                   unsigned long long *out_end",
        linkage: Linkage::Cxx,
        original: true,
        in_library: true,
        doc: sym_doc!(mapping_lookup),
    },
    Symbol {
        elf_name: sym!(init_translate_ctx),
        cxx_name: "_init_translate_ctx",
        kind: SymbolKind::Function,
        direction: Direction::Export,
        c_type: "void",
        c_params: "void",
        linkage: Linkage::Cxx,
        original: true,
        in_library: true,
        doc: sym_doc!(init_translate_ctx),
    },
    Symbol {
        elf_name: sym!(ctx),
        cxx_name: "_ctx",
        kind: SymbolKind::Object { device_size: 4 },
        direction: Direction::Export,
        c_type: "_translation_ctx_t *",
        c_params: "",
        linkage: Linkage::Cxx,
        original: true,
        in_library: true,
        doc: sym_doc!(ctx),
    },
    Symbol {
        elf_name: sym!(sbuf_window),
        cxx_name: "_sbuf_window",
        kind: SymbolKind::Object { device_size: 8 },
        direction: Direction::Export,
        c_type: "uint64_t",
        c_params: "",
        linkage: Linkage::Cxx,
        original: true,
        in_library: true,
        doc: sym_doc!(sbuf_window),
    },
    Symbol {
        elf_name: sym!(translate_span),
        cxx_name: "neuron_translate_span",
        kind: SymbolKind::Function,
        direction: Direction::Export,
        c_type: "void *",
        c_params: "void *ctx, unsigned long long addr, unsigned long long len, \
                   unsigned long long *out_span",
        linkage: Linkage::C,
        original: false,
        in_library: true,
        doc: sym_doc!(translate_span),
    },
    Symbol {
        elf_name: sym!(data_scratch_map),
        cxx_name: "data_scratch_map",
        kind: SymbolKind::Object { device_size: 0 },
        direction: Direction::Import,
        c_type: "unsigned char",
        c_params: "",
        linkage: Linkage::Cxx,
        original: true,
        in_library: false,
        doc: sym_doc!(data_scratch_map),
    },
    Symbol {
        elf_name: sym!(hbm_scratch),
        cxx_name: "extended_isa::sdk::hbm_scratch",
        kind: SymbolKind::Object { device_size: 0 },
        direction: Direction::Import,
        c_type: "unsigned long long",
        c_params: "",
        linkage: Linkage::Cxx,
        original: true,
        in_library: true,
        doc: sym_doc!(hbm_scratch),
    },
];

/// The exports of the original translation.o (the contract's six).
pub fn original_exports() -> impl Iterator<Item = &'static Symbol> {
    exports().filter(|s| s.original)
}

/// The exports of [`SYMBOLS`].
pub fn exports() -> impl Iterator<Item = &'static Symbol> {
    SYMBOLS.iter().filter(|s| s.direction == Direction::Export)
}

/// The imports of [`SYMBOLS`] (the original's).
pub fn imports() -> impl Iterator<Item = &'static Symbol> {
    SYMBOLS.iter().filter(|s| s.direction == Direction::Import)
}

/// The imports this library's object has: exactly its undefined symbols.
pub fn library_imports() -> impl Iterator<Item = &'static Symbol> {
    imports().filter(|s| s.in_library)
}
