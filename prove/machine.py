"""Symbolic execution of Xtensa machine code, through Ghidra's SLEIGH semantics (pypcode)
and z3: the instruction semantics is neither LLVM's nor qemu's.

Every path of a function is executed with symbolic registers and symbolic memory (a z3
array of bytes); a branch whose condition is not decided forks. A path ends at the
function's return (its value: a2), at `ill` (a trap) or at the instruction bound. Each
path records its events in order: every store (address, value, width) and every `memw`.

Windowed calls follow the ISA: `callN` rotates the window by N (the callee's a0..a(15-N)
are the caller's aN..a15, a0 holding the return address), `entry` allocates the frame,
`retw` rotates back (the caller's aN.. are the callee's a0..). The SLEIGH specification
expresses these as user operations (swapN, restoreN, rotateRegWindow, restoreRegWindow);
they are modelled here as the ISA defines them.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import sys
from collections.abc import Callable

import pypcode
import z3

OP = pypcode.OpCode
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


@dataclasses.dataclass
class Store:
    addr: z3.BitVecRef
    value: z3.BitVecRef
    width: int  # bytes


@dataclasses.dataclass
class Barrier:
    pass


@dataclasses.dataclass
class Outcome:
    kind: str  # "return", "trap", "bound"
    cond: list  # path condition (list of z3 booleans)
    events: list  # Store | Barrier, in order
    ret: z3.BitVecRef | None
    mem: z3.ArrayRef
    pc: int
    # Addresses the executor took to be outside the stack region (see State.load_byte):
    # the caller proves them from its preconditions.
    assumed: list = dataclasses.field(default_factory=list)
    # a3 at the return (the high word of a 64-bit result).
    ret_hi: z3.BitVecRef | None = None
    # What the path must show of the functions it called through a summary (their
    # preconditions): [(condition, what)], for the caller to prove.
    obligations: list = dataclasses.field(default_factory=list)


class Image:
    """The linked device object: code bytes, symbols."""

    def __init__(self, path: str):
        from elftools.elf.elffile import ELFFile

        with open(path, "rb") as f:
            elf = ELFFile(f)
            text = elf.get_section_by_name(".text")
            self.base = text["sh_addr"]
            self.code = text.data()
            self.symbols = {}
            for s in elf.get_section_by_name(".symtab").iter_symbols():
                if s.name:
                    self.symbols[s.name] = (s["st_value"], s["st_size"])

    def contains(self, addr: int, n: int) -> bool:
        return self.base <= addr and addr + n <= self.base + len(self.code)

    def read(self, addr: int, n: int) -> int:
        off = addr - self.base
        return int.from_bytes(self.code[off : off + n], "little")


class Lifter:
    def __init__(self, image: Image):
        self.ctx = pypcode.Context("Xtensa:LE:32:default")
        self.image = image
        self.cache: dict[int, tuple[list, int]] = {}
        self.orders: dict[int, dict[int, int]] = {}
        self.reg = {name: (vn.offset, vn.size) for name, vn in self.ctx.registers.items()}

    def at(self, pc: int):
        if pc not in self.cache:
            if not self.image.contains(pc, 2):
                raise ExecError(f"execution left the code at {pc:#x}")
            off = pc - self.image.base
            tx = self.ctx.translate(self.image.code[off:], pc, max_instructions=1)
            ops = list(tx.ops)
            length = ops[0].inputs[0].size  # IMARK
            self.cache[pc] = (ops[1:], length)
        return self.cache[pc]

    def successors(self, pc: int) -> list[int]:
        """Where control may go after the instruction at `pc` (calls fall through: the
        callee is ordered on its own)."""
        try:
            ops, length = self.at(pc)
        except Exception:
            return []
        out = [op.inputs[0].offset for op in ops if op.opcode in (OP.BRANCH, OP.CBRANCH) and op.inputs[0].space.name == "ram"]
        internal = any(op.opcode in (OP.BRANCH, OP.CBRANCH) and op.inputs[0].space.name == "const" for op in ops)
        last = ops[-1] if ops else None
        ends = last is not None and (
            last.opcode in (OP.BRANCH, OP.RETURN, OP.BRANCHIND)
            or (last.opcode == OP.CALLOTHER and last.inputs[0].getUserDefinedOpName() == "ill")
        )
        if internal or not ends:
            out.append(pc + length)
        return [t for t in out if self.image.contains(t, 2)]

    def order(self, entry: int) -> dict[int, int]:
        """The reverse postorder of the function at `entry`: on a graph without cycles,
        every instruction comes after all the instructions that can reach it, so a path
        waiting at a join is taken up only when every path that can still reach it has."""
        if entry not in self.orders:
            post, seen = [], {entry}
            stack = [(entry, iter(self.successors(entry)))]
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    post.append(node)
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, iter(self.successors(nxt))))
            self.orders[entry] = {pc: i for i, pc in enumerate(reversed(post))}
        return self.orders[entry]


class ExecError(Exception):
    pass


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


def bv(v: int, bits: int) -> z3.BitVecRef:
    return z3.BitVecVal(v, bits)


@dataclasses.dataclass(frozen=True)
class Stack:
    """The stack below the caller's stack pointer `sp`: the callee's frames, `[sp - size,
    sp)`, whose stores the caller cannot see, and the region the executor takes no
    pointer argument to reach, `[sp - size, sp + args)` (the frames and the arguments
    passed in memory)."""

    sp: int
    size: int = 0x1000
    args: int = 16

    def holds(self, a: z3.BitVecRef) -> bool:
        return z3.is_bv_value(a) and self.sp - self.size <= a.as_long() < self.sp + self.args

    def frame(self, a: z3.BitVecRef, n: int) -> bool:
        return z3.is_bv_value(a) and self.sp - self.size <= a.as_long() and a.as_long() + n <= self.sp

    def outside(self, p: z3.BitVecRef, n: int):
        """All of `[p, p + n)` outside the region (modulo 2^32): `p` is not in it and the
        region starts at least `n` bytes after `p`."""
        lo, hi = self.sp - self.size, self.sp + self.args
        return z3.And(z3.UGE(p - lo, hi - lo), z3.UGE(z3.BitVecVal(lo, 32) - p, n))


class Frame:
    """One register window's view: a0..a15 and the rest of the register space."""

    def __init__(self, regs: dict):
        self.regs = regs

    def copy(self) -> Frame:
        return Frame(dict(self.regs))


