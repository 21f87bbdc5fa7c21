#!/usr/bin/env bash
# Builds the device object from the library's source. Called by `make xtensa`, which sets
# every tool variable (the Makefile is the one place tool paths and flags live).
#
#   1. rustc (a toolchain with the Xtensa backend and core's sources) compiles the crate for
#      xtensa/xtensa-ncore2gp-none-elf.json to *assembly*: the integrated assembler path
#      misplaces l32r literal pools (docs/toolchain.md, fact 2).
#   2. The assembly, xtensa/trap.s, xtensa/lookup.s (the lookup, written by hand) and
#      xtensa/xtensa_info.s are assembled together into one object by xtensa/assemble.sh (llvm-mc, then 4-byte alignment for literal sections).
#      Rust-mangled symbols (`_R...`) are made local: no C or C++ consumer can name them,
#      and rustc exports a helper that generic code reaches (cut_before_member) as global.
#   3. The object is archived (with a symbol index) and disassembled.
set -euo pipefail

: "${XTENSA_CARGO:?}" "${XTENSA_RUSTC:?}" "${XTENSA_MATTR:?}" "${LLVM_MC:?}" "${LLVM_OBJCOPY:?}"
: "${LLVM_OBJDUMP:?}" "${LLVM_AR:?}" "${XTENSA_TARGET_DIR:?}" "${XTENSA_OUT:?}"

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
spec="$here/xtensa-ncore2gp-none-elf.json"
work="$XTENSA_TARGET_DIR/obj"
mkdir -p "$work" "$XTENSA_OUT"

# Progress on stderr: the first build compiles core from source and takes minutes.
t0=$SECONDS
step() { echo "xtensa [$1/3] $2" >&2; }
done_step() { echo "xtensa [$1/3] done ($((SECONDS - t0)) s so far)" >&2; }

# -Zbuild-std needs nightly features; RUSTC_BOOTSTRAP=1 unlocks them on a stable toolchain.
# codegen-units=1 for this crate only (one assembly file); core keeps its defaults (LLVM
# crashes building core with one codegen unit at opt-level 3: docs/toolchain.md, fact 3).
# Cargo's own "Compiling core / compiler_builtins / neuron-translate" lines say how far it is.
step 1 "rustc to assembly: core and compiler_builtins from source (-Zbuild-std; minutes on a first build), then the crate"
RUSTC_BOOTSTRAP=1 RUSTC="$XTENSA_RUSTC" "$XTENSA_CARGO" rustc \
    --manifest-path "$root/Cargo.toml" -p neuron-translate --release --locked \
    -Zbuild-std=core -Zjson-target-spec --target "$spec" \
    --target-dir "$XTENSA_TARGET_DIR" --crate-type lib \
    -- --emit="asm=$work/translation.rs.s" -C codegen-units=1 -C debuginfo=0 \
       -C force-unwind-tables=no

done_step 1

step 2 "assembling translation.o (llvm-mc, literal sections aligned)"
cat "$work/translation.rs.s" "$here/trap.s" "$here/lookup.s" "$here/xtensa_info.s" > "$work/translation.s"
"$here/assemble.sh" "$work/translation.s" "$work/translation.o"
"$LLVM_OBJCOPY" --wildcard --localize-symbol='_R*' "$work/translation.o" "$XTENSA_OUT/translation.o"
done_step 2

step 3 "archive and disassembly"

rm -f "$XTENSA_OUT/libneuron_translate.a"
"$LLVM_AR" rcs "$XTENSA_OUT/libneuron_translate.a" "$XTENSA_OUT/translation.o"
"$LLVM_OBJDUMP" -dr --mattr="$XTENSA_MATTR" "$XTENSA_OUT/translation.o" \
    > "$XTENSA_OUT/translation.lst"
done_step 3
