//! Suppression files: a pipeline accepts a known difference explicitly, with a reason, and
//! the finding is still listed (as suppressed).
//!
//! ```toml
//! [[suppress]]
//! kind = "symbol-added"              # a finding kind (abi-tests/README.md)
//! symbol = "neuron_translate_span"   # a glob (`*`, `?`, `[...]`) on the ELF or demangled name
//! reason = "our addition; docs/compatibility.md"   # required, not blank
//! ```
//!
//! A finding that names no symbol (`e_flags`, `xtensa-abi`) is matched by `symbol = "*"`.

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind};
use crate::finding::{Finding, FindingKind};

/// One rule of a suppression file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// The finding kind it applies to.
    pub kind: FindingKind,
    /// The glob the symbol must match.
    pub symbol: String,
    /// Why the difference is accepted.
    pub reason: String,
    #[serde(skip)]
    pattern: glob::Pattern,
}

impl Rule {
    /// Whether this rule covers `f`.
    pub fn matches(&self, f: &Finding) -> bool {
        if f.kind != self.kind {
            return false;
        }
        let names = [f.symbol.as_deref(), f.demangled.as_deref()];
        if f.symbol.is_none() {
            return self.pattern.matches("");
        }
        names.into_iter().flatten().any(|n| self.pattern.matches(n))
    }
}

/// A parsed suppression file.
#[derive(Debug, Clone, Default)]
pub struct Suppressions {
    /// The rules, in file order.
    pub rules: Vec<Rule>,
    /// Where they come from.
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileShape {
    #[serde(default)]
    suppress: Vec<RuleShape>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleShape {
    kind: FindingKind,
    symbol: String,
    reason: String,
}

impl Suppressions {
    /// Parses a suppression file's text; `source` names it in errors.
    pub fn parse(text: &str, source: &str) -> Result<Self, Error> {
        let bad = |m: String| Error::new(ErrorKind::BadSuppressions, source, m);
        let shape: FileShape = toml::from_str(text).map_err(|e| bad(e.message().to_string()))?;
        let mut rules = Vec::new();
        for (i, r) in shape.suppress.into_iter().enumerate() {
            let n = i + 1;
            if r.reason.trim().is_empty() {
                return Err(bad(format!(
                    "suppression #{n} ({} {}) has no reason; every accepted difference needs one",
                    r.kind, r.symbol
                )));
            }
            let pattern = glob::Pattern::new(&r.symbol).map_err(|e| {
                bad(format!(
                    "suppression #{n}: symbol pattern {:?} is not a glob: {e}",
                    r.symbol
                ))
            })?;
            rules.push(Rule {
                kind: r.kind,
                symbol: r.symbol,
                reason: r.reason.trim().to_string(),
                pattern,
            });
        }
        Ok(Suppressions {
            rules,
            source: source.to_string(),
        })
    }

    /// Reads and parses a suppression file.
    pub fn load(path: &std::path::Path) -> Result<Self, Error> {
        let source = path.display().to_string();
        let data = std::fs::read(path)
            .map_err(|e| Error::new(ErrorKind::Read, &source, format!("cannot read: {e}")))?;
        let text = String::from_utf8(data)
            .map_err(|_| Error::new(ErrorKind::BadSuppressions, &source, "not UTF-8 text"))?;
        Self::parse(&text, &source)
    }

    /// The first rule that covers `f`, with its index.
    pub fn find(&self, f: &Finding) -> Option<(usize, &Rule)> {
        self.rules.iter().enumerate().find(|(_, r)| r.matches(f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Class;

    fn finding(kind: FindingKind, symbol: Option<&str>) -> Finding {
        Finding {
            class: Class::Addition,
            kind,
            symbol: symbol.map(String::from),
            demangled: symbol.and_then(crate::model::demangle),
            reference: None,
            candidate: None,
            evidence: None,
            message: String::new(),
            suppressed: None,
        }
    }

    #[test]
    fn a_rule_matches_kind_and_glob_on_either_name() {
        let s = Suppressions::parse(
            "[[suppress]]\nkind = \"symbol-added\"\nsymbol = \"neuron_translate_*\"\nreason = \"ours\"\n\
             [[suppress]]\nkind = \"symbol-missing\"\nsymbol = \"neuron_translate(*\"\nreason = \"demangled\"\n\
             [[suppress]]\nkind = \"e_flags\"\nsymbol = \"*\"\nreason = \"any\"\n",
            "s.toml",
        )
        .unwrap();
        let span = finding(FindingKind::SymbolAdded, Some("neuron_translate_span"));
        assert_eq!(s.find(&span).map(|(i, _)| i), Some(0));
        // Same symbol, another kind: not covered.
        assert!(s
            .find(&finding(
                FindingKind::SymbolType,
                Some("neuron_translate_span")
            ))
            .is_none());
        // The demangled name is matched too.
        let t = finding(FindingKind::SymbolMissing, Some("_Z16neuron_translatePvy"));
        assert_eq!(s.find(&t).map(|(i, _)| i), Some(1));
        assert_eq!(
            s.find(&finding(FindingKind::EFlags, None)).map(|(i, _)| i),
            Some(2)
        );
        // A named pattern does not cover a finding without a symbol.
        let named = Suppressions::parse(
            "[[suppress]]\nkind = \"e_flags\"\nsymbol = \"x\"\nreason = \"r\"\n",
            "s",
        )
        .unwrap();
        assert!(named.find(&finding(FindingKind::EFlags, None)).is_none());
    }

    #[test]
    fn bad_files_are_errors_that_say_why() {
        for (text, says) in [
            (
                "[[suppress]]\nkind = \"symbol-added\"\nsymbol = \"x\"\nreason = \"  \"\n",
                "has no reason",
            ),
            (
                "[[suppress]]\nkind = \"symbol-added\"\nsymbol = \"x\"\n",
                "missing field `reason`",
            ),
            (
                "[[suppress]]\nkind = \"symbol-gone\"\nsymbol = \"x\"\nreason = \"r\"\n",
                "unknown variant `symbol-gone`",
            ),
            (
                "[[suppress]]\nkind = \"symbol-added\"\nsymbol = \"[x\"\nreason = \"r\"\n",
                "is not a glob",
            ),
            (
                "[[suppress]]\nkind = \"symbol-added\"\nsymbol = \"x\"\nreason = \"r\"\nwhy = 1\n",
                "unknown field `why`",
            ),
            ("suppress = 3", "invalid type"),
        ] {
            let e = Suppressions::parse(text, "s.toml").unwrap_err();
            assert_eq!(e.kind, ErrorKind::BadSuppressions, "{text}");
            assert!(e.message.contains(says), "{text}: {}", e.message);
        }
    }
}
