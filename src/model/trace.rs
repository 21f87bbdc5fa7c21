//! The trace format: one translate call per line, written by the host model
//! (its `Machine::trace_to`) and replayed by `ntx simulate`.
//!
//! ```text
//! # neuron-translate trace 1
//! translate 0x4200123456
//! span 0x4200123456 4096
//! ```
//!
//! Blank lines and lines starting with `#` are ignored; numbers are decimal or `0x` hex.

use std::fmt;
use std::string::String;

/// The first line a writer puts in a trace.
pub const TRACE_HEADER: &str = "# neuron-translate trace 1";

/// One translate call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// `neuron_translate(ctx, addr)`.
    Translate(u64),
    /// `neuron_translate_span(ctx, addr, len, ..)`.
    Span(u64, u64),
}

impl Event {
    /// The address translated.
    pub fn addr(self) -> u64 {
        match self {
            Event::Translate(a) | Event::Span(a, _) => a,
        }
    }
}

impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Event::Translate(a) => write!(f, "translate {a:#x}"),
            Event::Span(a, n) => write!(f, "span {a:#x} {n}"),
        }
    }
}

fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Parses a trace; an error names the line (1-based) and what is wrong with it.
pub fn parse(text: &str) -> Result<std::vec::Vec<Event>, (usize, String)> {
    let mut out = std::vec::Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: std::vec::Vec<&str> = line.split_whitespace().collect();
        let bad = |m: &str| (i + 1, std::format!("{m}: {line:?}"));
        let ev = match words.as_slice() {
            ["translate", a] => Event::Translate(number(a).ok_or_else(|| bad("not an address"))?),
            ["span", a, n] => Event::Span(
                number(a).ok_or_else(|| bad("not an address"))?,
                number(n).ok_or_else(|| bad("not a length"))?,
            ),
            _ => return Err(bad("expected `translate ADDR` or `span ADDR LEN`")),
        };
        out.push(ev);
    }
    Ok(out)
}
