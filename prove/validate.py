"""Translation validation of the shipped device object against docs/contract.md §3-§5.

For each function: every path of its machine code (prove/machine.py: SLEIGH semantics
through pypcode, z3) against the contract's cases (contract.py), written from the
contract's text and not from the Rust code. A path is proven when, under its path
condition and a case's condition, its outcome (return or trap), its return value and its
events (every store: address, value, width, in order; the barriers the contract requires)
are the case's (claims.py). A path the contract does not allow is refuted with a
counterexample: the table's bytes, the arguments and what differs, written as a
replayable vector. The registry of functions is functions.py, one unit's proof
driver.py, the process pool pool.py; this file is the command line.

usage: validate.py OBJECT --ld LD [--only NAME] [--first] [--jobs N] [--json OUT]

OBJECT is the relocatable device object; it is linked at fixed addresses (prove/link.ld,
hbm_scratch defined) with LD, GNU ld for Xtensa, before it is lifted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from driver import Config, link, setting
from functions import FUNCTIONS
from pool import figures, run_object, run_units, unit_figures


def main():
    p = argparse.ArgumentParser()
    p.add_argument("object")
    p.add_argument("--ld", required=True)
    p.add_argument("--json")
    p.add_argument("--only", action="append")
    p.add_argument("--unit", help="FUNCTION:GROUP: that one unit alone (what it rests on taken as proven); its figures as JSON")
    p.add_argument("--first", action="store_true")
    p.add_argument("--jobs", type=int, default=Config.jobs)
    p.add_argument("--seed", type=int, default=Config.seed, help="z3's random seed (smt and sat)")
    p.add_argument("--budget", type=int, default=Config.budget, help="each unit's solver budget, in rlimit units")
    p.add_argument("--guard", type=float, default=Config.guard, help="each unit's wall-clock guard against hangs, in seconds")
    a = p.parse_args()
    t0 = time.time()
    config = Config(seed=a.seed, budget=a.budget, guard=a.guard, jobs=a.jobs, first=a.first)
    if a.unit:
        name, _, group = a.unit.partition(":")
        with tempfile.TemporaryDirectory() as d:
            elf = os.path.join(d, "translation.elf")
            link(a.object, a.ld, elf)
            if name not in FUNCTIONS or group not in setting(elf, name).groups:
                p.error(f"no unit {a.unit}: the units are FUNCTION:GROUP, with the groups of --json's units")
            part = run_units([(elf, name, group)], config)[0]
        print(json.dumps({"function": name, "group": group, "proven": part["proven"], **unit_figures(part)}))
        sys.exit(0 if part["proven"] else 1)
    print(
        f"prove: z3 seed {config.seed}, PYTHONHASHSEED {os.environ.get('PYTHONHASHSEED', '0')},"
        f" {config.budget} rlimit a unit, {config.jobs} processes",
        flush=True,
    )
    results = run_object(a.object, a.ld, a.only, config)
    ok = True
    for r in results:
        ok &= r["proven"]
        state = "PROVEN" if r["proven"] else "REFUTED" if any(not p["proven"] for p in r["paths"]) else "NOT PROVEN"
        print(f"{state}: {r['function']} ({figures(r)}; {len(r['cases'])} contract cases; {r['seconds']} s over its units)")
        if "error" in r:
            print(f"  not proven: {r['error']}")
        for path in r["paths"]:
            if not path["proven"]:
                print(f"  refuted: {path['refuted']}")
                if path["counterexample"]:
                    print(f"  counterexample: {json.dumps(path['counterexample'])}")
        for m in r["uncovered"]:
            print(f"  no path reaches: {m}")
    print(f"{'all proven' if ok else 'NOT PROVEN'}: {len(results)} functions in {time.time() - t0:.1f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
