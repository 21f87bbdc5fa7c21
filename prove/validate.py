"""Translation validation of the shipped device object against docs/contract.md §3-§5.

For each function: every path of its machine code (prove/machine.py: SLEIGH semantics
through pypcode, z3) against the contract's cases, written here from the contract's text
and not from the Rust code. A path is proven when, under its path condition and a case's
condition, its outcome (return or trap), its return value and its events (every store:
address, value, width, in order; the barriers the contract requires) are the case's. A
path the contract does not allow is refuted with a counterexample: the table's bytes, the
arguments and what differs, written as a replayable vector.

usage: validate.py OBJECT --ld LD [--only NAME] [--first] [--jobs N] [--json OUT]

OBJECT is the relocatable device object; it is linked at fixed addresses (prove/link.ld,
hbm_scratch defined) with LD, GNU ld for Xtensa, before it is lifted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import functools
import gc
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time

import machine as mx
import z3

# Table layout (docs/contract.md §2): records of 32 bytes at 0, next_alloc at 160.
RECORD, RECORDS, NEXT_ALLOC, CTX_SIZE = 32, 5, 160, 168
PTR, WINDOW, MASK, REG = 0, 8, 16, 24
REUSABLE = 3
# The NX register block (§5).
ENGINE_BASE_LO, ENGINE_BASE_HI = 0x0010_0028, 0x0010_002C
SBUF_BELOW = 41 << 20
# The initial table (§3): (window, mask, reg_location, initial tag source).
M16, M64 = 0xFFFF_FFFF_FF00_0000, 0xFFFF_FFFF_FC00_0000
INITIAL = [
    (0x0700_0000, M16, 0x0010_0218, "empty"),
    (0x0900_0000, M16, 0x0010_0228, "empty"),
    (0x0A00_0000, M16, 0x0010_0230, "empty"),
    (0x8000_0000, M64, 0, "sbuf"),
    (0x8400_0000, M64, 0, "hbm_scratch"),
]

HBM_SCRATCH = "_ZN12extended_isa3sdk11hbm_scratchE"
# The span's helper (a local function, Rust-mangled: found by its name's end), proven on its
# own and then taken at its word by the span's proof (cut_contract, cut_summary).
HELPER = "cut_before_member"
# The caller's stack pointer; the fifth argument of the span is the word there.
CALLER_SP = 0x3FFD_0000
STACK = mx.Stack(CALLER_SP)


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


def u(v: int, bits: int = 32):
    return z3.BitVecVal(v, bits)


def lo32(v):
    return z3.Extract(31, 0, v)


def hi32(v):
    return z3.Extract(63, 32, v)


def rd(mem, addr, n):
    if isinstance(mem, Written):
        return mem.read(addr, n)
    parts = [z3.Select(mem, addr + i) for i in range(n)]
    return z3.Concat(*reversed(parts)) if n > 1 else parts[0]


class Written:
    """Memory `mem` after `stores` [(addr, value, bytes)], in order, read word by word:
    where every store is either at a constant distance from the word read or a 4-byte
    store, and the case's condition makes both 4-aligned (the span's refill: a table
    given 4-aligned, a register location that does not trap), each 4-byte word read is
    the newest store that is that word, or the bytes the others cover, or `mem`'s: the
    same value as reading the array of byte stores, in one if per store instead of one per
    pair of bytes. Reads of other sizes, and words some other store may partly cover, read
    that array. `needs` collects the alignment this rests on, which the case that reads
    it proves (Case.requires), or the path of a summarized call (machine.Summary)."""

    def __init__(self, mem, stores):
        self.mem, self.stores = mem, stores
        self.needs: list = []
        self.array = mem
        for addr, value, n in stores:
            self.array = wr(self.array, addr, value, n)

    def read(self, addr, n):
        if n % 4:
            return rd(self.array, addr, n)
        words = [self.word(addr + off) for off in range(0, n, 4)]
        return z3.Concat(*reversed(words)) if len(words) > 1 else words[0]

    def word(self, a):
        def aligned(a, w):
            self.needs.append(z3.And(z3.Extract(1, 0, a) == 0, z3.Extract(1, 0, w) == 0))
            return True

        word = mx.word_after(self.mem, self.stores, a, aligned)
        return rd(self.array, a, 4) if word is None else word  # byte by byte, then


# --- what a case expects ------------------------------------------------------------


@dataclasses.dataclass
class S:
    """A store the contract requires: `width` bytes of `value` at `addr`. A 64-bit store
    of `any_order` may be made as two 32-bit stores in either order."""

    addr: object
    value: object
    width: int
    what: str
    any_order: bool = False
    # When set, the value need not be `value`: it must satisfy every check of the list,
    # [(what, check(value stored))], each proven on its own (a conjunction the solver
    # takes apart faster than it decides whole).
    check: list | None = None


@dataclasses.dataclass
class B:
    """At least one barrier here."""

    what: str


@dataclasses.dataclass(frozen=True)
class Claim:
    """What a path must show: `holds` (a z3 Bool), named `what`. `shown` lists the values
    (code against contract) a counterexample prints; an `alone` claim is proven in a query
    of its own (a property of a value the solver decides faster apart than in a
    conjunction)."""

    holds: object
    what: str
    shown: list = dataclasses.field(default_factory=list)
    alone: bool = False

    def named(self, prefix: str) -> Claim:
        return dataclasses.replace(self, what=f"{prefix}: {self.what}")


@dataclasses.dataclass
class Case:
    name: str
    cond: object
    kind: str  # "return" or "trap"
    ret: object = None
    events: list = dataclasses.field(default_factory=list)
    # For init: the final memory instead of an exact store list (the contract fixes the
    # table's contents, not the order it is written in).
    final: list | None = None  # [(addr, n, value, what)]
    writable: list | None = None  # [(addr, n)] the only places stores may go
    # Cases of the same non-empty group are explored together, apart from the others
    # (run: one exploration per group).
    group: str = ""
    # For a 64-bit result (a3:a2) the contract states properties of instead of a value:
    # [(what, check(result))], each proven on its own.
    ret64: list | None = None
    # What the case's formulas rest on (Written.needs), proven with its claims.
    requires: list = dataclasses.field(default_factory=list)


# --- the contract, function by function -----------------------------------------------


class Args:
    def __init__(self, names):
        self.v = {n: z3.BitVec(n, 32) for n in names}

    def __getitem__(self, k):
        return self.v[k]


def record(mem, ctx, k):
    base = ctx + k * RECORD
    return {
        "ptr": rd(mem, base + PTR, 8),
        "window": rd(mem, base + WINDOW, 4),
        "mask": rd(mem, base + MASK, 8),
        "reg": rd(mem, base + REG, 4),  # the device uses the low word only (§3)
        "base": base,
    }


def matches(r, a):
    return (a & r["mask"]) == r["ptr"]


def local(r, a):
    return r["window"] + (lo32(a) & ~lo32(r["mask"]))


def first_hits(recs, a):
    """(condition, k) for each k: record k is the first that matches."""
    out = []
    for k in range(RECORDS):
        earlier = [z3.Not(matches(recs[j], a)) for j in range(k)]
        out.append((z3.And(*earlier, matches(recs[k], a)), k))
    return out


def no_hit(recs, a):
    return z3.And(*[z3.Not(matches(r, a)) for r in recs])


def spec_translate(mem, args):
    ctx, a = args["a2"], z3.Concat(args["a5"], args["a4"])
    recs = [record(mem, ctx, k) for k in range(RECORDS)]
    cases = [Case("NULL ctx", ctx == 0, "return", u(0))]
    for cond, k in first_hits(recs, a):
        cases.append(Case(f"hit in slot {k}", z3.And(ctx != 0, cond), "return", local(recs[k], a)))
    na = rd(mem, ctx + NEXT_ALLOC, 1)
    for v in range(REUSABLE):
        r = recs[v]
        picked = z3.URem(na, 3) == v  # §4: next_alloc >= 3 is taken modulo 3
        miss = z3.And(ctx != 0, no_hit(recs, a), picked)
        unusable = z3.Or(r["reg"] == 0, (r["reg"] & 3) != 0)  # §4: trap, store nothing
        cases.append(Case(f"refill of slot {v}, unusable register: trap", z3.And(miss, unusable), "trap"))
        cases.append(
            Case(f"refill of slot {v}", z3.And(miss, z3.Not(unusable)), "return", local(r, a), refill_stores(recs, ctx, a, v))
        )
    return cases


def spec_lookup(mem, args):
    ctx, a, out_start, out_end = args["a2"], z3.Concat(args["a5"], args["a4"]), args["a6"], args["a7"]
    recs = [record(mem, ctx, k) for k in range(RECORDS)]
    cases = [Case("NULL ctx", ctx == 0, "return", u(0xFFFF_FFFF))]
    for cond, k in first_hits(recs, a):
        r = recs[k]
        start, end = r["ptr"], r["ptr"] + ~r["mask"]
        for s_null in (True, False):
            for e_null in (True, False):
                events = []
                if not s_null:
                    events.append(S(out_start, start, 8, "*out_start = ptr", any_order=True))
                if not e_null:
                    events.append(S(out_end, end, 8, "*out_end = ptr + ~mask", any_order=True))
                c = z3.And(
                    ctx != 0, cond, (out_start == 0) if s_null else (out_start != 0), (out_end == 0) if e_null else (out_end != 0)
                )
                cases.append(
                    Case(
                        f"hit in slot {k}, out_start {'NULL' if s_null else 'set'}, out_end {'NULL' if e_null else 'set'}",
                        c,
                        "return",
                        u(0),
                        events,
                    )
                )
    cases.append(Case("miss", z3.And(ctx != 0, no_hit(recs, a)), "return", u(0xFFFF_FFFF)))
    return cases


def wr(mem, addr, value, n):
    for i in range(n):
        mem = z3.Store(mem, addr + i, z3.Extract(8 * i + 7, 8 * i, value))
    return mem


def refill_stores(recs, ctx, a, v):
    """What a refill of slot v stores (§3), in order, with its barriers."""
    r = recs[v]
    tag = a & r["mask"]
    return [
        S(r["base"] + PTR, tag, 8, f"records[{v}].ptr = tag", any_order=True),
        B("the barrier before the register stores"),
        S(r["reg"] + 4, hi32(tag), 4, "hi32(tag) to reg_location + 4"),
        S(r["reg"], lo32(tag), 4, "lo32(tag) to reg_location"),
        B("the barrier after the register stores"),
        S(ctx + NEXT_ALLOC, u((v + 1) % 3, 8), 1, "next_alloc = (v + 1) % 3"),
    ]


def span_definition(after, ctx, k, a, L, ln, d):
    """The span's definition (§3, neuron_translate_span) as checks of the stored value
    V: on the table `after` the call leaves, with `k` the record used and `L` the returned
    local address, the table *continues* at offset x when a + x does not pass 2^64, the
    first record matching a + x is k, local(records[k], a + x) == L + x and L + x < 2^32;
    V <= len, the table continues at every offset below V (d is free: the check holds for
    every d), and V == len or the table does not continue at V.

    The same, as the list of its conjuncts [(what, check)]: continuing is a conjunction,
    so "continues at every d < V" is one check per part of it."""
    recs = [record(after, ctx, j) for j in range(RECORDS)]
    room = u(1 << 32, 64) - z3.ZeroExt(32, L)
    parts = [
        ("a + x does not pass 2^64", lambda x: z3.UGE(a + x, a)),
        *[(f"record {j} (earlier) does not match a + x", lambda x, j=j: z3.Not(matches(recs[j], a + x))) for j in range(k)],
        (f"record {k} matches a + x", lambda x: matches(recs[k], a + x)),
        ("L + x < 2^32", lambda x: z3.ULT(x, room)),
        (f"local(records[{k}], a + x) == L + x", lambda x: local(recs[k], a + x) == L + lo32(x)),
    ]

    def continues(x):
        return z3.And(*[p(x) for _, p in parts])

    return [
        (": S <= len", lambda V: z3.ULE(V, ln)),
        *[(f": below S, {what}", lambda V, p=p: z3.Implies(z3.ULT(d, V), p(d))) for what, p in parts],
        (": S == len or the table does not continue at S", lambda V: z3.Or(V == ln, z3.Not(continues(V)))),
    ]


def spec_span(mem, args, d):
    """The span's cases; `d` is the free offset of its definition (span_definition)."""
    ctx, a, ln = args["a2"], z3.Concat(args["a5"], args["a4"]), z3.Concat(args["a7"], args["a6"])
    out_span = rd(mem, u(CALLER_SP), 4)  # the fifth argument, in memory
    recs = [record(mem, ctx, k) for k in range(RECORDS)]
    cases = []

    def outputs(span, name):
        """The two ways out_span may be: (condition, stores, name)."""
        checks = isinstance(span, list)
        store = S(out_span, None if checks else span, 8, "*out_span = the span", any_order=True, check=span if checks else None)
        return [(out_span == 0, [], f"{name}, out_span NULL"), (out_span != 0, [store], f"{name}, out_span set")]

    for oc, st, name in outputs(u(0, 64), "NULL ctx"):
        cases.append(Case(name, z3.And(ctx == 0, oc), "return", u(0), st, group="NULL"))
    for cond, k in first_hits(recs, a):
        L = local(recs[k], a)
        for oc, st, name in outputs(span_definition(mem, ctx, k, a, L, ln, d), f"hit in slot {k}"):
            cases.append(Case(name, z3.And(ctx != 0, cond, oc), "return", L, st, group=f"hit {k}"))
    na = rd(mem, ctx + NEXT_ALLOC, 1)
    for v in range(REUSABLE):
        r = recs[v]
        miss = z3.And(ctx != 0, no_hit(recs, a), z3.URem(na, 3) == v)
        unusable = z3.Or(r["reg"] == 0, (r["reg"] & 3) != 0)
        cases.append(Case(f"refill of slot {v}, unusable register: trap", z3.And(miss, unusable), "trap", group=f"refill {v}"))
        stores = refill_stores(recs, ctx, a, v)
        after = Written(mem, [(w.addr, w.value, w.width) for w in stores if isinstance(w, S)])
        L = local(r, a)
        for oc, st, name in outputs(span_definition(after, ctx, v, a, L, ln, d), f"refill of slot {v}"):
            cases.append(
                Case(
                    name, z3.And(miss, z3.Not(unusable), oc), "return", L, stores + st, group=f"refill {v}", requires=after.needs
                )
            )
    return cases


