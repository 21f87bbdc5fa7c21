//! An op's schema as PyTorch sees it, `relu_forward(Tensor input) -> Tensor`: what the
//! Python package defines through `torch.library` and `ntx op schema` prints. The argument
//! names are the kernel's parameters' (from the program's debug information) where each is
//! a name Python takes and they differ; else `a0`, `a1`, ...

use crate::base::codes::Param;

/// Python's keywords, which no argument may be named.
const PYTHON_KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// The schema's type of a parameter.
pub fn type_of(p: Param) -> &'static str {
    match p {
        Param::Tensor => "Tensor",
        Param::Int | Param::Int32 => "int",
        Param::Double | Param::Float32 => "float",
        Param::Scalar => "Scalar",
    }
}

/// Whether `n` is a name Python takes for an argument (an identifier, no keyword, not
/// `out`, which PyTorch keeps for out= variants).
fn python_name(n: &str) -> bool {
    let mut chars = n.chars();
    let first = chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic());
    first
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !PYTHON_KEYWORDS.contains(&n)
        && n != "out"
}

/// The argument names for `count` parameters from the kernel's `names`, if it has them.
pub fn arg_names(names: Option<&[String]>, count: usize) -> Vec<String> {
    if let Some(names) = names.filter(|n| n.len() == count) {
        let mut distinct: Vec<&String> = names.iter().collect();
        distinct.sort();
        distinct.dedup();
        if distinct.len() == count && names.iter().all(|n| python_name(n)) {
            return names.to_vec();
        }
    }
    (0..count).map(|k| format!("a{k}")).collect()
}

/// Op `name`'s schema, its parameters `params` named from `names`.
pub fn schema(name: &str, params: &[Param], names: Option<&[String]>) -> String {
    let args: Vec<String> = params
        .iter()
        .zip(arg_names(names, params.len()))
        .map(|(p, n)| format!("{} {n}", type_of(*p)))
        .collect();
    format!("{name}({}) -> Tensor", args.join(", "))
}

#[cfg(test)]
mod tests {
    use super::{arg_names, schema};
    use crate::base::codes::Param;

    #[test]
    fn names_pytorch_would_refuse_fall_back_to_positions() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(arg_names(Some(&names(&["x", "y"])), 2), ["x", "y"]);
        for bad in [
            &["x", "x"][..],
            &["x", "out"],
            &["x", "lambda"],
            &["x", ""],
            &["x"],
            &["x", "1y"],
        ] {
            assert_eq!(arg_names(Some(&names(bad)), 2), ["a0", "a1"], "{bad:?}");
        }
        assert_eq!(arg_names(None, 2), ["a0", "a1"]);
        let s = schema(
            "scale",
            &[Param::Tensor, Param::Float32, Param::Int, Param::Scalar],
            Some(&names(&["x", "factor", "n", "alpha"])),
        );
        assert_eq!(
            s,
            "scale(Tensor x, float factor, int n, Scalar alpha) -> Tensor"
        );
    }
}