class State:
    def __init__(self, lifter: Lifter, mem: z3.ArrayRef, frame: Frame, pc: int):
        self.lifter = lifter
        self.mem = mem
        self.initial = mem
        self.writes: list = []  # (address, byte), oldest first
        self.frames = [frame]
        self.returns: list = []  # (pc, op index, rotation) of each caller
        self.pc = pc
        self.index = 0
        self.cond: list = []
        self.events: list = []
        self.unique: dict = {}
        self.steps = 0
        self.pending_rotation = 0
        self.fresh = 0
        self.entries = [pc]  # the entry of each active function, outermost first
        self.assumed: list = []  # addresses taken to be outside the stack region
        self.stack: Stack | None = None
        # The unit's solver budget (shared by every state of the unit).
        self.budget: Budget | None = None
        # With values merged (run_function's merge_values): the resource units a
        # feasibility query may use, after which both sides are taken (QUICK); and the
        # pointers whose constant offsets the addresses are pinned to (State.pin).
        self.quick: int | None = None
        self.bases: list = []
        self.frame_bytes: dict[int, z3.BitVecRef] = {}  # the frame's bytes (State.store)
        # Functions taken at their proven word instead of executed (run_function's
        # `summaries`), and the preconditions their calls must meet.
        self.summaries: dict = {}
        # Numbers the summarized calls' fresh results, one count for every state of a run.
        self.calls = itertools.count()
        self.obligations: list = []
        self.word_aliasing = False

    def copy(self) -> State:
        s = State.__new__(State)
        s.lifter = self.lifter
        s.mem = self.mem
        s.initial = self.initial
        s.writes = list(self.writes)
        s.frames = [f.copy() for f in self.frames]
        s.returns = list(self.returns)
        s.pc = self.pc
        s.index = self.index
        s.cond = list(self.cond)
        s.events = list(self.events)
        s.unique = dict(self.unique)
        s.steps = self.steps
        s.pending_rotation = self.pending_rotation
        s.fresh = self.fresh
        s.entries = list(self.entries)
        s.assumed = list(self.assumed)
        s.stack = self.stack
        s.quick = self.quick
        s.budget = self.budget
        s.bases = self.bases
        s.frame_bytes = dict(self.frame_bytes)
        s.summaries = self.summaries
        s.calls = self.calls
        s.obligations = list(self.obligations)
        s.word_aliasing = self.word_aliasing
        return s

    # --- registers and memory -------------------------------------------------------

    def reg_name(self, name: str) -> z3.BitVecRef:
        off, size = self.lifter.reg[name]
        return self.get_reg(off, size)

    def set_reg_name(self, name: str, v: z3.BitVecRef):
        off, size = self.lifter.reg[name]
        self.set_reg(off, size, v)

    def get_reg(self, off: int, size: int) -> z3.BitVecRef:
        regs = self.frames[-1].regs
        if (off, size) in regs:
            return regs[(off, size)]
        # Part of a wider register (s8i stores the low byte of a 32-bit register).
        for (o, n), v in regs.items():
            if o <= off and off + size <= o + n:
                lo = 8 * (off - o)
                return z3.Extract(lo + 8 * size - 1, lo, v)
        self.fresh += 1
        regs[(off, size)] = z3.BitVec(f"reg_{off:x}_{size}_{len(self.frames)}_{self.fresh}", 8 * size)
        return regs[(off, size)]

    def set_reg(self, off: int, size: int, v: z3.BitVecRef):
        regs = self.frames[-1].regs
        # A write of part of a wider register updates those bytes of it.
        for (o, n), old in list(regs.items()):
            if (o, n) != (off, size) and o <= off and off + size <= o + n:
                lo, hi = 8 * (off - o), 8 * (off - o + size)
                parts = []
                if hi < 8 * n:
                    parts.append(z3.Extract(8 * n - 1, hi, old))
                parts.append(v)
                if lo > 0:
                    parts.append(z3.Extract(lo - 1, 0, old))
                regs[(o, n)] = z3.simplify(z3.Concat(*parts)) if len(parts) > 1 else v
                return
            if (o, n) != (off, size) and off <= o and o + n <= off + size:
                del regs[(o, n)]  # a narrower view, now overwritten
        regs[(off, size)] = v

    def load(self, addr: z3.BitVecRef, n: int) -> z3.BitVecRef:
        a = z3.simplify(addr)
        if z3.is_bv_value(a) and self.lifter.image.contains(a.as_long(), n):
            return bv(self.lifter.image.read(a.as_long(), n), 8 * n)
        if n == 4:
            word = self.load_word(a)
            if word is not None:
                return word
        parts = [self.load_byte(z3.simplify(a + i)) for i in range(n)]
        return z3.Concat(*reversed(parts)) if n > 1 else parts[0]

    def load_word(self, a: z3.BitVecRef) -> z3.BitVecRef | None:
        """A 4-byte load at an address that is not a constant, store by store instead of
        byte by byte (with run_function's `word_aliasing`; `word_after`), where the path
        puts each store that is not at a constant distance at the same address modulo 4.
        The same value as `load_byte`'s; None (bytes, then) otherwise."""
        if not self.word_aliasing or z3.is_bv_value(a):
            return None
        word = word_after(self.initial, self.stores(), a, lambda a, w: self.same_residue(a - w))
        if word is None:
            return None
        if self.frame_bytes:
            self.assume(a)
        return word

    def stores(self) -> list:
        """The stores outside the frame, whole, oldest first: [(address, value, bytes)]."""
        return [(e.addr, e.value, e.width) for e in self.events if isinstance(e, Store)]

    def same_residue(self, d: z3.BitVecRef) -> bool:
        """Whether the path makes `d` a multiple of 4 (decided within RESIDUE resource
        units; undecided, the word-wise model is not used)."""
        q = z3.Solver()
        q.add(*self.cond, z3.Extract(1, 0, d) != 0)
        return self.budget.check(q, "whether a load and a store are 4-aligned alike", RESIDUE) == z3.unsat

    def load_byte(self, a: z3.BitVecRef) -> z3.BitVecRef:
        """The byte at `a`: the newest store that must be there, under an if for each store
        that may be (a read over writes; the same value as reading the array of stores,
        decided here when the addresses differ by a constant).

        With a stack region (run_function's `stack`), a constant address inside it and
        an address that is not a constant are taken not to alias: the byte at the one
        skips the stores to the other, and the address that is not a constant is recorded
        in `assumed`, for the caller to prove outside the region. The function's own frame
        is kept apart from the other stores (`frame_bytes`)."""
        if self.stack is not None and self.stack.frame(a, 1):
            for wa, _ in self.writes:
                if not z3.is_bv_value(wa):
                    self.assume(wa)
            return self.frame_bytes.get(a.as_long(), z3.Select(self.initial, a))
        if self.frame_bytes and not z3.is_bv_value(a):
            self.assume(a)
        v = z3.Select(self.initial, a)
        here = self.stack is not None and self.stack.holds(a)
        for wa, wv in self.writes:
            d = z3.simplify(a - wa)
            if z3.is_bv_value(d):
                if d.as_long() == 0:
                    v = wv
                continue
            if here and not z3.is_bv_value(wa):
                self.assume(wa)
                continue
            v = z3.If(a == wa, wv, v)
        return v

    def pin(self, addr: z3.BitVecRef) -> z3.BitVecRef:
        """`addr` as base + a constant, when it is one of `bases` plus an offset that is not
        a constant but that the path condition fixes (the victim record of a refill, once
        the path has decided which it is): the same address, in a form the memory model
        resolves against the other accesses to the table without the solver."""
        addr = z3.simplify(addr)
        if not self.bases or z3.is_bv_value(addr):
            return addr
        for base in self.bases:
            off = z3.simplify(addr - base)
            if z3.is_bv_value(off):
                return addr
            q = z3.Solver()
            q.add(*self.cond)
            if self.budget.check(q, "an offset from the table to pin", self.quick) != z3.sat:
                continue
            c = q.model().eval(off, model_completion=True)
            q.add(off != c)
            if self.budget.check(q, "whether the path fixes that offset", self.quick) == z3.unsat:
                return z3.simplify(base + c)
        return addr

    def assume(self, a: z3.BitVecRef):
        if not any(a.eq(b) for b in self.assumed):
            self.assumed.append(a)

    def store(self, addr: z3.BitVecRef, v: z3.BitVecRef, n: int):
        addr = z3.simplify(addr)
        if self.stack is not None and self.stack.frame(addr, n):
            # The function's own frame: kept apart (a constant address, which no other
            # access reaches), and not a store its caller can see.
            for i in range(n):
                self.frame_bytes[addr.as_long() + i] = z3.simplify(z3.Extract(8 * i + 7, 8 * i, v))
            return
        for i in range(n):
            byte = z3.simplify(z3.Extract(8 * i + 7, 8 * i, v))
            at = z3.simplify(addr + i)
            self.mem = z3.Store(self.mem, at, byte)
            self.writes.append((at, byte))
        self.events.append(Store(addr, z3.simplify(v), n))

    # --- varnodes -------------------------------------------------------------------

    def read(self, vn) -> z3.BitVecRef:
        space = vn.space.name
        bits = 8 * vn.size
        if space == "const":
            return bv(vn.offset, bits)
        if space == "register":
            return self.get_reg(vn.offset, vn.size)
        if space == "unique":
            return self.unique[(vn.offset, vn.size)]
        if space == "ram":
            return self.load(bv(vn.offset, 32), vn.size)
        raise ExecError(f"read of space {space}")

    def write(self, vn, v: z3.BitVecRef):
        v = z3.simplify(v)
        space = vn.space.name
        if space == "register":
            self.set_reg(vn.offset, vn.size, v)
        elif space == "unique":
            self.unique[(vn.offset, vn.size)] = v
        elif space == "ram":
            self.store(bv(vn.offset, 32), v, vn.size)
        else:
            raise ExecError(f"write to space {space}")