def cut_contract(mem, r, a, span, x, split=False):
    """The contract of the span's helper `cut_before_member(r, a, span) -> R` (the device
    object keeps it a function of its own): R is `span` cut short at the first address at
    or after `a` that record `r` matches. As checks of R, with `x` free (the second holds
    for every x):

    - R <= span;
    - no address a + x with x < R (and a + x not past 2^64) matches r;
    - R == span, or a + R (not past 2^64) matches r.

    These are the lemmas the span's proof takes at every call, in place of the helper's
    arithmetic (`cut_summary`). `split`: the second as the checks of a case split, for
    proving it (the same conjunction)."""
    rec = record(mem, r, 0)
    below = lambda R: z3.Implies(z3.And(z3.ULT(x, R), z3.UGE(a + x, a)), z3.Not(matches(rec, a + x)))
    if split:
        # The second, the hard one, proven case by case: by where the highest bit lies at
        # which a's masked bits differ from the tag (none; or in 0..15, ..., 48..63). The
        # cases cover every input (a check of its own).
        differ = (a & rec["mask"]) ^ rec["ptr"]
        cases = [("a matches", differ == 0)]
        for lo in range(0, 64, 16):
            top = [z3.Extract(63, lo + 16, differ) == 0] if lo + 16 < 64 else []
            cases.append((f"the highest differing bit in {lo}..{lo + 15}", z3.And(z3.Extract(lo + 15, lo, differ) != 0, *top)))
        seconds = [
            (f"no address in [a, a + R) matches, when {what}", lambda R, c=c: z3.Implies(c, below(R))) for what, c in cases
        ]
        seconds.append(("(the cases of the highest differing bit cover every input)", lambda R: z3.Or(*[c for _, c in cases])))
    else:
        seconds = [("no address in [a, a + R) matches", below)]
    return [
        ("R <= span", lambda R: z3.ULE(R, span)),
        *seconds,
        ("R == span or a + R matches", lambda R: z3.Or(R == span, z3.And(z3.UGE(a + R, a), matches(rec, a + R)))),
    ]


