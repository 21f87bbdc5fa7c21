#!/usr/bin/env bash
# `make prove`: the validator on the device object, then the mutants, each to be refuted.
# The result (target/prove/: out.txt, result.json, mutants/) is kept with the key it was
# proven under, the hash of the object, the validator's files and the seeds: with the same
# key, the run is not repeated.
#
# usage: prove/prove.sh OBJECT VALIDATOR-FILE...
#   (PROVE_PY, XTENSA_LD, PROVE_JOBS, PROVE_SEED, PYTHONHASHSEED from the Makefile)
set -euo pipefail
: "${PROVE_PY:?}" "${XTENSA_LD:?}" "${PROVE_JOBS:?}" "${PROVE_SEED:?}" "${PYTHONHASHSEED:?}"
root=$(cd "$(dirname "$0")/.." && pwd)
name=$1
obj=$(realpath "$1")
shift
py=$(realpath -s "$PROVE_PY")  # -s: the environment's link, not the interpreter behind it
out=$root/target/prove
key=$({ cat "$obj" "$@"; echo "z3 seed $PROVE_SEED, PYTHONHASHSEED $PYTHONHASHSEED"; } | sha256sum | cut -c1-16)
if [ -f "$out/key" ] && [ "$(cat "$out/key")" = "$key" ] && [ -f "$out/out.txt" ]; then
    cat "$out/out.txt"
    echo "prove: the same object, validator and seeds were proven before (target/prove, key $key)"
    exit 0
fi
rm -rf "$out"
mkdir -p "$out"
start=$SECONDS
echo "prove: every path of $name against docs/contract.md §3-§5"
(cd "$root/prove" && "$py" validate.py "$obj" --ld "$XTENSA_LD" --jobs "$PROVE_JOBS" --seed "$PROVE_SEED" \
    --json "$out/result.json") | tee "$out/out.txt"
echo "prove: mutants of the object, each to be refuted" | tee -a "$out/out.txt"
(cd "$root/prove" && "$py" mutants.py "$obj" --ld "$XTENSA_LD" --jobs "$PROVE_JOBS" --seed "$PROVE_SEED" \
    --out "$out/mutants") | tee -a "$out/out.txt"
echo "prove: proof and mutants in $((SECONDS - start)) s"
echo "$key" > "$out/key"
