"""Checking one explored path against the contract's cases: the claims a path must show
(outcome, return value, every store and barrier in order), proven with the solver under a
budget, and a counterexample, written as a replayable vector, for a path that breaks one."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import machine as mx
import z3
from contract import CTX_SIZE, RECORD, RECORDS, REG, STACK, Case, Claim, ExpectedBarrier, ExpectedStore, init_inputs, rd, u
from solving import DEBUG, Budget, Reads

if TYPE_CHECKING:
    from functions import Function


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

    def __init__(self, budget: Budget, memory: z3.ArrayRef, precondition=None, replay=()):
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
    reads = Reads(formulas, solver.memory, solver.reads)
    if reads.formulas is not None:
        s = z3.SolverFor("QF_BV")
        s.add(*reads.formulas)
    else:
        s = z3.SolverFor("QF_ABV")
        s.add(*formulas)
    r = solver.budget.check(s, what)
    if DEBUG:
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
        if DEBUG:
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


def value_checks(w: ExpectedStore):
    """What the value a store makes must satisfy: [(what, test)], `w.check`'s or
    equality with `w.value`."""
    return w.check if w.check is not None else [("", lambda x: x == w.value)]


def halves_checks(w: ExpectedStore):
    """The same, for a 64-bit value stored as two words (low, high)."""
    return [(what, lambda lo, hi, t=t: t(z3.Concat(hi, lo))) for what, t in value_checks(w)]


def contract_value(w: ExpectedStore):
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
        if isinstance(w, ExpectedBarrier):
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
            if DEBUG:
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