def cut_args(regs):
    """The helper's arguments in its a2..a7: the record, the address, the span."""
    return regs[2], z3.Concat(regs[5], regs[4]), z3.Concat(regs[7], regs[6])


def spec_cut(mem, args):
    r, a, span = cut_args([None, None, args["a2"], None, args["a4"], args["a5"], args["a6"], args["a7"]])
    x = z3.BitVec("cut_offset", 64)
    return [Case("cut", z3.BoolVal(True), "return", None, ret64=cut_contract(mem, r, a, span, x, split=True))]


def cut_summary(d):
    """The helper at its proven word, for the span's proof: a fresh result R with the
    contract's facts, the free offset instantiated at the span's `d`; its precondition
    (the record outside the stack, as its own proof assumed) to be shown at the call."""

    def contract(regs, memory, tag):
        r, a, span = cut_args(regs)
        R = z3.BitVec(tag, 64)
        mem = Written(*memory)
        facts = [check(R) for _, check in cut_contract(mem, r, a, span, d)]
        must = [(STACK.outside(r, RECORD), "the helper's record may lie in the stack")]
        must += (
            [(z3.And(*mem.needs), "the record's words and the stores before the call are 4-aligned (read word by word)")]
            if mem.needs
            else []
        )
        return [lo32(R), hi32(R)], facts, must

    return mx.Summary("cut_before_member", contract)


