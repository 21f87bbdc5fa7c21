"""The solver's side of symbolic execution: the deterministic resource budget (z3's
rlimit) a unit's queries share, bounded feasibility checks, and the memory reads a
formula makes (for models and substitutions)."""

from __future__ import annotations

import dataclasses
import os

import z3
from lift import ExecError

# Resource units (z3's rlimit, deterministic) that a bounded query may use before its
# answer counts as undecided: a branch's feasibility with merged values (QUICK, then
# both sides are taken), whether a load and a store share their address modulo 4
# (RESIDUE, then the load is read byte by byte). Both sound either way; they only
# trade exploration against solving.
QUICK = 2_000_000


RESIDUE = 20_000_000


UNLIMITED = 1 << 62


# The most one query can be given: z3's rlimit parameter is an unsigned 32-bit number.
QUERY_MAX = (1 << 32) - 1


DEBUG = bool(os.environ.get("NT_PROVE_DEBUG"))


class OverBudget(Exception):
    """A unit's solver work went past its resource budget, or its wall-clock guard fired."""


@dataclasses.dataclass
class Budget:
    """The solver work of one unit of the proof, in z3's resource units (`rlimit`): a count
    of the solver's internal steps, the same on a quiet machine and a loaded one, unlike
    time. Every query of the unit goes through `check`: it may use what is left of `limit`
    (or `cap`, when smaller: the queries whose `unknown` has a meaning of its own, such as
    a feasibility query that counts as feasible when it is not decided cheaply), and what
    it uses is added to `used`. A query that exhausts the unit's budget raises OverBudget,
    naming the unit and the query. `guarded` is set by the caller's wall-clock watchdog
    (validate.prove_unit, against hangs only), which also interrupts the running query:
    the unit then fails the same way; it never decides anything."""

    limit: int
    unit: str = ""
    used: int = 0
    queries: int = 0
    guarded: bool = False

    def check(self, solver: z3.Solver, what: str, cap: int | None = None) -> z3.CheckSatResult:
        if self.guarded:
            raise OverBudget(f"{self.unit}: stopped by the wall-clock guard before {what}")
        left = self.limit - self.used
        if left <= 0:
            raise OverBudget(f"{self.unit}: past its budget of {self.limit} rlimit before {what}")
        mine = min(left, QUERY_MAX, cap if cap is not None else left)
        before = resource_count(solver)
        solver.set("rlimit", mine)
        r = solver.check()
        spent = resource_count(solver) - before
        self.used += spent
        self.queries += 1
        if r == z3.unknown:
            if self.guarded:
                raise OverBudget(f"{self.unit}: stopped by the wall-clock guard during {what}")
            if mine != cap:
                raise OverBudget(
                    f"{self.unit}: {what} not decided within {mine} rlimit"
                    f" (the unit's budget: {self.limit}; {solver.reason_unknown()})"
                )
        return r


def resource_count(solver: z3.Solver) -> int:
    """z3's resource counter for the solver's context (it counts up over every query)."""
    stats = solver.statistics()
    return stats.get_key_value("rlimit count") if "rlimit count" in stats.keys() else 0  # 0: not counted yet


class Reads:
    """Formulas over a byte array that they only read, without the array (Ackermann's
    reduction): every read `Select(array, i)` becomes a fresh byte, and for each two reads
    whose indices may be equal, "equal indices give equal bytes". Satisfiable exactly when
    the formulas are (an array only read is a function, and that is all a function must
    satisfy). Indices that are one term plus different constants are never equal, and need
    no constraint: the table's bytes, all read at the table pointer plus an offset, are
    then only tied to the reads through other pointers. On these formulas z3 decides the
    reduced form many times faster than the array's (docs/prove.md).

    `formulas` is None when the array is not only read in them (a store over it, another
    array): the caller then asks the solver about the array itself."""

    def __init__(self, formulas: list, array: z3.ArrayRef, memo: dict | None = None):
        self.array = array
        found = array_reads(formulas, array, memo)
        self.formulas = None
        if found is None:
            return
        # (Select, index key, fresh byte), in the order found
        self.reads = [(sel, index_key(sel.arg(1)), z3.BitVec(f"{array}@{n}", 8)) for n, sel in enumerate(found)]
        self.subst = Substitution([(sel, v) for sel, _, v in self.reads])
        first: dict = {}
        tie = []
        for sel, key, v in self.reads:
            if key in first:
                tie.append(v == first[key][2])
            else:
                first[key] = (sel, key, v)
        distinct = list(first.values())
        for i, (si, (bi, _), vi) in enumerate(distinct):
            for sj, (bj, _), vj in distinct[i + 1 :]:
                if bi != bj:  # the same terms plus different constants are never equal
                    tie.append(z3.Implies(si.arg(1) == sj.arg(1), vi == vj))
        self.formulas = [self.subst(z3.And(*formulas, *tie))]

    def model(self, m: z3.ModelRef) -> ReadModel:
        return ReadModel(m, self)


