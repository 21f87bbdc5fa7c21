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

This file holds one path's state and the operations' semantics; lift.py the lifting,
explore.py the exploration of every path, solving.py the solver's budget and reads.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable

import z3
from lift import OP, ExecError, Lifter
from solving import RESIDUE, Budget


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