def word_after(initial: z3.ArrayRef, stores: list, a: z3.BitVecRef, aligned: Callable) -> z3.BitVecRef | None:
    """The 4-byte word at `a` of the byte array `initial` after `stores` [(address, value,
    bytes)], in order, store by store: a store at a constant distance from `a` overlays the
    bytes it covers; any other must be a 4-byte store at `w` for which `aligned(a, w)` holds
    (the caller knows, or will prove, that `a` and `w` are equal modulo 4), and then the
    word is that store's or does not overlap it: one if per store, instead of one per pair
    of bytes. None when a store is neither."""
    parts = [z3.Select(initial, z3.simplify(a + i)) for i in range(4)]
    for w, v, n in stores:
        d = z3.simplify(a - w)
        if z3.is_bv_value(d):
            for i in range(4):
                k = (d.as_long() + i) % (1 << 32)
                if k < n:
                    parts[i] = z3.simplify(z3.Extract(8 * k + 7, 8 * k, v))
            continue
        if n != 4 or not aligned(a, w):
            return None
        parts = [z3.If(a == w, z3.Extract(8 * i + 7, 8 * i, v), p) for i, p in enumerate(parts)]
    return z3.Concat(*reversed(parts))


def resize(v: z3.BitVecRef, bits: int) -> z3.BitVecRef:
    n = v.size()
    if n == bits:
        return v
    if n > bits:
        return z3.Extract(bits - 1, 0, v)
    return z3.ZeroExt(bits - n, v)


