"""Translation validation of the shipped device object against docs/contract.md §3-§5.

For each function: every path of its machine code (prove/machine.py: SLEIGH semantics
through pypcode, z3) against the contract's cases, written here from the contract's text
and not from the Rust code. A path is proven when, under its path condition and a case's
condition, its outcome (return or trap), its return value and its events (every store:
address, value, width, in order; the barriers the contract requires) are the case's. A
path the contract does not allow is refuted with a counterexample: the table's bytes, the
arguments and what differs, written as a replayable vector.

usage: validate.py OBJECT --ld LD [--only NAME] [--first] [--json OUT]

OBJECT is the relocatable device object; it is linked at fixed addresses (prove/link.ld,
hbm_scratch defined) with LD, GNU ld for Xtensa, before it is lifted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time

import z3

import machine as mx

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
FUNCTIONS = {
    "neuron_translate_ctx": "_Z20neuron_translate_ctxv",
    "neuron_translate_mapping_lookup": "_Z31neuron_translate_mapping_lookupPvyPyS0_",
    "neuron_translate": "_Z16neuron_translatePvy",
    "_init_translate_ctx": "_Z19_init_translate_ctxv",
}
# Stated and explored, but not part of a default run: its proof does not finish within
# make test's budget yet (docs/prove.md). `--only neuron_translate_span` runs it.
OPT_IN = {"neuron_translate_span": "neuron_translate_span"}
# The caller's stack pointer; the fifth argument of the span is the word there.
CALLER_SP = 0x3FFD_0000
STACK = mx.Stack(CALLER_SP)


def u(v: int, bits: int = 32):
    return z3.BitVecVal(v, bits)


def lo32(v):
    return z3.Extract(31, 0, v)


def hi32(v):
    return z3.Extract(63, 32, v)


def rd(mem, addr, n):
    parts = [z3.Select(mem, addr + i) for i in range(n)]
    return z3.Concat(*reversed(parts)) if n > 1 else parts[0]


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
    # When set, the value need not be `value`: it must satisfy check(value stored).
    check: object = None


@dataclasses.dataclass
class B:
    """At least one barrier here."""

    what: str


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
        cases.append(Case(f"refill of slot {v}", z3.And(miss, z3.Not(unusable)), "return", local(r, a), refill_stores(recs, ctx, a, v)))
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
                c = z3.And(ctx != 0, cond, (out_start == 0) if s_null else (out_start != 0), (out_end == 0) if e_null else (out_end != 0))
                cases.append(Case(f"hit in slot {k}, out_start {'NULL' if s_null else 'set'}, out_end {'NULL' if e_null else 'set'}", c, "return", u(0), events))
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
    """The span's definition (§3, neuron_translate_span) as a check of the stored value
    V: on the table `after` the call leaves, with `k` the record used and `L` the returned
    local address, the table *continues* at offset x when a + x does not pass 2^64, the
    first record matching a + x is k, local(records[k], a + x) == L + x and L + x < 2^32;
    V <= len, the table continues at every offset below V (d is free: the check holds for
    every d), and V == len or the table does not continue at V."""
    recs = [record(after, ctx, j) for j in range(RECORDS)]
    room = u(1 << 32, 64) - z3.ZeroExt(32, L)

    def continues(x):
        y = a + x
        return z3.And(
            z3.UGE(y, a),
            *[z3.Not(matches(recs[j], y)) for j in range(k)],
            matches(recs[k], y),
            z3.ULT(x, room),
            local(recs[k], y) == L + lo32(x),
        )

    return lambda V: z3.And(z3.ULE(V, ln), z3.Implies(z3.ULT(d, V), continues(d)), z3.Or(V == ln, z3.Not(continues(V))))


def spec_span(mem, args):
    ctx, a, ln = args["a2"], z3.Concat(args["a5"], args["a4"]), z3.Concat(args["a7"], args["a6"])
    out_span = rd(mem, u(CALLER_SP), 4)  # the fifth argument, in memory
    d = z3.BitVec("span_offset", 64)
    recs = [record(mem, ctx, k) for k in range(RECORDS)]
    cases = []

    def outputs(span, name):
        """The two ways out_span may be: (condition, stores, name)."""
        store = S(out_span, span if not callable(span) else None, 8, "*out_span = the span", any_order=True, check=span if callable(span) else None)
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
        after = mem
        for w in stores:
            if isinstance(w, S):
                after = wr(after, w.addr, w.value, w.width)
        L = local(r, a)
        for oc, st, name in outputs(span_definition(after, ctx, v, a, L, ln, d), f"refill of slot {v}"):
            cases.append(Case(name, z3.And(miss, z3.Not(unusable), oc), "return", L, stores + st, group=f"refill {v}"))
    return cases


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


def spec_init(mem, args, image):
    table = image.symbols["_RNvNtCsflu1tVBgJYx_16neuron_translate3abi5TABLE"][0]
    ctx_addr = image.symbols["_ctx"][0]
    sbuf_addr = image.symbols["_sbuf_window"][0]
    hbm = rd(mem, u(image.symbols[HBM_SCRATCH][0]), 8)
    engine = z3.Concat(rd(mem, u(ENGINE_BASE_HI), 4), rd(mem, u(ENGINE_BASE_LO), 4))
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
    c = Case("init", z3.BoolVal(True), "return", None, final=final + props,
             writable=[(table, CTX_SIZE), (ctx_addr, 4), (sbuf_addr, 8)])
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
    fresh solver (z3's non-incremental preprocessing is much faster on these formulas)."""

    def __init__(self):
        self.stack = [[]]

    def push(self):
        self.stack.append([])

    def pop(self):
        self.stack.pop()

    def add(self, *facts):
        self.stack[-1].extend(facts)

    def all(self):
        return [f for level in self.stack for f in level]


