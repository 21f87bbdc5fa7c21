#!/usr/bin/env bash
# `make fuzz-smoke`: each fuzz target for a bounded time from the committed corpus, into a
# scratch copy (the committed corpus stays as it is); any finding fails. Progress on the
# way: the build (nightly, AddressSanitizer: minutes on a first run) shows cargo's
# Compiling lines, each run libFuzzer's pulse lines (at every power of two of executions).
#
# usage: fuzz/smoke.sh TARGET...   (FUZZ_TOOLCHAIN, FUZZ_SMOKE_SECONDS from the Makefile)
set -euo pipefail
: "${FUZZ_TOOLCHAIN:?}" "${FUZZ_SMOKE_SECONDS:?}"

root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$root/target"

# watch LOG PATTERN PREFIX -- CMD...: runs CMD with its output in LOG, showing the lines
# that match PATTERN as they come; returns CMD's status.
watch() {
    local log=$1 pattern=$2 prefix=$3
    shift 4
    "$@" > "$log" 2>&1 &
    local pid=$! status=0
    tail -n +1 --pid="$pid" -f "$log" 2>/dev/null \
        | grep --line-buffered -E "$pattern" | sed -u "s/^/  $prefix/" >&2 &
    local shower=$!
    wait "$pid" || status=$?
    wait "$shower" || true
    return "$status"
}

n=$#
echo "fuzz-smoke [build] $n targets (cargo +$FUZZ_TOOLCHAIN fuzz build -O, AddressSanitizer)" >&2
build_log="$root/target/fuzz-build.log"
if ! (cd "$root/fuzz" && watch "$build_log" '^\s*(Compiling|Finished)' "" -- \
        cargo "+$FUZZ_TOOLCHAIN" fuzz build -O); then
    tail -n 40 "$build_log" >&2
    echo "fuzz-smoke: the fuzz targets do not build" >&2
    exit 1
fi
i=0
for t in "$@"; do
    i=$((i + 1))
    corpus="$root/target/fuzz-corpus/$t"
    log="$root/target/fuzz-$t.log"
    rm -rf "$corpus" && mkdir -p "$corpus" && cp "$root/fuzz/corpus/$t"/* "$corpus/"
    echo "fuzz-smoke [$i/$n] $t for $FUZZ_SMOKE_SECONDS s" >&2
    status=0
    (cd "$root/fuzz" && watch "$log" '^#[0-9]+[[:space:]]+pulse' "$t: " -- \
        cargo "+$FUZZ_TOOLCHAIN" fuzz run -O "$t" "$corpus" -- \
        -max_total_time="$FUZZ_SMOKE_SECONDS" -print_final_stats=1) || status=$?
    grep -E 'Done [0-9]+ runs' "$log" | sed "s/^/  $t: /" >&2 || true
    if [ "$status" -ne 0 ] || grep -qE 'ERROR|panicked|deadly signal|Test unit written' "$log"; then
        tail -n 60 "$log" >&2
        echo "fuzz-smoke: $t found a problem (status $status)" >&2
        exit 1
    fi
done
echo "fuzz-smoke: $n targets, no finding" >&2
