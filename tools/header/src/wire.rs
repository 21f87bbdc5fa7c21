//! protocol.h's payloads, from the runtime's one table of them
//! (`neuron_customop_host::base::wire`): each payload as a packed C struct with its size
//! asserted, and each request's code with what it carries and is answered with.

use std::fmt::Write as _;

use neuron_customop_host::base::codes::{screaming, DeviceRequest};
use neuron_customop_host::base::wire::{exchange, Layout, LAYOUTS};

use crate::codes::comment;

/// Every payload's struct, packed (the wire has no padding), each with its size asserted.
pub fn structs(h: &mut String) {
    comment(
        h,
        "",
        "The payloads: each field little-endian, in order, with no padding (packed).",
    );
    h.push('\n');
    for l in LAYOUTS {
        comment(h, "", l.doc);
        let _ = writeln!(h, "struct nt_device_{} {{", l.c_name);
        for f in l.fields {
            match f.count {
                0 => writeln!(h, "    {} {};", f.c_type, f.name),
                n => writeln!(h, "    {} {}[{n}];", f.c_type, f.name),
            }
            .expect("a String takes any text");
        }
        h.push_str("} __attribute__((packed));\n");
        let _ = writeln!(
            h,
            "_Static_assert(sizeof(struct nt_device_{0}) == {1}, \"struct nt_device_{0}: {1} bytes on the wire\");\n",
            l.c_name, l.bytes
        );
    }
}

/// What a request's or an answer's payload is, in words.
fn payload(layout: Option<Layout>, tail: &str) -> String {
    match (layout, tail) {
        (None, "") => "nothing".into(),
        (None, tail) => tail.into(),
        (Some(l), "") => format!("struct nt_device_{}", l.c_name),
        (Some(l), tail) => format!("struct nt_device_{}, then {tail}", l.c_name),
    }
}

/// The requests' codes, each with its doc and its exchange.
pub fn requests(h: &mut String) {
    let listing = DeviceRequest::LISTING;
    comment(h, "", listing.doc);
    h.push_str("enum {\n");
    for (k, (name, code, doc)) in listing.items.iter().enumerate() {
        let x = exchange(DeviceRequest::ALL[k]);
        let words = format!(
            "{} Asks: {}. Answered with: {}.",
            doc.trim_end(),
            payload(x.ask, x.ask_tail),
            payload(x.answer, x.answer_tail)
        );
        comment(h, "    ", &words);
        let _ = writeln!(h, "    NT_DEVICE_{} = {code},", screaming(name));
    }
    h.push_str("};\n\n");
}