def stack_precondition(mem, args):
    """What the span's caller guarantees (the executor's stack model rests on it): the
    table, the span's output and every record's register block lie outside the stack
    below the caller's stack pointer and the arguments passed there."""
    ctx = args["a2"]
    regions = [(ctx, CTX_SIZE), (rd(mem, u(CALLER_SP), 4), 8)]
    regions += [(rd(mem, ctx + k * RECORD + REG, 4), 8) for k in range(RECORDS)]
    return z3.And(*[STACK.outside(p, n) for p, n in regions])


def spec_ctx(mem, args, image):
    ctx_addr = image.symbols["_ctx"][0]
    return [Case("returns _ctx", z3.BoolVal(True), "return", rd(mem, u(ctx_addr), 4))]


def init_inputs(mem, image):
    """What init reads: hbm_scratch (the global) and ENGINE_BASE_ADDR (the register pair)."""
    hbm = rd(mem, u(image.symbols[HBM_SCRATCH][0]), 8)
    return hbm, z3.Concat(rd(mem, u(ENGINE_BASE_HI), 4), rd(mem, u(ENGINE_BASE_LO), 4))


def spec_init(mem, args, image):
    table = image.symbols[local_symbol(image, "TABLE")][0]
    ctx_addr = image.symbols["_ctx"][0]
    sbuf_addr = image.symbols["_sbuf_window"][0]
    hbm, engine = init_inputs(mem, image)
    sbuf = engine - SBUF_BELOW
    final = [(ctx_addr, 4, u(table), "_ctx = &table"), (sbuf_addr, 8, sbuf, "_sbuf_window = ENGINE_BASE_ADDR - 41 MiB")]
    props = []
    for k, (window, mask, reg, tag) in enumerate(INITIAL):
        base = table + k * RECORD
        final += [
            (base + WINDOW, 4, u(window), f"records[{k}].window"),
            (base + MASK, 8, u(mask, 64), f"records[{k}].mask"),
            (base + REG, 8, u(reg, 64), f"records[{k}].reg_location"),
        ]
        if tag == "empty":
            # Empty: a bit outside the mask, which no masked address has (§3).
            props.append((base + PTR, 8, lambda v, m=mask: (v & ~u(m, 64)) != 0, f"records[{k}].ptr is empty"))
        else:
            src = sbuf if tag == "sbuf" else hbm
            final.append((base + PTR, 8, src & u(mask, 64), f"records[{k}].ptr = {tag} & mask"))
    final.append((table + NEXT_ALLOC, 1, u(0, 8), "next_alloc = 0"))
    c = Case(
        "init", z3.BoolVal(True), "return", None, final=final + props, writable=[(table, CTX_SIZE), (ctx_addr, 4), (sbuf_addr, 8)]
    )
    return [c]