def sat_model(solver, extra):
    """A model of the facts and `extra`, or None."""
    s = z3.SolverFor("QF_ABV")
    s.add(*solver.all(), *extra)
    t0 = time.time()
    r = s.check()
    if mx.DEBUG:
        print(f"  query: {r} in {time.time() - t0:.2f} s", file=sys.stderr)
    if r == z3.unknown:
        raise Refuted("the solver could not decide", None)
    return s.model() if r == z3.sat else None


# Counterexamples are looked for first where the qemu replay can put them
# (abi-tests/tests/prove_replay.rs): the table at REPLAY_AREA, every register location and
# output pointer 0 or inside the area.
REPLAY_AREA, REPLAY_SIZE = 0x2000_0000, 0x300
_replay: list = []
_precondition = z3.BoolVal(True)


def replay_constraints(mem, args, function):
    if function in ("_init_translate_ctx", "neuron_translate_ctx"):
        return []
    ctx = args["a2"]
    inside = lambda p: z3.Or(p == 0, z3.And(z3.UGE(p, u(REPLAY_AREA)), z3.ULE(p, u(REPLAY_AREA + REPLAY_SIZE - 8)), (p & 3) == 0))
    c = [ctx == REPLAY_AREA]
    c += [inside(rd(mem, ctx + k * RECORD + REG, 4)) for k in range(RECORDS)]
    if function == "neuron_translate_mapping_lookup":
        c += [inside(args["a6"]), inside(args["a7"])]
    if function == "neuron_translate_span":
        c += [inside(rd(mem, u(CALLER_SP), 4))]
    return c


def witness(solver, extra):
    """A model of a refutation: a replayable one if there is one."""
    return sat_model(solver, extra + _replay) or sat_model(solver, extra)


def prove_all(solver, claims):
    """Every (claim, what, shown) holds under the solver's assertions; else Refuted,
    naming the first that does not, with its counterexample and the values of `shown`
    (code against contract) in it. One query when all hold."""
    if not claims:
        return
    if sat_model(solver, [z3.Not(z3.And(*[c[0] for c in claims]))]) is None:
        return
    for c, what, shown in claims:
        m = sat_model(solver, [z3.Not(c)]) and witness(solver, [z3.Not(c)])
        if m is not None:
            r = Refuted(what, m)
            r.shown = {k: hex(m.eval(e, model_completion=True).as_long()) for k, e in shown}
            raise r
    raise Refuted("the claims fail together", sat_model(solver, [z3.Not(z3.And(*[c[0] for c in claims]))]))


