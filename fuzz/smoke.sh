#!/usr/bin/env bash
# `make fuzz-smoke`: each fuzz target for a bounded time from the committed corpus, into a
# scratch copy (the committed corpus stays as it is); any finding fails. Progress on the
# way: the build (nightly, AddressSanitizer: minutes on a first run) shows cargo's
# Compiling lines, each run libFuzzer's pulse lines (at every power of two of executions).
#
# usage: fuzz/smoke.sh build          the targets, alone (make fuzz-build)
#        fuzz/smoke.sh run TARGET...  the build (nothing to do when it is current), then the runs
#   (CARGO, FUZZ_TOOLCHAIN, FUZZ_SMOKE_RUNS ("target=executions ..."), FUZZ_SMOKE_SEED and
#   FUZZ_JOBS from the Makefile)
set -euo pipefail
: "${CARGO:?}" "${FUZZ_TOOLCHAIN:?}" "${FUZZ_SMOKE_RUNS:?}" "${FUZZ_SMOKE_SEED:?}" "${FUZZ_JOBS:?}"

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

mode=${1:?usage: fuzz/smoke.sh build | run TARGET...}
shift
n=$#
echo "fuzz-smoke [build] the targets (cargo +$FUZZ_TOOLCHAIN fuzz build -O, AddressSanitizer)" >&2
build_log="$root/target/fuzz-build.log"
if ! (cd "$root/fuzz" && watch "$build_log" '^\s*(Compiling|Finished)' "" -- \
        "$CARGO" "+$FUZZ_TOOLCHAIN" fuzz build -O); then
    tail -n 40 "$build_log" >&2
    echo "fuzz-smoke: the fuzz targets do not build" >&2
    exit 1
fi
[ "$mode" = build ] && exit 0
# runs_of TARGET: its executions in FUZZ_SMOKE_RUNS ("target=executions ..."); fails when absent.
runs_of() {
    local pair
    for pair in $FUZZ_SMOKE_RUNS; do
        if [ "${pair%%=*}" = "$1" ]; then
            echo "${pair#*=}"
            return 0
        fi
    done
    return 1
}
# One target's run: its log and its verdict (in target/fuzz-TARGET.status: ok, or why not).
smoke() {
    local t=$1 i=$2
    local corpus="$root/target/fuzz-corpus/$t" log="$root/target/fuzz-$t.log" status=0
    local runs
    if ! runs=$(runs_of "$t"); then
        echo "no executions given for it in FUZZ_SMOKE_RUNS" > "$root/target/fuzz-$t.status"
        return
    fi
    rm -rf "$corpus" && mkdir -p "$corpus" && cp "$root/fuzz/corpus/$t"/* "$corpus/"
    echo "fuzz-smoke [$i/$n] $t: $runs executions, seed $FUZZ_SMOKE_SEED" >&2
    (cd "$root/fuzz" && watch "$log" '^#[0-9]+[[:space:]]+pulse' "$t: " -- \
        "$CARGO" "+$FUZZ_TOOLCHAIN" fuzz run -O "$t" "$corpus" -- \
        -runs="$runs" -seed="$FUZZ_SMOKE_SEED" -print_final_stats=1) || status=$?
    grep -E 'Done [0-9]+ runs' "$log" | sed "s/^/  $t: /" >&2 || true
    if [ "$status" -ne 0 ] || grep -qE 'ERROR|panicked|deadly signal|Test unit written' "$log"; then
        echo "found a problem (status $status)" > "$root/target/fuzz-$t.status"
    else
        echo ok > "$root/target/fuzz-$t.status"
    fi
}

# The targets FUZZ_JOBS at a time, side by side (the Makefile sets each one's executions).
i=0
for t in "$@"; do
    i=$((i + 1))
    rm -f "$root/target/fuzz-$t.status"
    while [ "$(jobs -rp | wc -l)" -ge "$FUZZ_JOBS" ]; do wait -n || true; done
    smoke "$t" "$i" &
done
wait
failed=0
for t in "$@"; do
    verdict=$(cat "$root/target/fuzz-$t.status" 2>/dev/null || echo "did not finish")
    if [ "$verdict" != ok ]; then
        tail -n 60 "$root/target/fuzz-$t.log" >&2
        echo "fuzz-smoke: $t $verdict" >&2
        failed=1
    fi
done
[ "$failed" -eq 0 ] || exit 1
echo "fuzz-smoke: $n targets, no finding" >&2