# --- comparing a path with a case -----------------------------------------------------


class Refuted(Exception):
    def __init__(self, what, model):
        super().__init__(what)
        self.what = what
        self.model = model
        self.shown = {}


class Facts:
    """What holds on the path being checked: a stack of hypotheses. Each query runs in a
    fresh solver (z3's non-incremental preprocessing is much faster on these formulas).
    It carries what every query of the unit shares: the unit's solver budget, the initial
    memory (the array the reads are of, sat_model), the caller's
    precondition its paths' obligations are proven under, and the constraints that place a
    counterexample where the qemu replay can run it (replay_constraints)."""

    def __init__(self, budget: mx.Budget, memory: z3.ArrayRef, precondition=None, replay=()):
        self.stack = [[]]
        self.budget = budget
        self.memory = memory
        self.reads: dict = {}  # each formula's reads of the memory (machine.array_reads)
        self.precondition = z3.BoolVal(True) if precondition is None else precondition
        self.replay = list(replay)

    def push(self):
        self.stack.append([])

    def pop(self):
        self.stack.pop()

    def add(self, *facts):
        self.stack[-1].extend(facts)

    def all(self):
        return [f for level in self.stack for f in level]


def sat_model(solver, extra, what):
    """A model of the facts and `extra`, or None. `what` names the query (a unit past its
    budget says which query it was at). Where the initial memory is only read, the
    solver is asked about the reads instead of the array (machine.Reads)."""
    formulas = [*solver.all(), *extra]
    t0 = time.time()
    reads = mx.Reads(formulas, solver.memory, solver.reads)
    if reads.formulas is not None:
        s = z3.SolverFor("QF_BV")
        s.add(*reads.formulas)
    else:
        s = z3.SolverFor("QF_ABV")
        s.add(*formulas)
    r = solver.budget.check(s, what)
    if mx.DEBUG:
        print(
            f"  query ({what}): {r} in {time.time() - t0:.2f} s{'' if reads.formulas is not None else ' (with the array)'}",
            file=sys.stderr,
        )
    if r != z3.sat:
        return None
    return reads.model(s.model()) if reads.formulas is not None else s.model()


# Counterexamples are looked for first where the qemu replay can put them
# (abi-tests/tests/prove_replay.rs): the table at REPLAY_AREA, every register location and
# output pointer 0 or inside the area.
REPLAY_AREA, REPLAY_SIZE = 0x2000_0000, 0x300


def replay_constraints(fn: Function, mem, args):
    if not fn.table:
        return []
    ctx = args["a2"]
    inside = lambda p: z3.Or(p == 0, z3.And(z3.UGE(p, u(REPLAY_AREA)), z3.ULE(p, u(REPLAY_AREA + REPLAY_SIZE - 8)), (p & 3) == 0))
    c = [ctx == REPLAY_AREA]
    c += [inside(rd(mem, ctx + k * RECORD + REG, 4)) for k in range(RECORDS)]
    c += [inside(p) for _, p in fn.outputs(mem, args)]
    if fn.whole_registers:
        c += [rd(mem, ctx + k * RECORD + REG + 4, 4) == 0 for k in range(RECORDS)]
    return c


def witness(solver, extra, what="a counterexample"):
    """A model of a refutation: a replayable one if there is one."""
    return sat_model(solver, extra + solver.replay, f"{what} (replayable)") or sat_model(solver, extra, what)


def prove_all(solver, claims: list[Claim]):
    """Every claim holds under the solver's assertions; else Refuted, naming the first
    that does not, with its counterexample and the values of its `shown` in it. One query
    for all the claims that are not `alone`, and one for each that is."""
    together = [c for c in claims if not c.alone]
    queries = ([together] if together else []) + [[c] for c in claims if c.alone]
    for group in queries:
        names = "; ".join(c.what for c in group)
        if mx.DEBUG:
            print(f"  claims: {names[:200]}", file=sys.stderr)
        if sat_model(solver, [z3.Not(z3.And(*[c.holds for c in group]))], f"the claims: {names}") is None:
            continue
        for c in group:
            m = sat_model(solver, [z3.Not(c.holds)], f"the claim: {c.what}") and witness(solver, [z3.Not(c.holds)])
            if m is not None:
                r = Refuted(c.what, m)
                r.shown = {k: hex(m.eval(e, model_completion=True).as_long()) for k, e in c.shown}
                raise r
        raise Refuted(
            "the claims fail together", sat_model(solver, [z3.Not(z3.And(*[c.holds for c in group]))], "a counterexample")
        )