def value_check(w: S):
    """What the value a store makes must satisfy: `w.check`, or equality with `w.value`."""
    return w.check if w.check is not None else (lambda x: x == w.value)


def halves_check(w: S):
    """The same, for a 64-bit value stored as two words (low, high)."""
    if w.check is not None:
        return lambda lo, hi: w.check(z3.Concat(hi, lo))
    return lambda lo, hi: z3.And(lo == lo32(w.value), hi == hi32(w.value))


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
            a, ok = w.addr, halves_check(w)
            claim = z3.Or(
                z3.And(e.addr == a, f.addr == a + 4, ok(e.value, f.value)),
                z3.And(e.addr == a + 4, f.addr == a, ok(f.value, e.value)),
            )
            shown = [("code address", e.addr), ("code value", e.value), ("code address 2", f.addr), ("code value 2", f.value), ("contract address", a)] + contract_value(w)
            claims.append((claim, f"store '{w.what}'", shown))
            pos += 2
            last_store_at = j
            continue
        if e.width != w.width:
            raise Refuted(f"'{w.what}': a {e.width}-byte store where the contract has {w.width}", witness(solver, []))
        claims.append((z3.And(e.addr == w.addr, value_check(w)(e.value)), f"store '{w.what}'", [("code address", e.addr), ("code value", e.value), ("contract address", w.addr)] + contract_value(w)))
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
            claims.append((inside, "a store outside the table, _ctx and _sbuf_window", [("code address", e.addr)]))
    for addr, n, value, what in case.final:
        got = rd(out.mem, u(addr), n)
        shown = [("code value", got)] + ([] if callable(value) else [("contract value", value)])
        claims.append((value(got) if callable(value) else got == value, what, shown))
    return claims


