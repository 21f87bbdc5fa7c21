"""Exploring every path of a function: stepping p-code, forking on undecided branches,
merging paths that meet, windowed calls and returns as the ISA defines them, and the
summaries of proven callees (machine.py holds one path's state)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable

import z3
from lift import OP, ExecError, Lifter
from machine import BINARY, UNARY, Barrier, Frame, Outcome, Stack, State, Store, bv, resize
from solving import DEBUG, QUICK, UNLIMITED, Budget, feasible

WINDOW = [f"a{i}" for i in range(16)]


def run_function(
    lifter: Lifter,
    entry: int,
    frame_regs: Callable[[State], None],
    mem: z3.ArrayRef,
    bound: int = 4000,
    stack: Stack | None = None,
    merge_values: bool = False,
    assume: tuple = (),
    bases: tuple = (),
    summaries: dict | None = None,
    word_aliasing: bool = False,
    budget: Budget | None = None,
) -> list[Outcome]:
    """Every path of the function at `entry`. `frame_regs` sets the argument registers of
    a fresh state; `stack`, if given, is the caller's stack (see State.load_byte);
    `assume`, the conditions every path starts with (a case of the caller's).

    Paths are taken up in the reverse postorder of the code (Lifter.order), so that the
    paths that meet at an instruction are all there when it is taken up; there, those in
    the same state continue as one, under the disjunction of their conditions. With
    `merge_values`, so do those that differ only in values (`merge`): each register,
    stored value or event value that differs becomes an if on the condition of one of
    them (state merging: without it the span computation's selects, each a branch on this
    core, would double the paths at every one; with it, the scans of the other functions
    give the solver harder formulas than the paths they save). Then a feasibility query
    that needs more than QUICK resource units counts as feasible (a path that ends infeasible is
    dropped by its check), and an address at a non-constant offset from one of `bases`
    that the path fixes is pinned to that offset (State.pin). A call of a function in
    `summaries` (entry -> Summary) is not executed: the path takes its contract instead.
    With `word_aliasing`, 4-byte loads are resolved against 4-byte stores word by word
    where the path aligns them (State.load_word)."""
    import heapq

    start = State(lifter, mem, Frame({}), entry)
    start.stack = stack
    start.budget = budget if budget is not None else Budget(UNLIMITED)
    if merge_values:
        start.quick = QUICK
        start.bases = list(bases)
    start.cond = list(assume)
    start.summaries = dict(summaries or {})
    start.word_aliasing = word_aliasing
    frame_regs(start)
    heap: list = []
    counter = 0

    def key(st):
        chain = [
            lifter.order(f).get(pc, 1 << 30) for f, (pc, _, _) in zip(st.entries, st.returns, strict=False)
        ]  # the callers' entries
        return (*chain, lifter.order(st.entries[-1]).get(st.pc, 1 << 30), st.index)

    def push(st):
        nonlocal counter
        counter += 1
        heapq.heappush(heap, (key(st), counter, st))

    push(start)
    done: list[Outcome] = []
    solver = z3.Solver()
    while heap:
        k, _, s = heapq.heappop(heap)
        # Everything waiting at the same place that can merge with s does.
        same = []
        while heap and heap[0][0] == k:
            same.append(heapq.heappop(heap)[2])
        joined = 1
        for other in same:
            merged = merge(s, other, merge_values) if s.index == 0 and other.index == 0 else None
            if merged is not None:
                s, joined = merged, joined + 1
            else:
                push(other)
        if DEBUG:
            print(f"  at {s.pc:#x}.{s.index}: {joined} paths as one, {len(heap)} waiting, {len(done)} done", file=sys.stderr)
        out = step_path(s, push, solver, bound)
        if out is not None:
            done.append(out)
    return done


def merge(a: State, b: State, values: bool) -> State | None:
    """One state for `a` and `b` (at the same instruction), or None when they differ in
    more than values (their calls, their store addresses or widths, their barriers) or,
    unless `values`, in anything but their conditions."""
    if (a.returns, a.pending_rotation, a.entries) != (b.returns, b.pending_rotation, b.entries) or len(a.frames) != len(b.frames):
        return None
    if len(a.writes) != len(b.writes) or len(a.events) != len(b.events):
        return None
    if not all(wa.eq(wb) for (wa, _), (wb, _) in zip(a.writes, b.writes, strict=True)):
        return None
    for x, y in zip(a.events, b.events, strict=True):
        if type(x) is not type(y):
            return None
        if isinstance(x, Store) and not (x.width == y.width and x.addr.eq(y.addr)):
            return None
    if any(fa.regs.keys() != fb.regs.keys() for fa, fb in zip(a.frames, b.frames, strict=True)):
        return None
    n = 0
    while n < min(len(a.cond), len(b.cond)) and a.cond[n].eq(b.cond[n]):
        n += 1
    only_a, only_b = a.cond[n:], b.cond[n:]
    if not only_a or not only_b:
        return None
    ca = z3.And(*only_a) if len(only_a) > 1 else only_a[0]
    cb = z3.And(*only_b) if len(only_b) > 1 else only_b[0]

    def pick(x, y):
        return x if x.eq(y) else z3.If(ca, x, y)

    if not values:
        same = a.frame_bytes.keys() == b.frame_bytes.keys() and all(v.eq(b.frame_bytes[k]) for k, v in a.frame_bytes.items())
        same &= all(va.eq(vb) for (_, va), (_, vb) in zip(a.writes, b.writes, strict=True))
        same &= all(isinstance(x, Barrier) or x.value.eq(y.value) for x, y in zip(a.events, b.events, strict=True))
        same &= all(v.eq(fb.regs[r]) for fa, fb in zip(a.frames, b.frames, strict=True) for r, v in fa.regs.items())
        if not same:
            return None

    m = a.copy()
    m.cond = a.cond[:n] + [z3.Or(ca, cb)]
    m.steps = max(a.steps, b.steps)
    for fm, fb in zip(m.frames, b.frames, strict=True):
        for r, v in fm.regs.items():
            fm.regs[r] = pick(v, fb.regs[r])
    for at in set(a.frame_bytes) | set(b.frame_bytes):
        unset = z3.Select(a.initial, z3.BitVecVal(at, 32))
        m.frame_bytes[at] = pick(a.frame_bytes.get(at, unset), b.frame_bytes.get(at, unset))
    m.writes = [(wa, pick(va, vb)) for (wa, va), (_, vb) in zip(a.writes, b.writes, strict=True)]
    m.mem = m.initial
    for wa, wv in m.writes:
        m.mem = z3.Store(m.mem, wa, wv)
    m.events = [
        x if isinstance(x, Barrier) else Store(x.addr, pick(x.value, y.value), x.width)
        for x, y in zip(a.events, b.events, strict=True)
    ]
    for x in b.assumed:
        m.assume(x)
    # Each side's obligations hold on its own side.
    m.obligations = [(z3.Implies(ca, c), w) for c, w in a.obligations] + [(z3.Implies(cb, c), w) for c, w in b.obligations]
    return m


def branch(s: State, op, push, solver: z3.Solver) -> bool:
    """A conditional branch: taken, not taken, or (both feasible) forked, the two paths
    pushed. Returns True when it forked."""
    c = z3.simplify(s.read(op.inputs[1]) != 0)
    if z3.is_true(c):
        jump(s, op.inputs[0])
        return False
    if z3.is_false(c):
        return False
    t_ok = feasible(solver, s.cond + [c], s.budget, s.quick)
    f_ok = feasible(solver, s.cond + [z3.Not(c)], s.budget, s.quick)
    if t_ok and f_ok:
        other = s.copy()
        other.cond.append(z3.Not(c))
        s.cond.append(c)
        jump(s, op.inputs[0])
        for st in (s, other):
            settle(st)
            push(st)
        return True
    if t_ok:
        s.cond.append(c)
        jump(s, op.inputs[0])
    else:
        s.cond.append(z3.Not(c))
    return False


def user_op(s: State, op) -> bool:
    """A SLEIGH user-defined operation. Returns True when it traps (`ill`)."""
    name = op.inputs[0].getUserDefinedOpName()
    if name in ("memw", "extw"):
        s.events.append(Barrier())
    elif name == "ill":
        return True
    elif name in ("swap4", "swap8", "swap12"):
        s.pending_rotation = int(name[4:])
    elif name in ("restore4", "restore8", "restore12", "rotateRegWindow", "restoreRegWindow"):
        # rotateRegWindow (entry) and restoreRegWindow (retw) act on the window
        # base, which call() and ret() model; restoreN follows a return.
        pass
    elif name in ("isync", "dsync", "esync", "rsync"):
        pass
    else:
        raise ExecError(f"unmodelled operation {name} at {s.pc:#x}")
    return False


def step_path(s: State, push, solver: z3.Solver, bound: int) -> Outcome | None:
    """Runs `s` to its next conditional branch (pushing what continues, and returning
    None) or to the end of its path (returning the outcome)."""
    while True:
        ops, length = s.lifter.at(s.pc)
        if s.index == 0:
            s.unique = {}  # temporaries do not outlive their instruction
            s.steps += 1
            if s.steps > bound:
                return outcome(s, "bound")
        if s.index >= len(ops):
            s.pc, s.index = s.pc + length, 0
            continue
        op = ops[s.index]
        s.index += 1
        code = op.opcode
        if code in BINARY:
            a, b = s.read(op.inputs[0]), s.read(op.inputs[1])
            s.write(op.output, BINARY[code](a, b))
        elif code in UNARY:
            s.write(op.output, UNARY[code](s.read(op.inputs[0]), 8 * op.output.size))
        elif code == OP.SUBPIECE:
            v = s.read(op.inputs[0])
            lo = 8 * op.inputs[1].offset
            s.write(
                op.output,
                z3.Extract(min(lo + 8 * op.output.size, v.size()) - 1, lo, v) if lo < v.size() else bv(0, 8 * op.output.size),
            )
        elif code == OP.PIECE:
            s.write(op.output, z3.Concat(s.read(op.inputs[0]), s.read(op.inputs[1])))
        elif code == OP.LOAD:
            s.write(op.output, s.load(s.pin(resize(s.read(op.inputs[1]), 32)), op.output.size))
        elif code == OP.STORE:
            v = s.read(op.inputs[2])
            s.store(s.pin(resize(s.read(op.inputs[1]), 32)), v, op.inputs[2].size)
        elif code == OP.BRANCH:
            jump(s, op.inputs[0])
        elif code == OP.CBRANCH:
            if branch(s, op, push, solver):
                return None
        elif code == OP.BRANCHIND:
            s.pc, s.index = concrete(s.read(op.inputs[0])), 0
        elif code in (OP.CALL, OP.CALLIND):
            target = op.inputs[0].offset if code == OP.CALL else concrete(s.read(op.inputs[0]))
            call(s, target)
        elif code == OP.RETURN:
            if not s.returns:
                return outcome(s, "return")
            ret(s)
        elif code == OP.CALLOTHER:
            if user_op(s, op):
                return outcome(s, "trap")
        else:
            raise ExecError(f"unmodelled p-code {code} at {s.pc:#x}")


def outcome(s: State, kind: str) -> Outcome:
    ret = kind == "return"
    return Outcome(
        kind,
        s.cond,
        s.events,
        s.reg_name("a2") if ret else None,
        s.mem,
        s.pc,
        s.assumed,
        ret_hi=s.reg_name("a3") if ret else None,
        obligations=s.obligations,
    )


def settle(s: State):
    """Moves a state that branched inside an instruction's p-code to the start of the
    next instruction when nothing of its current one is left (so that paths can meet)."""
    ops, length = s.lifter.at(s.pc)
    if s.index >= len(ops):
        s.pc, s.index = s.pc + length, 0


def concrete(v: z3.BitVecRef) -> int:
    v = z3.simplify(v)
    if not z3.is_bv_value(v):
        raise ExecError(f"an indirect target that is not a constant: {v}")
    return v.as_long()


def jump(s: State, target):
    if target.space.name == "const":
        # A branch inside the instruction's p-code, relative to the current op.
        s.index = s.index - 1 + z3.BitVecVal(target.offset, 64).as_signed_long()
    else:
        s.pc, s.index = target.offset, 0


def call(s: State, target: int):
    """A windowed call: the callee sees the caller's a[N]..a15 as its a0..a(15-N)."""
    n = s.pending_rotation
    if n == 0:
        raise ExecError(f"a call0 to {target:#x}: this object is windowed")
    s.pending_rotation = 0
    if target in s.summaries:
        summarize(s, n, s.summaries[target])
        return
    regs = {s.lifter.reg[WINDOW[i]]: s.get_reg(*s.lifter.reg[WINDOW[i + n]]) for i in range(16 - n)}
    s.returns.append((s.pc, s.index, n))
    s.entries.append(target)
    s.frames.append(Frame(regs))
    s.pc, s.index = target, 0


@dataclasses.dataclass
class Summary:
    """A function taken at its word: `contract(args, memory, tag)` gives, for the callee's
    a0..a(15-N) and the memory at the call (outside the caller's frame: the initial array
    and the stores made to it since, State.stores), the results it leaves in its a2, a3,
    ... (fresh values, named with `tag`), the facts its proven contract states of them,
    and the preconditions the call must meet ([(condition, what)]). Its caller's a[N]..a15 are
    then the callee's final a0..a(15-N): the results where the callee returns them, and
    values nothing is known of elsewhere. The summarized function must store nothing
    (its own proof shows it)."""

    name: str
    contract: Callable


def summarize(s: State, n: int, summary: Summary):
    callee = [s.get_reg(*s.lifter.reg[WINDOW[i + n]]) for i in range(16 - n)]
    tag = f"{summary.name}_{next(s.calls)}"
    results, facts, obligations = summary.contract(callee, (s.initial, s.stores()), tag)
    for i in range(n, 16):
        s.set_reg(*s.lifter.reg[WINDOW[i]], z3.BitVec(f"{tag}_a{i - n}", 32))
    for i, v in enumerate(results):
        s.set_reg(*s.lifter.reg[WINDOW[n + 2 + i]], v)
    s.cond.extend(facts)
    s.obligations.extend(obligations)


def ret(s: State):
    pc, index, n = s.returns.pop()
    s.entries.pop()
    values = [s.get_reg(*s.lifter.reg[WINDOW[i]]) for i in range(16 - n)]
    s.frames.pop()
    for i, v in enumerate(values):
        s.set_reg(*s.lifter.reg[WINDOW[i + n]], v)
    s.pc, s.index = pc, index