def value_checks(w: S):
    """What the value a store makes must satisfy: [(what, test)], `w.check`'s or
    equality with `w.value`."""
    return w.check if w.check is not None else [("", lambda x: x == w.value)]


def halves_checks(w: S):
    """The same, for a 64-bit value stored as two words (low, high)."""
    return [(what, lambda lo, hi, t=t: t(z3.Concat(hi, lo))) for what, t in value_checks(w)]


def contract_value(w: S):
    return [] if w.value is None else [("contract value", w.value)]


def event_claims(solver, code, want):
    """The code's events against the case's: the same stores in the same order (a 64-bit
    any-order store may be two 32-bit ones), and a barrier wherever the case needs one.
    Structural differences are refuted at once; the values come back as claims."""
    stores = [(i, e) for i, e in enumerate(code) if isinstance(e, mx.Store)]
    claims = []
    pos = 0
    last_store_at = -1
    need_barrier = None
    for w in want:
        if isinstance(w, B):
            need_barrier = w
            continue
        if pos >= len(stores):
            raise Refuted(f"missing store: {w.what}", witness(solver, []))
        i, e = stores[pos]
        if need_barrier is not None:
            if not any(isinstance(x, mx.Barrier) for x in code[last_store_at + 1 : i]):
                raise Refuted(f"no barrier before '{w.what}' ({need_barrier.what})", witness(solver, []))
            need_barrier = None
        if w.any_order and e.width == 4:
            if pos + 1 >= len(stores) or stores[pos + 1][1].width != 4:
                raise Refuted(f"'{w.what}': a 32-bit store not followed by its other half", witness(solver, []))
            j, f = stores[pos + 1]
            a = w.addr
            shown = [
                ("code address", e.addr),
                ("code value", e.value),
                ("code address 2", f.addr),
                ("code value 2", f.value),
                ("contract address", a),
            ] + contract_value(w)
            for what, ok in halves_checks(w):
                claim = z3.Or(
                    z3.And(e.addr == a, f.addr == a + 4, ok(e.value, f.value)),
                    z3.And(e.addr == a + 4, f.addr == a, ok(f.value, e.value)),
                )
                claims.append(Claim(claim, f"store '{w.what}'{what}", shown, bool(what)))
            pos += 2
            last_store_at = j
            continue
        if e.width != w.width:
            raise Refuted(f"'{w.what}': a {e.width}-byte store where the contract has {w.width}", witness(solver, []))
        shown = [("code address", e.addr), ("code value", e.value), ("contract address", w.addr)] + contract_value(w)
        claims += [
            Claim(z3.And(e.addr == w.addr, ok(e.value)), f"store '{w.what}'{what}", shown, bool(what))
            for what, ok in value_checks(w)
        ]
        pos += 1
        last_store_at = i
    if need_barrier is not None:
        if not any(isinstance(x, mx.Barrier) for x in code[last_store_at + 1 :]):
            raise Refuted(f"no barrier: {need_barrier.what}", witness(solver, []))
    if pos != len(stores):
        raise Refuted(f"a store the contract does not make: {stores[pos][1].width} bytes", witness(solver, []))
    return claims


def final_claims(out: mx.Outcome, case: Case):
    claims = []
    for e in out.events:
        if isinstance(e, mx.Store):
            inside = z3.Or(*[z3.And(z3.UGE(e.addr, u(a)), z3.ULE(e.addr + e.width, u(a + n))) for a, n in case.writable])
            claims.append(Claim(inside, "a store outside the table, _ctx and _sbuf_window", [("code address", e.addr)]))
    for addr, n, value, what in case.final:
        got = rd(out.mem, u(addr), n)
        shown = [("code value", got)] + ([] if callable(value) else [("contract value", value)])
        claims.append(Claim(value(got) if callable(value) else got == value, what, shown))
    return claims