def boolean(b) -> z3.BitVecRef:
    return z3.If(b, bv(1, 8), bv(0, 8))


def shift(kind, a, s):
    s = resize(s, a.size())
    return kind(a, s)


BINARY: dict = {
    OP.INT_ADD: lambda a, b: a + b,
    OP.INT_SUB: lambda a, b: a - b,
    OP.INT_AND: lambda a, b: a & b,
    OP.INT_OR: lambda a, b: a | b,
    OP.INT_XOR: lambda a, b: a ^ b,
    OP.INT_MULT: lambda a, b: a * b,
    OP.INT_DIV: lambda a, b: z3.UDiv(a, b),
    OP.INT_REM: lambda a, b: z3.URem(a, b),
    OP.INT_SDIV: lambda a, b: a / b,
    OP.INT_SREM: lambda a, b: z3.SRem(a, b),
    OP.INT_LEFT: lambda a, b: shift(lambda x, y: x << y, a, b),
    OP.INT_RIGHT: lambda a, b: shift(z3.LShR, a, b),
    OP.INT_SRIGHT: lambda a, b: shift(lambda x, y: x >> y, a, b),
    OP.INT_EQUAL: lambda a, b: boolean(a == b),
    OP.INT_NOTEQUAL: lambda a, b: boolean(a != b),
    OP.INT_LESS: lambda a, b: boolean(z3.ULT(a, b)),
    OP.INT_LESSEQUAL: lambda a, b: boolean(z3.ULE(a, b)),
    OP.INT_SLESS: lambda a, b: boolean(a < b),
    OP.INT_SLESSEQUAL: lambda a, b: boolean(a <= b),
    OP.INT_CARRY: lambda a, b: boolean(z3.ULT(a + b, a)),
    OP.INT_SCARRY: lambda a, b: boolean(z3.Not(z3.BVAddNoOverflow(a, b, True))),
    OP.INT_SBORROW: lambda a, b: boolean(z3.Not(z3.BVSubNoUnderflow(a, b, True))),
    OP.BOOL_AND: lambda a, b: a & b,
    OP.BOOL_OR: lambda a, b: a | b,
    OP.BOOL_XOR: lambda a, b: a ^ b,
}


def popcount(v):
    return sum(z3.ZeroExt(v.size() - 1, z3.Extract(i, i, v)) for i in range(v.size()))


def lzcount(v):
    n = v.size()
    r = bv(n, n)
    for i in range(n):
        r = z3.If(z3.Extract(i, i, v) == 1, bv(n - 1 - i, n), r)
    return r


UNARY: dict = {
    OP.COPY: lambda a, out: a,
    OP.INT_ZEXT: lambda a, out: z3.ZeroExt(out - a.size(), a),
    OP.INT_SEXT: lambda a, out: z3.SignExt(out - a.size(), a),
    OP.INT_NEGATE: lambda a, out: ~a,
    OP.INT_2COMP: lambda a, out: -a,
    OP.BOOL_NEGATE: lambda a, out: a ^ 1,
    OP.POPCOUNT: lambda a, out: resize(popcount(a), out),
    OP.LZCOUNT: lambda a, out: resize(lzcount(a), out),
}

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
