"""Running units side by side, each in a fresh process of a pool, most expensive first, and
merging their results per function; the figures that must be the same in every run."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import tempfile

from driver import Config, link, prove_unit, setting
from functions import FUNCTIONS


def run_units(units: list, config: Config) -> list:
    """Each unit (elf, name, group) in a fresh process of its own, `config.jobs` at a time;
    the results in the order of `units`. With `config.first`, the units run one after the
    other and stop at the first that is refuted (the results so far)."""
    spawn = multiprocessing.get_context("spawn")
    # The workers are started with the hash seed the caller fixed (the Makefile's
    # PYTHONHASHSEED), or 0: nothing in a unit may depend on the hash order of a run.
    os.environ.setdefault("PYTHONHASHSEED", "0")
    with concurrent.futures.ProcessPoolExecutor(config.jobs, mp_context=spawn, max_tasks_per_child=1) as pool:
        if not config.first:
            # The slowest units first (the span's refills), so that the others fill the gaps.
            slow = sorted(units, key=lambda u: FUNCTIONS[u[1]].priority(u[2]))
            futures = {u: pool.submit(prove_unit, *u, config) for u in slow}
            return [futures[u].result() for u in units]
        parts = []
        for u in units:
            parts.append(pool.submit(prove_unit, *u, config).result())
            if not parts[-1]["proven"]:
                break
        return parts


def run(elf: str, only=None, config: Config | None = None, trusted=()):
    """Proves each function (or those named in `only`, and what their proofs rest on but
    `trusted`: proven elsewhere), in units of one group of cases each (run_units), under
    `config` (the defaults when None)."""
    config = config or Config()
    wanted = set(only or FUNCTIONS)
    wanted |= {dep for name in list(wanted) for dep in FUNCTIONS[name].depends if dep not in trusted}
    names = [n for n in FUNCTIONS if n in wanted]
    units = [(elf, n, g) for n in names for g in setting(elf, n).groups]
    parts = run_units(units, config)
    proven = {name: True for name in trusted}
    results = []
    for name in names:
        mine = [p for p in parts if p["function"] == name]
        if not mine:
            continue  # not reached: an earlier unit was refuted (config.first)
        r = {
            "function": name,
            "symbol": mine[0]["symbol"],
            "proven": all(p["proven"] for p in mine) and len(mine) == len(setting(elf, name).groups),
            "explored_paths": sum(p["explored_paths"] for p in mine),
            "paths": [path for p in mine for path in p["paths"]],
            "cases": sorted(c for p in mine for c in p["covered"]),
            "uncovered": [m for p in mine for m in p.get("uncovered", [])],
            "units": [{"group": p["group"], **unit_figures(p)} for p in mine],
            "rlimit": sum(p["rlimit"] for p in mine),
            "queries": sum(p["queries"] for p in mine),
            "seconds": round(sum(p["seconds"] for p in mine), 2),
        }
        errors = [p["error"] for p in mine if "error" in p]
        unproven = [dep for dep in FUNCTIONS[name].depends if not proven.get(dep)]
        if unproven:
            errors.append(f"its proof rests on {', '.join(unproven)}, which is not proven")
            r["proven"] = False
        if errors:
            r["error"] = "; ".join(errors)
        proven[name] = r["proven"]
        results.append(r)
    return results


def run_object(obj: str, ld: str, only=None, config: Config | None = None, trusted=()):
    """[run] on the relocatable `obj`, linked with `ld` first."""
    with tempfile.TemporaryDirectory() as d:
        elf = os.path.join(d, "translation.elf")
        link(obj, ld, elf)
        return run(elf, only, config, trusted)


def unit_figures(p: dict) -> dict:
    """A unit's figures (figures)."""
    return {
        "explored_paths": p["explored_paths"],
        "checked_paths": len(p["paths"]),
        "queries": p["queries"],
        "rlimit": p["rlimit"],
    }


def figures(r: dict) -> str:
    """What must be the same in every run with the same object, validator and seeds: the
    paths explored, the paths checked, the solver's work."""
    return f"{r['explored_paths']} paths explored, {len(r['paths'])} checked, {r['queries']} queries, {r['rlimit']} rlimit"