def check_path(solver, out: mx.Outcome, cases: list[Case], fname: str):
    """Proves the path against every case it can meet; returns the names of those cases."""
    solver.push()
    try:
        solver.add(*out.cond)
        if out.kind == "bound":
            raise Refuted(f"the path reaches the instruction bound at {out.pc:#x}", witness(solver, []))
        # What the path took for granted (stack assumptions, the preconditions of the calls it
        # summarized) holds wherever the caller's precondition does.
        must = obligations(out)
        if (
            must
            and sat_model(solver, [solver.precondition, z3.Not(z3.And(*[c for c, _ in must]))], "the path's obligations")
            is not None
        ):
            for c, what in must:
                m = sat_model(solver, [solver.precondition, z3.Not(c)], f"the obligation: {what}")
                if m is not None:
                    raise Refuted(what, m)
        met = []
        # The cases partition the inputs: a model of the path names one; when the path
        # implies that case's condition, no other case can meet it.
        m = sat_model(solver, [], "the path's feasibility")
        if m is None:
            return met
        named = [c for c in cases if z3.is_true(m.eval(c.cond, model_completion=True))]
        if len(named) == 1 and sat_model(solver, [z3.Not(named[0].cond)], f"whether the path is only {named[0].name}") is None:
            candidates = named
        else:
            candidates = cases
        for case in candidates:
            if mx.DEBUG:
                print(f" case {case.name} on a {out.kind} path", file=sys.stderr)
            solver.push()
            try:
                solver.add(case.cond)
                if sat_model(solver, [], f"whether the path meets {case.name}") is None:
                    continue
                if out.kind != case.kind:
                    raise Refuted(f"{case.name}: the code {'traps' if out.kind == 'trap' else 'returns'}", witness(solver, []))
                if case.kind == "trap":
                    if any(isinstance(e, mx.Store) for e in out.events):
                        raise Refuted(f"{case.name}: a store before the trap", witness(solver, []))
                elif case.final is not None:
                    prove_all(solver, final_claims(out, case))
                else:
                    if case.ret64 is not None:
                        r64 = z3.Concat(out.ret_hi, out.ret)
                        claims = [
                            Claim(check(r64), f"{case.name}: the result: {what}", [("code returns", r64)], alone=True)
                            for what, check in case.ret64
                        ]
                    else:
                        claims = [
                            Claim(
                                out.ret == case.ret,
                                f"{case.name}: the return value",
                                [("code returns", out.ret), ("contract returns", case.ret)],
                            )
                        ]
                    claims += [c.named(case.name) for c in event_claims(solver, out.events, case.events)]
                    if case.requires:
                        claims.append(
                            Claim(
                                z3.And(*case.requires),
                                f"{case.name}: the table's words and the register stores are 4-aligned (read word by word)",
                            )
                        )
                    prove_all(solver, claims)
                met.append(case.name)
            finally:
                solver.pop()
        if not met:
            raise Refuted("a path no case of the contract covers", witness(solver, []))
        return met
    finally:
        solver.pop()


def merge(outcomes):
    """Paths with the same outcome, the same return expression and the same events (by
    structure) are checked as one: their conditions or-ed. Sound (the merged condition is
    exactly the union); it only saves queries. What each path must show under the
    precondition (its stack assumptions, its calls' preconditions) it must show under its
    own condition."""
    groups = {}
    for o in outcomes:
        key = (
            o.kind,
            o.ret.sexpr() if o.ret is not None else None,
            o.ret_hi.sexpr() if o.ret_hi is not None else None,
            tuple(("b",) if isinstance(e, mx.Barrier) else (e.addr.sexpr(), e.value.sexpr(), e.width) for e in o.events),
            o.mem.sexpr() if o.kind == "return" and not o.events else None,
        )
        groups.setdefault(key, []).append(o)
    merged = []
    for group in groups.values():
        first = group[0]
        if len(group) == 1:
            merged.append(first)
            continue
        cond = [z3.Or(*[z3.And(*g.cond) for g in group])]
        must = [(z3.Implies(z3.And(*g.cond), c), w) for g in group for c, w in obligations(g)]
        merged.append(
            mx.Outcome(first.kind, cond, first.events, first.ret, first.mem, first.pc, ret_hi=first.ret_hi, obligations=must)
        )
    return merged


def obligations(out: mx.Outcome):
    """What the path must show under the precondition: every address the executor read as
    outside the stack is (machine.Stack), and every summarized call's precondition."""
    return [
        (STACK.outside(x, 1), "an access the stack model took to be outside the stack may be inside it") for x in out.assumed
    ] + list(out.obligations)


# --- counterexamples ------------------------------------------------------------------


def counterexample(model, mem, args, fn: Function, image):
    """The inputs of a refuted path, as a vector: for the table functions the table bytes,
    the arguments and the outputs; for init the register and the global it reads."""
    if model is None:
        return None
    ev = lambda x: model.eval(x, model_completion=True).as_long()
    if fn.reads_engine:
        hbm, engine = init_inputs(mem, image)
        return {"function": fn.name, "engine_base": hex(ev(engine)), "hbm_scratch": hex(ev(hbm))}
    a = args.v
    out = {
        "function": fn.name,
        "replay_area": [hex(REPLAY_AREA), hex(REPLAY_SIZE)],
        "ctx": hex(ev(a["a2"])),
        "addr": hex((ev(a["a5"]) << 32) | ev(a["a4"])),
        "table": bytes(ev(z3.Select(mem, a["a2"] + i)) for i in range(CTX_SIZE)).hex(),
    }
    out.update({name: hex(ev(v)) for name, v in fn.inputs(args) + fn.outputs(mem, args)})
    return out


# --- the functions ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Contract:
    """A function's contract as the proof takes it: its cases, and the summaries of the
    calls it makes (by entry address) that the proof takes at their proven word."""

    cases: list
    summaries: dict = dataclasses.field(default_factory=dict)


def no_values(*_):
    return []


def no_precondition(mem, args):
    return z3.BoolVal(True)