def array_reads(formulas: list, array: z3.ArrayRef, memo: dict | None = None) -> list | None:
    """Every `Select(array, i)` in `formulas`, in a fixed order (each once); None when
    another array term occurs (a store over it, another array). Walks z3's terms through
    its C API (no Python object per term). `memo` keeps each formula's reads for the next
    call (with the formula, so that its id cannot be taken by another term)."""
    ctx = array.ctx
    c = ctx.ref()
    target = z3.Z3_get_ast_id(c, array.as_ast())
    found, have = [], set()
    for f in formulas:
        if memo is not None and f.get_id() in memo:
            mine = memo[f.get_id()][1]
        else:
            mine = reads_of(c, f.as_ast(), target)
            if mine is not None:
                mine = [z3.z3._to_expr_ref(r, ctx) for r in mine]
            if memo is not None:
                memo[f.get_id()] = (f, mine)
        if mine is None:
            return None
        for r in mine:
            if r.get_id() not in have:
                have.add(r.get_id())
                found.append(r)
    return found


def reads_of(c, root, target: int) -> list | None:
    """array_reads on one term, as z3's C handles."""
    seen: set = set()
    found = []
    todo = [root]
    while todo:
        e = todo.pop()
        i = z3.Z3_get_ast_id(c, e)
        if i in seen:
            continue
        seen.add(i)
        if z3.Z3_get_ast_kind(c, e) != z3.Z3_APP_AST:
            continue
        if z3.Z3_get_sort_kind(c, z3.Z3_get_sort(c, e)) == z3.Z3_ARRAY_SORT and i != target:
            return None
        app = z3.Z3_to_app(c, e)
        n = z3.Z3_get_app_num_args(c, app)
        if (
            z3.Z3_get_decl_kind(c, z3.Z3_get_app_decl(c, app)) == z3.Z3_OP_SELECT
            and z3.Z3_get_ast_id(c, z3.Z3_get_app_arg(c, app, 0)) == target
        ):
            found.append(e)
            todo.append(z3.Z3_get_app_arg(c, app, 1))
            continue
        todo.extend(z3.Z3_get_app_arg(c, app, k) for k in range(n - 1, -1, -1))
    return found


def index_key(i: z3.BitVecRef) -> tuple:
    """An index as (its terms but the constant, by identity; the constant)."""
    i = z3.simplify(i)
    if z3.is_bv_value(i):
        return ((), i.as_long())
    if z3.is_app_of(i, z3.Z3_OP_BADD):
        const = sum(c.as_long() for c in i.children() if z3.is_bv_value(c)) % (1 << 32)
        return (tuple(c.get_id() for c in i.children() if not z3.is_bv_value(c)), const)
    return ((i.get_id(),), 0)


class ReadModel:
    """A model of `Reads.formulas` as one of the formulas it came from: the array is the
    bytes the model gives its reads (at the indices it gives them), 0 elsewhere."""

    def __init__(self, m: z3.ModelRef, reads: Reads):
        self.m, self.reads = m, reads
        self.bytes: dict = {}
        for sel, _, v in reads.reads:
            self.bytes.setdefault(self.value(reads.subst(sel.arg(1))), self.value(v))

    def value(self, e) -> int:
        return self.m.eval(e, model_completion=True).as_long()

    def eval(self, e, model_completion=True):
        e = self.reads.subst(e)  # the reads the formulas make
        found = array_reads([e], self.reads.array)  # others: the bytes at their indices
        if found is None:
            raise ExecError("a counterexample's value over a written array")
        if found:
            e = Substitution([(sel, z3.BitVecVal(self.bytes.get(self.eval(sel.arg(1)).as_long(), 0), 8)) for sel in found])(e)
        return self.m.eval(e, model_completion=True)


class Substitution:
    """z3's simultaneous substitution, its pairs checked and marshalled once instead of at
    every call (z3.substitute does both in Python each time)."""

    def __init__(self, pairs: list):
        self.n = len(pairs)
        self.ctx = pairs[0][0].ctx if pairs else None
        self.src = (z3.Ast * self.n)(*[a.as_ast() for a, _ in pairs])
        self.dst = (z3.Ast * self.n)(*[b.as_ast() for _, b in pairs])
        self.keep = pairs  # the terms stay alive while their handles are used

    def __call__(self, e):
        if not self.n:
            return e
        return z3.z3._to_expr_ref(z3.Z3_substitute(self.ctx.ref(), e.as_ast(), self.n, self.src, self.dst), self.ctx)


def feasible(solver: z3.Solver, cond: list, budget: Budget, quick: int | None = None) -> bool:
    """Whether `cond` can hold. With `quick` (resource units), a query that needs more
    counts as feasible: taking an infeasible side only costs the work to explore it, and
    its path ends infeasible at its check."""
    if quick is not None:
        q = z3.Solver()
        q.add(*cond)
        return budget.check(q, "a branch's feasibility (bounded)", quick) != z3.unsat
    solver.push()
    solver.add(*cond)
    try:
        r = budget.check(solver, "a branch's feasibility")
    finally:
        solver.pop()
    return r == z3.sat
