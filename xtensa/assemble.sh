#!/usr/bin/env bash
# usage: xtensa/assemble.sh IN.s OUT.o
#
# Assembles compiler-written Xtensa assembly the way that works around LLVM's literal-pool
# bug (docs/toolchain.md, fact 2): the integrated assembler of rustc and clang places
# l32r literal pools unaligned in the previous function's section; the stand-alone llvm-mc
# puts them in .literal.* sections, which this script then gives the 4-byte alignment l32r
# needs (llvm-mc leaves them 1-aligned). Tools come from the environment (the Makefile).
set -euo pipefail
: "${LLVM_MC:?}" "${LLVM_OBJCOPY:?}" "${LLVM_OBJDUMP:?}" "${XTENSA_MATTR:?}"
in=$1
out=$2
"$LLVM_MC" -triple=xtensa -mattr="$XTENSA_MATTR" -filetype=obj "$in" -o "$out.raw"
align_args=()
while read -r sec; do
    align_args+=("--set-section-alignment=$sec=4")
done < <("$LLVM_OBJDUMP" -h "$out.raw" | awk '$2 ~ /^\.literal/ { print $2 }')
"$LLVM_OBJCOPY" "${align_args[@]}" "$out.raw" "$out"
rm -f "$out.raw"