@dataclasses.dataclass(frozen=True)
class Function:
    """Everything the validator knows of one function (the registry, FUNCTIONS)."""

    name: str
    # Its ELF symbol; None for a local Rust function, found by its name's end (local_symbol).
    symbol: str | None
    # (memory, arguments, image) -> Contract.
    contract: object
    # What its inputs are taken to satisfy: (memory, arguments) -> z3 Bool.
    precondition: object = no_precondition
    # The functions its proof rests on (proven first, in the same run).
    depends: tuple = ()
    # Taken as given, and stated in docs/prove.md: (arguments) -> [z3 Bool]. A function
    # with givens (the table 4-aligned) has its table's words read whole
    # (machine.State.load_word).
    given: object = None
    # Given a table at a2: a counterexample is first looked for with the table, its
    # register locations and `outputs` where the qemu replay can put them.
    table: bool = False
    # Replayed on the host library, which uses whole 64-bit register locations.
    whole_registers: bool = False
    # Reads ENGINE_BASE_ADDR and hbm_scratch (init): its counterexample is those two.
    reads_engine: bool = False
    # The pointers it writes through, by name: (memory, arguments) -> [(name, pointer)].
    outputs: object = no_values
    # Its other inputs a counterexample shows: (arguments) -> [(name, value)].
    inputs: object = no_values
    # Its units' order in a run (lower first: the slowest, so the others fill the gaps):
    # (group) -> int.
    priority: object = lambda group: 2


def span_contract(mem, args, image):
    d = z3.BitVec("span_offset", 64)
    return Contract(spec_span(mem, args, d), {image.symbols[local_symbol(image, HELPER)][0]: cut_summary(d)})


# Proven in this order (a function after those its proof rests on).
FUNCTIONS = {
    f.name: f
    for f in [
        Function(
            "neuron_translate_ctx",
            "_Z20neuron_translate_ctxv",
            contract=lambda mem, args, image: Contract(spec_ctx(mem, args, image)),
        ),
        Function(
            "neuron_translate_mapping_lookup",
            "_Z31neuron_translate_mapping_lookupPvyPyS0_",
            contract=lambda mem, args, image: Contract(spec_lookup(mem, args)),
            precondition=stack_precondition,
            table=True,
            outputs=lambda mem, args: [("out_start", args["a6"]), ("out_end", args["a7"])],
        ),
        Function(
            "neuron_translate",
            "_Z16neuron_translatePvy",
            contract=lambda mem, args, image: Contract(spec_translate(mem, args)),
            precondition=stack_precondition,
            table=True,
            priority=lambda group: 1,
        ),
        Function(
            "_init_translate_ctx",
            "_Z19_init_translate_ctxv",
            contract=lambda mem, args, image: Contract(spec_init(mem, args, image)),
            reads_engine=True,
        ),
        Function(
            HELPER,
            None,
            contract=lambda mem, args, image: Contract(spec_cut(mem, args)),
            precondition=lambda mem, args: STACK.outside(args["a2"], RECORD),
        ),
        Function(
            "neuron_translate_span",
            "neuron_translate_span",
            contract=span_contract,
            precondition=stack_precondition,
            depends=(HELPER,),
            # The table is 4-aligned, as its C type (align 8) requires. Then the refill's
            # 32-bit register stores (4-aligned, or the call traps) either are a word of the
            # table or miss it, which the executor resolves word by word instead of byte by byte.
            given=lambda args: [(args["a2"] & 3) == 0],
            table=True,
            whole_registers=True,
            outputs=lambda mem, args: [("out_span", rd(mem, u(CALLER_SP), 4))],
            inputs=lambda args: [("len", z3.Concat(args["a7"], args["a6"]))],
            priority=lambda group: 0 if group.startswith("refill") else 2,
        ),
    ]
}


# --- driving ----------------------------------------------------------------------------


HBM_SCRATCH_AT = 0x3FF0_0000
HERE = os.path.dirname(os.path.abspath(__file__))


def link(obj: str, ld: str, out: str):
    """The object at the fixed addresses of prove/link.ld, hbm_scratch defined."""
    subprocess.run(
        [ld, "-e", "0", "-T", os.path.join(HERE, "link.ld"), f"--defsym={HBM_SCRATCH}={HBM_SCRATCH_AT:#x}", obj, "-o", out],
        check=True,
    )


def run_object(obj: str, ld: str, only=None, config: Config = Config(), trusted=()):
    with tempfile.TemporaryDirectory() as d:
        elf = os.path.join(d, "translation.elf")
        link(obj, ld, elf)
        return run(elf, only, config, trusted)


def local_symbol(image, name: str) -> str:
    """The one Rust-mangled symbol (v0: `_R...`, the identifier length-prefixed) of `name`."""
    found = [s for s in image.symbols if s.startswith("_R") and s.endswith(f"{len(name)}{name}")]
    if len(found) != 1:
        raise SystemExit(f"validate.py: expected one symbol for {name}, found {found}")
    return found[0]


@functools.cache
def load(elf: str):
    """The linked image and its lifter, once per process."""
    image = mx.Image(elf)
    return image, mx.Lifter(image)


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
    budget = mx.Budget(config.budget, unit=unit)

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
    except (mx.ExecError, mx.OverBudget) as e:
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
    outcomes = mx.run_function(
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


def run(elf: str, only=None, config: Config = Config(), trusted=()):
    """Proves each function (or those named in `only`, and what their proofs rest on but
    `trusted`: proven elsewhere), in units of one group of cases each (run_units)."""
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