def check_path(solver, out: mx.Outcome, cases: list[Case], fname: str):
    """Proves the path against every case it can meet; returns the names of those cases."""
    solver.push()
    try:
        solver.add(*out.cond)
        if out.kind == "bound":
            raise Refuted(f"the path reaches the instruction bound at {out.pc:#x}", witness(solver, []))
        if out.assumed:
            # The executor read these addresses as not in the stack (machine.Stack): that
            # holds wherever the caller's precondition does.
            pre = _precondition
            bad = z3.Or(*[z3.Not(STACK.outside(x, 1)) for x in out.assumed])
            m = sat_model(solver, [pre, bad])
            if m is not None:
                raise Refuted("an access the stack model took to be outside the stack may be inside it", m)
        met = []
        # The cases partition the inputs: a model of the path names one; when the path
        # implies that case's condition, no other case can meet it.
        m = sat_model(solver, [])
        if m is None:
            return met
        named = [c for c in cases if z3.is_true(m.eval(c.cond, model_completion=True))]
        if len(named) == 1 and sat_model(solver, [z3.Not(named[0].cond)]) is None:
            candidates = named
        else:
            candidates = cases
        for case in candidates:
            if mx.DEBUG:
                print(f" case {case.name} on a {out.kind} path", file=sys.stderr)
            solver.push()
            try:
                solver.add(case.cond)
                if sat_model(solver, []) is None:
                    continue
                if out.kind != case.kind:
                    raise Refuted(f"{case.name}: the code {'traps' if out.kind == 'trap' else 'returns'}", witness(solver, []))
                if case.kind == "trap":
                    if any(isinstance(e, mx.Store) for e in out.events):
                        raise Refuted(f"{case.name}: a store before the trap", witness(solver, []))
                elif case.final is not None:
                    prove_all(solver, final_claims(out, case))
                else:
                    claims = [(out.ret == case.ret, f"{case.name}: the return value", [("code returns", out.ret), ("contract returns", case.ret)])]
                    claims += [(c, f"{case.name}: {w}", shown) for c, w, shown in event_claims(solver, out.events, case.events)]
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
    exactly the union); it only saves queries."""
    groups = {}
    for o in outcomes:
        key = (
            o.kind,
            o.ret.sexpr() if o.ret is not None else None,
            tuple(("b",) if isinstance(e, mx.Barrier) else (e.addr.sexpr(), e.value.sexpr(), e.width) for e in o.events),
            o.mem.sexpr() if o.kind == "return" and not o.events else None,
        )
        groups.setdefault(key, []).append(o)
    merged = []
    for group in groups.values():
        first = group[0]
        cond = [z3.Or(*[z3.And(*g.cond) for g in group])] if len(group) > 1 else first.cond
        merged.append(mx.Outcome(first.kind, cond, first.events, first.ret, first.mem, first.pc))
    return merged


# --- counterexamples ------------------------------------------------------------------


def counterexample(model, mem, args, function, image):
    """The inputs of a refuted path, as a vector: for the table functions the table bytes
    and the arguments; for init the register and the global it reads."""
    if model is None:
        return None
    ev = lambda x: model.eval(x, model_completion=True).as_long()
    if function == "_init_translate_ctx":
        engine = z3.Concat(rd(mem, u(ENGINE_BASE_HI), 4), rd(mem, u(ENGINE_BASE_LO), 4))
        hbm = rd(mem, u(image.symbols[HBM_SCRATCH][0]), 8)
        return {"function": function, "engine_base": hex(ev(engine)), "hbm_scratch": hex(ev(hbm))}
    a = args.v
    out = {
        "function": function,
        "replay_area": [hex(REPLAY_AREA), hex(REPLAY_SIZE)],
        "ctx": hex(ev(a["a2"])),
        "addr": hex((ev(a["a5"]) << 32) | ev(a["a4"])),
        "table": bytes(ev(z3.Select(mem, a["a2"] + i)) for i in range(CTX_SIZE)).hex(),
    }
    if function == "neuron_translate_mapping_lookup":
        out.update(out_start=hex(ev(a["a6"])), out_end=hex(ev(a["a7"])))
    if function == "neuron_translate_span":
        out.update(len=hex((ev(a["a7"]) << 32) | ev(a["a6"])), out_span=hex(ev(rd(mem, u(CALLER_SP), 4))))
    return out


# --- driving ----------------------------------------------------------------------------


HBM_SCRATCH_AT = 0x3FF0_0000
HERE = os.path.dirname(os.path.abspath(__file__))


def link(obj: str, ld: str, out: str):
    """The object at the fixed addresses of prove/link.ld, hbm_scratch defined."""
    subprocess.run(
        [ld, "-e", "0", "-T", os.path.join(HERE, "link.ld"), f"--defsym={HBM_SCRATCH}={HBM_SCRATCH_AT:#x}", obj, "-o", out],
        check=True,
    )


def run_object(obj: str, ld: str, only=None, first=False):
    with tempfile.TemporaryDirectory() as d:
        elf = os.path.join(d, "translation.elf")
        link(obj, ld, elf)
        return run(elf, only, first)


def run(elf: str, only=None, first: bool = False):
    """Proves each function (or those named in `only`); `first` stops a function at its
    first refuted path (for mutants, which need one counterexample)."""
    image = mx.Image(elf)
    lifter = mx.Lifter(image)
    solver = Facts()
    results = []
    for name, sym in {**FUNCTIONS, **OPT_IN}.items():
        if (only and name not in only) or (not only and name in OPT_IN):
            continue
        t0 = time.time()
        mem = z3.Array("M0", z3.BitVecSort(32), z3.BitVecSort(8))
        args = Args(["a2", "a4", "a5", "a6", "a7"])

        def setup(s, args=args):
            for r in ["a2", "a4", "a5", "a6", "a7"]:
                s.set_reg_name(r, args[r])
            s.set_reg_name("a0", z3.BitVecVal(0x8000_0000, 32))  # a caller's return address
            s.set_reg_name("a1", z3.BitVecVal(0x3FFD_0000, 32))  # its stack

        if name == "neuron_translate":
            cases = spec_translate(mem, args)
        elif name == "neuron_translate_mapping_lookup":
            cases = spec_lookup(mem, args)
        elif name == "neuron_translate_ctx":
            cases = spec_ctx(mem, args, image)
        elif name == "neuron_translate_span":
            cases = spec_span(mem, args)
        else:
            cases = spec_init(mem, args, image)
        global _replay, _precondition
        _replay = replay_constraints(mem, args, name)
        _precondition = stack_precondition(mem, args) if name != "_init_translate_ctx" and name != "neuron_translate_ctx" else z3.BoolVal(True)
        entry = image.symbols[sym][0]
        entry_result = {"function": name, "symbol": sym, "paths": [], "proven": True, "explored_paths": 0}
        # The cases partition the inputs (checked: nothing falls outside them all).
        gap = sat_model(solver, [z3.Not(z3.Or(*[c.cond for c in cases]))])
        if gap is not None:
            entry_result["proven"] = False
            entry_result["paths"].append({"outcome": "none", "proven": False, "refuted": "inputs no case of the contract covers", "counterexample": counterexample(gap, mem, args, name, image)})
        # A function whose cases are grouped is explored once per group, under the
        # group's condition (the union of its cases'): then each exploration follows only
        # the paths of its cases, and the values merged along them stay small.
        groups: dict = {}
        for c in cases:
            groups.setdefault(c.group, []).append(c)
        covered = set()
        try:
            for group, group_cases in groups.items():
                assume = (z3.Or(*[c.cond for c in group_cases]),) if group else ()
                outcomes = mx.run_function(lifter, entry, setup, mem, stack=STACK, merge_values=bool(group), assume=assume, bases=(args["a2"],))
                entry_result["explored_paths"] += len(outcomes)
                for out in merge(outcomes):
                    try:
                        met = check_path(solver, out, group_cases, name)
                        covered.update(met)
                        entry_result["paths"].append({"outcome": out.kind, "cases": met, "proven": True})
                    except Refuted as r:
                        entry_result["proven"] = False
                        cx = counterexample(r.model, mem, args, name, image)
                        if cx is not None:
                            cx.update(r.shown)
                        entry_result["paths"].append({"outcome": out.kind, "proven": False, "refuted": r.what, "counterexample": cx})
                        if first:
                            raise StopIteration
        except StopIteration:
            pass
        except mx.ExecError as e:
            entry_result.update(proven=False, error=str(e))
            results.append(entry_result)
            continue
        # Every case of the contract is reached by some path (nothing is unreachable that
        # the contract says happens).
        missing = [] if (first and not entry_result["proven"]) else [
            c.name for c in cases if c.name not in covered and sat_model(solver, [c.cond]) is not None
        ]
        if missing:
            entry_result["proven"] = False
            entry_result["uncovered"] = missing
        entry_result["cases"] = sorted(covered)
        entry_result["seconds"] = round(time.time() - t0, 2)
        results.append(entry_result)
    return results


def main():
    p = argparse.ArgumentParser()
    p.add_argument("object")
    p.add_argument("--ld", required=True)
    p.add_argument("--json")
    p.add_argument("--only", action="append")
    p.add_argument("--first", action="store_true")
    a = p.parse_args()
    t0 = time.time()
    results = run_object(a.object, a.ld, a.only, a.first)
    ok = True
    for r in results:
        state = "PROVEN" if r["proven"] else "REFUTED"
        ok &= r["proven"]
        print(f"{state}: {r['function']} ({r.get('explored_paths', 0)} paths, checked as {len(r['paths'])}; {len(r.get('cases', []))} contract cases; {r.get('seconds', 0)} s)")
        if "error" in r:
            print(f"  cannot execute: {r['error']}")
        for path in r["paths"]:
            if not path["proven"]:
                print(f"  refuted: {path['refuted']}")
                if path["counterexample"]:
                    print(f"  counterexample: {json.dumps(path['counterexample'])}")
        for m in r.get("uncovered", []):
            print(f"  no path reaches: {m}")
    print(f"{'all proven' if ok else 'NOT PROVEN'}: {len(results)} functions in {time.time() - t0:.1f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
