//! The device's own compile of a kernel, which the host build is held to
//! (docs/customop-api.md, "Device parity"): the vendor builds every kernel with its clang 10
//! as `-std=c++14 -Os -Wall -Werror -Wno-c99-designator`. A kernel that compile refuses is
//! refused here too, on the host and on the emulated Q7, saying that the device refuses it;
//! one it builds is built. The device build (`op_device`) compiles with these flags, and
//! the host build first runs the same front end (the device's clang, target and headers)
//! with them, whatever compiler then builds the host program.
//!
//! The clang here is newer than the vendor's: the warnings it has under `-Wall` (or on by
//! default) that clang 10 did not are turned off ([`SINCE_CLANG10`]), so that nothing the
//! device builds is refused. Each has a snippet under sdk/tests/parity/since_clang10/ (its
//! first line names the warning): clang 22 gives that warning on it under `-Wall` and
//! clang 10's front end gives none (`make clang10-check`, opt-in: it installs libclang 10
//! from PyPI). The list is what was found, not a proof that no other warning differs.

/// The language the device compiles kernels as.
pub const STD: &str = "c++14";

/// The checks of operations undefined in C++ whose value the host and the device give
/// differently, on the device (`--device`): an integer division or remainder by zero (the
/// host would die of SIGFPE, the device gives a value: `integer-divide-by-zero`), a shift
/// by a negative amount or past its operand's width (x86 takes the amount modulo the width)
/// and a float converted to an integer that cannot hold it (x86's integer indefinite
/// against the Q7's saturation: `undefined-arithmetic`). A left shift of a negative value,
/// undefined in C++14 too, is not checked: both machines give the same bits. Each calls the
/// runtime's handler first, which reports it at the kernel's line and stops the core. Each
/// costs instructions only where such an operation is.
pub const DEVICE_CHECKS: &str =
    "-fsanitize=integer-divide-by-zero,shift-exponent,float-cast-overflow";

/// The same on the host, and signed integer overflow (`undefined-arithmetic`), which the
/// device's run does not check: its check is on every signed addition and product, and the
/// device's instruction counts must be the kernel's own.
pub const HOST_CHECKS: &str =
    "-fsanitize=integer-divide-by-zero,shift-exponent,float-cast-overflow,signed-integer-overflow";

/// What the host build of a kernel takes from the device besides its front end (the host
/// compiles with the SDK's clang, so a call's arguments are evaluated in the device's
/// order and the same code is accepted) and its data model (the SDK's pkg-config Cflags:
/// i386 with SSE arithmetic, `long double` as `double`, 8-byte aligned `double` and
/// `long long`): `char` unsigned, as on the Q7, and no fused multiply-add (the device's
/// clang computes `a * b + c` as two roundings; an author's `-march` could otherwise fuse
/// them here). What still differs (an invalid operation's NaN) is in docs/customop-api.md,
/// "Device parity".
pub const HOST_MODEL: [&str; 2] = ["-funsigned-char", CLANG10_FP_CONTRACT];

/// Clang 10's floating-point contraction for C++: none (`a * b + c` rounds twice). Clang 14
/// made `-ffp-contract=on` the default (its review D107589), which lets the optimizer fuse
/// (and fold constants as one rounding); the device's own compile (`--device`) and the host
/// build both say what clang 10 did.
pub const CLANG10_FP_CONTRACT: &str = "-ffp-contract=off";

/// The device's optimisation level.
pub const OPT: &str = "-Os";

/// The vendor's warning flags.
pub const WARNINGS: [&str; 3] = ["-Wall", "-Werror", "-Wno-c99-designator"];

/// Warnings clang 22 gives under `-Wall` or by default that clang 10 did not give, by the
/// name of the snippet under sdk/tests/parity/since_clang10/ that shows each.
pub const SINCE_CLANG10: [(&str, &str); 12] = [
    ("unused_but_set_variable", "unused-but-set-variable"),
    ("vla", "vla-cxx-extension"),
    ("bitwise_instead_of_logical", "bitwise-instead-of-logical"),
    ("non_c_typedef", "non-c-typedef-for-linkage"),
    ("nontrivial_memcall", "nontrivial-memcall"),
    (
        "single_bit_bitfield",
        "single-bit-bitfield-constant-conversion",
    ),
    ("unqualified_std_cast", "unqualified-std-cast-call"),
    ("tautological_negation", "tautological-negation-compare"),
    (
        "uninitialized_const_reference",
        "uninitialized-const-reference",
    ),
    ("free_nonheap_object", "free-nonheap-object"),
    ("deprecated_builtins", "deprecated-builtins"),
    ("compound_token_split", "compound-token-split-by-macro"),
];

