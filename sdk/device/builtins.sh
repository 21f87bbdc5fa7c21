#!/usr/bin/env bash
# The device runtime's soft-float and integer routines (sdk/device/builtins): the
# compiler_builtins crate compiled for the device target to assembly (as xtensa/build.sh
# compiles the translation library: the integrated assembler misplaces literal pools), then
# assembled by xtensa/assemble.sh into OUT. In OUT, Rust's own symbols and every symbol the
# runtime's objects (RUNTIME_OBJECTS) already define are made local, so the runtime's
# definitions stay the ones linked; the core library functions the crate calls on a panic
# path (a division by zero in its integer helpers, say) are defined as traps (ILL): a kernel
# that reaches one dies with SIGILL instead of failing to link.
#
#   builtins.sh OUT RUNTIME_OBJECTS...   (the Makefile sets the tool variables)
set -euo pipefail
: "${XTENSA_CARGO:?}" "${XTENSA_RUSTC:?}" "${XTENSA_SPEC:?}" "${XTENSA_TARGET_DIR:?}" "${LLVM_NM:?}"
: "${LLVM_OBJCOPY:?}"
out=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work="${out%.o}.work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
RUSTC_BOOTSTRAP=1 RUSTC="$XTENSA_RUSTC" "$XTENSA_CARGO" rustc -q \
    --manifest-path "$here/builtins/Cargo.toml" -p compiler_builtins --release --locked \
    -Zbuild-std=core -Zjson-target-spec --target "$XTENSA_SPEC" \
    --target-dir "$XTENSA_TARGET_DIR/builtins" \
    -- --emit="asm=$work/builtins.s" -C codegen-units=1 -C debuginfo=0 -C force-unwind-tables=no -C llvm-args=-min-jump-table-entries=1000000
sed -i '/^\s*\.cfi_/d' "$work/builtins.s"
"$root/xtensa/assemble.sh" "$work/builtins.s" "$work/first.o"
# A trap for each symbol the crate needs and nothing here defines.
{
    echo "	.text"
    "$LLVM_NM" -u "$work/first.o" | awk '{print $2}' | while read -r sym; do
        printf '\t.global\t%s\n\t.type\t%s,@function\n\t.p2align\t2\n%s:\n\tentry\ta1, 32\n\till\n' \
            "$sym" "$sym" "$sym"
    done
} > "$work/traps.s"
cat "$work/builtins.s" "$work/traps.s" > "$work/all.s"
"$root/xtensa/assemble.sh" "$work/all.s" "$work/all.o"
local_args=(--wildcard --localize-symbol='_R*')
for sym in $("$LLVM_NM" -g --defined-only "$@" | awk 'NF == 3 {print $3}' | sort -u); do
    local_args+=("--localize-symbol=$sym")
done
"$LLVM_OBJCOPY" "${local_args[@]}" "$work/all.o" "$out"
