//! What C, C++ and Python read of the runtime's codes and limits, written from the one
//! module that holds them (`neuron_customop_host::base::codes`): the constants and enums of
//! runtime.h with the X-macro lists of the operations that ops.hpp expands, the whole of
//! the device's sdk/device/protocol.h, and the Python package's `_abi.py`.

use std::fmt::Write as _;

use neuron_customop_host::base::codes::{
    self as c, screaming, AccessorKind, ArgKind, DType, DeviceExit, DeviceFd, ExitStatus, Fill,
    Form, Listing, Op, Param, Policy, PrintPiece, Stats, Undefined,
};

/// The committed device protocol header, relative to the repository root.
pub const PROTOCOL_H: &str = "sdk/device/protocol.h";

/// The committed Python module, relative to the repository root.
pub const PYTHON: &str = "sdk/python/src/neuron_customop_host/_abi.py";

/// A doc comment's lines as one line of text.
fn one_line(doc: &str) -> String {
    doc.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

/// `doc` as a C comment at `indent`, wrapped to the headers' width.
pub(crate) fn comment(h: &mut String, indent: &str, doc: &str) {
    let lines = crate::wrap(doc, 92 - indent.len());
    match lines.as_slice() {
        [] => {}
        [one] => {
            let _ = writeln!(h, "{indent}/* {one} */");
        }
        more => {
            let _ = writeln!(h, "{indent}/*");
            for l in more {
                let _ = writeln!(h, "{indent} * {l}");
            }
            let _ = writeln!(h, "{indent} */");
        }
    }
}

/// `listing` as a C enum of constants named `prefix` + the variant's name, each with its
/// doc on the line (or the lines) above it.
fn c_enum(h: &mut String, prefix: &str, listing: &Listing) {
    comment(h, "", listing.doc);
    h.push_str("enum {\n");
    for (name, code, doc) in listing.items {
        comment(h, "    ", doc);
        let _ = writeln!(h, "    {prefix}{} = {code},", screaming(name));
    }
    h.push_str("};\n\n");
}

fn define(h: &mut String, doc: &str, name: &str, value: impl std::fmt::Display) {
    comment(h, "", doc);
    let _ = writeln!(h, "#define {name} {value}\n");
}

/// runtime.h's defines of a kernel's stack on the device.
fn stack_defines(h: &mut String) {
    define(
        h,
        "A core's stack on the device: 4196 bytes unless the build says -DSTACK_SIZE=N, at \
         most 4 MiB (the shipped library's stack_switch.hpp). bind.hpp refuses more at \
         compile time.",
        "NT_CUSTOMOP_STACK_DEFAULT",
        c::STACK_DEFAULT,
    );
    define(h, "", "NT_CUSTOMOP_STACK_MAX", c::STACK_MAX);
    define(
        h,
        "The HBM stack switched to: its top aligned down to this, less the saved context.",
        "NT_CUSTOMOP_STACK_SWITCH_ALIGN",
        c::STACK_SWITCH_ALIGN,
    );
    define(
        h,
        "",
        "NT_CUSTOMOP_STACK_SWITCH_CONTEXT",
        c::STACK_SWITCH_CONTEXT,
    );
    define(
        h,
        "A core's physical local memory, which holds its own stack: that stack's room is less.",
        "NT_CUSTOMOP_CORE_DRAM",
        c::CORE_DRAM,
    );
}

/// The constants and enums of runtime.h.
#[must_use]
pub fn runtime_h() -> String {
    let mut h = String::new();
    h.push_str(
        "/* The codes and limits below are the runtime's (sdk/runtime/src/base/codes.rs). */\n\n",
    );
    stack_defines(&mut h);
    define(
        &mut h,
        "get_cpu_count() on one core: the device's parallel.o says 8 whatever the build.",
        "NT_CUSTOMOP_DEVICE_CPU_COUNT",
        c::DEVICE_CPU_COUNT,
    );
    define(
        &mut h,
        "Most dimensions of a tensor.",
        "NT_CUSTOMOP_MAX_DIMS",
        c::MAX_DIMS,
    );
    define(
        &mut h,
        "Bytes of a core's TCM pool (the device's dataram heap).",
        "NT_CUSTOMOP_TCM_POOL_BYTES",
        c::TCM_POOL_BYTES,
    );
    define(
        &mut h,
        "The alignment of a TCM block when none is asked.",
        "NT_CUSTOMOP_TCM_ALIGN",
        c::TCM_ALIGN,
    );
    define(
        &mut h,
        "A core's C heap (a kernel's malloc and new), set up before each call; its alignment.",
        "NT_CUSTOMOP_C_HEAP_BYTES",
        c::C_HEAP_BYTES,
    );
    define(&mut h, "", "NT_CUSTOMOP_C_HEAP_ALIGN", c::C_HEAP_ALIGN);
    define(
        &mut h,
        "The byte a TCM block's slack is filled with (a store there is found when it is freed).",
        "NT_CUSTOMOP_TCM_SLACK",
        format!("{:#04x}", c::TCM_SLACK),
    );
    define(
        &mut h,
        "Bytes of a stream accessor's buffer in TCM.",
        "NT_CUSTOMOP_STREAM_BUFFER_BYTES",
        c::STREAM_BUFFER_BYTES,
    );
    define(
        &mut h,
        "The most arguments a call through nt_customop_run takes.",
        "NT_CUSTOMOP_MAX_CALL_ARGS",
        c::MAX_CALL_ARGS,
    );
    for (prefix, listing) in [
        ("NT_CUSTOMOP_ARG_", ArgKind::LISTING),
        ("NT_CUSTOMOP_ACCESSOR_", AccessorKind::LISTING),
        ("NT_CUSTOMOP_POLICY_", Policy::LISTING),
        ("NT_CUSTOMOP_FILL_", Fill::LISTING),
        ("NT_CUSTOMOP_OP_", Op::LISTING),
        ("NT_CUSTOMOP_PARAM_", Param::LISTING),
        ("NT_CUSTOMOP_STATS_", Stats::LISTING),
        ("NT_CUSTOMOP_EXIT_", ExitStatus::LISTING),
        ("NT_CUSTOMOP_DTYPE_", DType::LISTING),
    ] {
        c_enum(&mut h, prefix, &listing);
    }
    ops_lists(&mut h);
    dtype_table(&mut h);
    h
}

/// The element types' table (the runtime's `DTYPES`), which c10/core/ScalarType.h expands.
fn dtype_table(h: &mut String) {
    let row = |r: &c::DTypeRow| {
        let integral = u8::from(r.integral);
        format!("{:?}, {}, {}, {integral}", r.dtype, r.cxx, r.size)
    };
    x_macro(
        h,
        "The element types: X(name, C++ type in c10, bytes, integral).",
        "NT_CUSTOMOP_DTYPE_TABLE",
        &c::DTYPES.iter().map(row).collect::<Vec<_>>(),
    );
}

/// A macro `name(X)` that applies `X` to each entry.
fn x_macro(h: &mut String, doc: &str, name: &str, entries: &[String]) {
    comment(h, "", doc);
    let _ = writeln!(h, "#define {name}(X) \\");
    for (k, e) in entries.iter().enumerate() {
        let end = if k + 1 == entries.len() { "" } else { " \\" };
        let _ = writeln!(h, "    X({e}){end}");
    }
    h.push('\n');
}

/// The operations by the overloads ops.hpp declares for them.
fn ops_lists(h: &mut String) {
    let code = |op: Op| format!("NT_CUSTOMOP_OP_{}", screaming(&format!("{op:?}")));
    let side = |tensor: bool| if tensor { "Tensor" } else { "Scalar" };
    let (mut unary, mut binary, mut alpha, mut clamp) = (vec![], vec![], vec![], vec![]);
    for &op in Op::ALL {
        let (name, code) = (op.name(), code(op));
        match op.form() {
            Form::Unary => unary.push(format!("{name}, {code}")),
            Form::Binary(pairs) => binary.extend(
                pairs
                    .iter()
                    .map(|&(a, b)| format!("{name}, {code}, {}, {}", side(a), side(b))),
            ),
            Form::Alpha => {
                alpha.extend([true, false].map(|other| format!("{name}, {code}, {}", side(other))))
            }
            Form::Clamp => clamp.push(format!("{name}, {code}")),
        }
    }
    x_macro(
        h,
        "The operations of one tensor: X(name, code).",
        "NT_CUSTOMOP_UNARY_OPS",
        &unary,
    );
    x_macro(
        h,
        "The operations of two operands, one overload each: X(name, code, A, B), A and B \
         Tensor or Scalar.",
        "NT_CUSTOMOP_BINARY_OPS",
        &binary,
    );
    x_macro(
        h,
        "self + alpha * other and the like: X(name, code, B), other a B (Tensor or Scalar).",
        "NT_CUSTOMOP_ALPHA_OPS",
        &alpha,
    );
    x_macro(
        h,
        "op(self, min, max): X(name, code).",
        "NT_CUSTOMOP_CLAMP_OPS",
        &clamp,
    );
}

/// sdk/device/protocol.h.
#[must_use]
pub fn protocol_h() -> String {
    let mut h = String::from(
        "/*\n * The device runtime's requests to the runner (ntx op run --device): a kernel built for\n \
         * the Q7 runs under qemu-xtensa and asks the runner's core process for what the host\n \
         * runtime does (checks, tensors, operations, reports) over a socket, fd NT_DEVICE_FD_RPC.\n \
         * sdk/runtime/src/run/device/answer.rs answers them.\n *\n \
         * Generated from the runtime's codes (sdk/runtime/src/base/codes.rs) by `make header`;\n \
         * do not edit. `make test` fails when this copy is stale.\n */\n\
         #ifndef NT_DEVICE_PROTOCOL_H\n#define NT_DEVICE_PROTOCOL_H\n\n#include <stdint.h>\n\n",
    );
    c_enum(&mut h, "NT_DEVICE_FD_", &DeviceFd::LISTING);
    crate::wire::requests(&mut h);
    crate::wire::structs(&mut h);
    c_enum(&mut h, "NT_DEVICE_", &PrintPiece::LISTING);
    c_enum(&mut h, "NT_DEVICE_UB_", &Undefined::LISTING);
    c_enum(&mut h, "NT_DEVICE_EXIT_", &DeviceExit::LISTING);
    h.push_str("#endif /* NT_DEVICE_PROTOCOL_H */\n");
    h
}

/// `listing` as a Python `IntEnum`.
fn py_enum(p: &mut String, listing: &Listing) {
    let _ = writeln!(p, "\n\nclass {}(IntEnum):", listing.name);
    let _ = writeln!(p, "    \"\"\"{}\"\"\"\n", one_line(listing.doc));
    for (name, code, _) in listing.items {
        let _ = writeln!(p, "    {} = {code}", screaming(name));
    }
}

/// `_abi.py`: what the Python package reads of the runtime's codes.
#[must_use]
pub fn python() -> String {
    let mut p = String::from(
        "\"\"\"The runtime's codes and limits the package uses (sdk/runtime/src/base/codes.rs).\n\n\
         Generated by `make header` (tools/header); do not edit: `make test` fails when stale.\n\"\"\"\n\n\
         from enum import IntEnum\n\n",
    );
    let _ = writeln!(p, "PROTOCOL = {}", c::PROTOCOL);
    let _ = writeln!(
        p,
        "\"\"\"The server protocol's version this package speaks.\"\"\""
    );
    let _ = writeln!(
        p,
        "DEFAULT_TIMEOUT = {:.1}",
        c::DEFAULT_TIMEOUT.as_secs_f64()
    );
    let _ = writeln!(
        p,
        "\"\"\"Seconds a call may run unless told otherwise.\"\"\""
    );
    p.push_str("\n\nclass Tag:\n    \"\"\"The server's requests and a call argument's kinds, by their JSON tags.\"\"\"\n\n");
    for tag in c::SERVER_REQUESTS.iter().chain(&c::SERVER_ARGS) {
        let _ = writeln!(p, "    {} = \"{tag}\"", screaming(tag));
    }
    py_enum(&mut p, &DType::LISTING);
    py_enum(&mut p, &ExitStatus::LISTING);
    p.push_str("\n\nDTYPES = (\n");
    for r in &c::DTYPES {
        let _ = writeln!(
            p,
            "    (DType.{}, \"{}\", {}, \"{}\"),",
            screaming(&format!("{:?}", r.dtype)),
            r.name,
            r.size,
            r.npy
        );
    }
    p.push_str(")\n\"\"\"Each element type: its code, PyTorch's name (`torch.<name>`), bytes, `.npy` descriptor.\"\"\"\n");
    report_words(&mut p);
    p
}

/// The words of a report (`"kind"`, `"severity"`) and of the server's refusal for want of
/// HBM, as the runtime writes them.
fn report_words(p: &mut String) {
    use neuron_customop_host::base::misuse::{Kind, Severity};
    p.push_str("\n\nclass Kind:\n    \"\"\"A report's kind, as a report's `\"kind\"` names it (each constant its word).\"\"\"\n\n");
    for k in Kind::ALL {
        let constant = k.name().to_ascii_uppercase().replace('-', "_");
        let _ = writeln!(p, "    {constant} = \"{}\"", k.name());
    }
    p.push_str("\n\nclass Severity:\n    \"\"\"A report's severity, as a report's `\"severity\"` names it.\"\"\"\n\n");
    for s in [Severity::Error, Severity::Warning] {
        let word = serde_json::to_value(s).expect("a word");
        let _ = writeln!(p, "    {} = {word}", screaming(&format!("{s:?}")));
    }
    p.push_str("\n\nclass ParamWord:\n    \"\"\"A kernel parameter's kind, as the server's `Describe` names it.\"\"\"\n\n");
    let mut seen = Vec::new();
    for word in Param::ALL.iter().map(|p| p.word()) {
        if !seen.contains(&word) {
            seen.push(word);
            let _ = writeln!(p, "    {} = \"{word}\"", word.to_ascii_uppercase());
        }
    }
    let _ = writeln!(p, "\n\nHBM_FULL = \"{}\"", c::SERVER_HBM_FULL);
    p.push_str("\"\"\"The server's `\"kind\"` of a refusal for want of HBM.\"\"\"\n");
}
