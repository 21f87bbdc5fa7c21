"""Proving one unit (a function's group of cases): link the object at fixed addresses,
lift it, explore its paths and check each (claims.py) under the run's Config."""

from __future__ import annotations

import dataclasses
import functools
import gc
import os
import subprocess
import threading
import time

import z3
from claims import Facts, Refuted, check_path, counterexample, merge, replay_constraints, sat_model
from contract import CALLER_SP, HBM_SCRATCH, STACK, Args, local_symbol
from explore import run_function
from functions import FUNCTIONS
from lift import ExecError, Image, Lifter
from solving import Budget, OverBudget


@dataclasses.dataclass(frozen=True)
class Config:
    """How a run proves: z3's random seed, each unit's resource budget (rlimit, summed
    over its queries), the wall-clock guard against hangs (seconds; it decides nothing),
    the processes, and whether to stop at the first refuted path (for mutants)."""

    seed: int = 0
    budget: int = 60_000_000_000
    guard: float = 900.0
    jobs: int = 1
    first: bool = False


HBM_SCRATCH_AT = 0x3FF0_0000
HERE = os.path.dirname(os.path.abspath(__file__))


def link(obj: str, ld: str, out: str):
    """The object at the fixed addresses of prove/link.ld, hbm_scratch defined."""
    subprocess.run(
        [ld, "-e", "0", "-T", os.path.join(HERE, "link.ld"), f"--defsym={HBM_SCRATCH}={HBM_SCRATCH_AT:#x}", obj, "-o", out],
        check=True,
    )


@functools.cache
def load(elf: str):
    """The linked image and its lifter, once per process."""
    image = Image(elf)
    return image, Lifter(image)


@functools.cache
def setting(elf: str, name: str) -> Setting:
    """A function's setting, once per process (its cases are built once for all its units)."""
    return Setting(elf, name)


class Setting:
    """One function's proof setting, from its registry entry: its symbol, arguments,
    memory, contract cases (by group), precondition, the summaries its calls may take."""

    def __init__(self, elf: str, name: str):
        image, self.lifter = load(elf)
        self.image, self.name = image, name
        self.fn = fn = FUNCTIONS[name]
        self.sym = fn.symbol or local_symbol(image, name)
        self.entry = image.symbols[self.sym][0]
        self.mem = mem = z3.Array("M0", z3.BitVecSort(32), z3.BitVecSort(8))
        self.args = args = Args(["a2", "a4", "a5", "a6", "a7"])
        contract = fn.contract(mem, args, image)
        self.cases, self.summaries = contract.cases, contract.summaries
        self.groups: dict = {}
        for c in self.cases:
            self.groups.setdefault(c.group, []).append(c)
        self.replay = replay_constraints(fn, mem, args)
        self.precondition = fn.precondition(mem, args)

    def setup(self, s):
        for r in ["a2", "a4", "a5", "a6", "a7"]:
            s.set_reg_name(r, self.args[r])
        s.set_reg_name("a0", z3.BitVecVal(0x8000_0000, 32))  # a caller's return address
        s.set_reg_name("a1", z3.BitVecVal(CALLER_SP, 32))  # its stack


def unit_name(name: str, group: str) -> str:
    return f"{name} [{group or 'all cases'}]"


def prove_unit(elf: str, name: str, group: str, config: Config) -> dict:
    """Proves one group of a function's cases (every path that can meet them); the first
    group's unit also checks that the cases partition the inputs. A function whose cases
    are grouped is explored once per group, under the group's condition (the union of its
    cases'): then each exploration follows only the paths of its cases, and the values
    merged along them stay small.

    Run in a process of its own (run_units), so that nothing of another unit's solving
    (z3's terms, its caches) shapes this one's: the same unit does the same work in any
    run, on any machine, under any load."""
    t0 = time.time()
    z3.set_param("smt.random_seed", config.seed)
    z3.set_param("sat.random_seed", config.seed)
    unit = unit_name(name, group)
    print(f"  unit {unit}: start", flush=True)
    budget = Budget(config.budget, unit=unit)

    def guard():
        budget.guarded = True
        z3.main_ctx().interrupt()

    watchdog = threading.Timer(config.guard, guard)
    watchdog.daemon = True
    watchdog.start()
    st = setting(elf, name)
    result = {"function": name, "symbol": st.sym, "group": group, "paths": [], "proven": True, "explored_paths": 0, "covered": []}
    try:
        prove_group(st, group, Facts(budget, st.mem, st.precondition, st.replay), result, config.first)
    except (ExecError, OverBudget) as e:
        result.update(proven=False, error=str(e))
    finally:
        watchdog.cancel()
        # The process ends with the unit: what it lifted goes before the interpreter's
        # shutdown (pypcode's bindings report objects still alive then as leaks).
        setting.cache_clear()
        load.cache_clear()
        del st
        gc.collect()
    result.update(rlimit=budget.used, queries=budget.queries, seconds=round(time.time() - t0, 2))
    state = "proven" if result["proven"] else "NOT PROVEN"
    print(
        f"  unit {unit}: {state}, {result['explored_paths']} paths, {budget.queries} queries,"
        f" {budget.used} rlimit, {result['seconds']} s",
        flush=True,
    )
    return result


def prove_group(st: Setting, group: str, solver: Facts, result: dict, first: bool):
    """prove_unit's work, into `result`."""
    mem, args, image, name = st.mem, st.args, st.image, st.name
    group_cases = st.groups[group]
    if group == next(iter(st.groups)):
        # The cases partition the inputs (checked: nothing falls outside them all).
        gap = sat_model(solver, [z3.Not(z3.Or(*[c.cond for c in st.cases]))], "inputs no case covers")
        if gap is not None:
            result["proven"] = False
            result["paths"].append(
                {
                    "outcome": "none",
                    "proven": False,
                    "refuted": "inputs no case of the contract covers",
                    "counterexample": counterexample(gap, mem, args, st.fn, image),
                }
            )
    covered = set()
    given = st.fn.given(args) if st.fn.given else []
    assume = tuple(given + ([z3.Or(*[c.cond for c in group_cases])] if group else []))
    outcomes = run_function(
        st.lifter,
        st.entry,
        st.setup,
        mem,
        stack=STACK,
        merge_values=bool(group),
        assume=assume,
        bases=(args["a2"],),
        summaries=st.summaries,
        word_aliasing=st.fn.given is not None,
        budget=solver.budget,
    )
    result["explored_paths"] += len(outcomes)
    for out in merge(outcomes):
        try:
            met = check_path(solver, out, group_cases, name)
            covered.update(met)
            result["paths"].append({"outcome": out.kind, "cases": met, "proven": True})
        except Refuted as r:
            result["proven"] = False
            cx = counterexample(r.model, mem, args, st.fn, image)
            if cx is not None:
                cx.update(r.shown)
            result["paths"].append({"outcome": out.kind, "proven": False, "refuted": r.what, "counterexample": cx})
            if first:
                break
    # Every case of the contract is reached by some path (nothing is unreachable that
    # the contract says happens).
    if result["proven"]:
        missing = [
            c.name
            for c in group_cases
            if c.name not in covered and sat_model(solver, [c.cond], f"whether {c.name} can happen") is not None
        ]
        if missing:
            result["proven"] = False
            result["uncovered"] = missing
    result["covered"] = sorted(covered)