/// The compiler flags of the device's compile, but the optimisation level: the vendor's
/// warnings, and each of [`SINCE_CLANG10`] off. `werror`: false for a build that opted out
/// (`--no-device-parity`), whose warnings stay warnings.
pub fn warning_flags(werror: bool) -> Vec<String> {
    let mut flags: Vec<String> = WARNINGS
        .iter()
        .filter(|f| werror || **f != "-Werror")
        .map(|f| f.to_string())
        .collect();
    flags.extend(SINCE_CLANG10.iter().map(|(_, w)| format!("-Wno-{w}")));
    flags
}

/// The line ntx adds where the compiler's words would puzzle: an error about the device's
/// accessor element, a proxy and not a `T&`.
pub const PROXY_HINT: &str = "note: on the device an accessor's element is a proxy \
(at::TensorElementReference), not a T&: it is read by converting it to T and written by `=` only. \
Write `float v = in[i]; out[i] = v + 1;` (not `out[i] += 1`, `out[i]++` or `out[i] = out[j]`), \
`std::max<float>(in[i], 0.f)`, `(float)in[i]` in a printf, and keep no `float &` or `float *` to an element.";

/// [`PROXY_HINT`] and a newline where the compiler's words are (or may be) about an
/// accessor's element: they name the proxy, or an operator it lacks (`out[i] += v` says
/// only "no viable overloaded '+='"); else nothing.
pub fn proxy_hint(stderr: &str) -> String {
    let about =
        stderr.contains("TensorElementReference") || stderr.contains("no viable overloaded '");
    if about {
        format!("{PROXY_HINT}\n")
    } else {
        String::new()
    }
}

/// The compiler's words on a source the device's compile refuses, with [`PROXY_HINT`] where
/// they are about the element proxy.
pub fn refusal(src: &std::path::Path, stderr: &str) -> String {
    format!(
        "{} does not compile as the device's build compiles it (-std={STD} {}): the device refuses it.\n{stderr}{}",
        src.display(),
        WARNINGS.join(" "),
        proxy_hint(stderr)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_hold_the_vendors_and_turn_off_the_newer_warnings() {
        let f = warning_flags(true);
        assert_eq!(&f[..3], ["-Wall", "-Werror", "-Wno-c99-designator"]);
        assert!(f.contains(&"-Wno-unused-but-set-variable".to_string()));
        assert_eq!(f.len(), 3 + SINCE_CLANG10.len());
        assert!(!warning_flags(false).contains(&"-Werror".to_string()));
    }

    #[test]
    fn each_newer_warning_has_its_snippet_and_each_snippet_its_warning() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../sdk/tests/parity/since_clang10");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut want: Vec<String> = SINCE_CLANG10
            .iter()
            .map(|(f, _)| format!("{f}.cpp"))
            .collect();
        want.sort();
        assert_eq!(files, want);
        for (file, warning) in SINCE_CLANG10 {
            let text = std::fs::read_to_string(dir.join(format!("{file}.cpp"))).unwrap();
            assert_eq!(
                text.lines().next(),
                Some(format!("// -W{warning}").as_str()),
                "{file}"
            );
        }
    }

    #[test]
    fn a_refusal_about_the_proxy_says_how_to_write_it() {
        let p = std::path::Path::new("k.cpp");
        let r = refusal(p, "k.cpp:3:9: error: cannot increment value of type 'at::TensorElementReference<float, false>'\n");
        assert!(r.starts_with("k.cpp does not compile as the device's build compiles it"));
        assert!(r.contains("the device refuses it"));
        assert!(r.ends_with(&format!("{PROXY_HINT}\n")));
        assert!(!refusal(p, "k.cpp:1:1: error: unknown type name 'x'\n").contains(PROXY_HINT));
    }
}
