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
from typing import Callable

import pypcode
import z3

OP = pypcode.OpCode


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


class ExecError(Exception):
    pass


def bv(v: int, bits: int) -> z3.BitVecRef:
    return z3.BitVecVal(v, bits)


class Frame:
    """One register window's view: a0..a15 and the rest of the register space."""

    def __init__(self, regs: dict):
        self.regs = regs

    def copy(self) -> "Frame":
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

    def copy(self) -> "State":
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
        parts = [self.load_byte(z3.simplify(a + i)) for i in range(n)]
        return z3.Concat(*reversed(parts)) if n > 1 else parts[0]

    def load_byte(self, a: z3.BitVecRef) -> z3.BitVecRef:
        """The byte at `a`: the newest store that must be there, under an if for each store
        that may be (a read over writes; the same value as reading the array of stores,
        decided here when the addresses differ by a constant)."""
        v = z3.Select(self.initial, a)
        for wa, wv in self.writes:
            d = z3.simplify(a - wa)
            if z3.is_bv_value(d):
                if d.as_long() == 0:
                    v = wv
                continue
            v = z3.If(a == wa, wv, v)
        return v

    def store(self, addr: z3.BitVecRef, v: z3.BitVecRef, n: int):
        addr = z3.simplify(addr)
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
) -> list[Outcome]:
    """Every path of the function at `entry`. `frame_regs` sets the argument registers of
    a fresh state. Paths that meet at an instruction in the same state but for their path
    conditions continue as one, under the disjunction of the conditions (the scans over
    the table would otherwise fork at every half-word compare)."""
    import heapq

    start = State(lifter, mem, Frame({}), entry)
    frame_regs(start)
    heap: list = []
    counter = 0

    def push(st):
        nonlocal counter
        counter += 1
        heapq.heappush(heap, (len(st.returns), st.pc, counter, st))

    push(start)
    done: list[Outcome] = []
    solver = z3.Solver()
    while heap:
        _, pc, _, s = heapq.heappop(heap)
        # Everything waiting at the same instruction that can merge with s does.
        same = []
        while heap and heap[0][1] == pc and heap[0][0] == len(s.returns):
            same.append(heapq.heappop(heap)[3])
        rest = []
        for other in same:
            if s.index == 0 and other.index == 0 and mergeable(s, other):
                s.cond = [z3.Or(z3.And(*s.cond), z3.And(*other.cond))]
                s.steps = max(s.steps, other.steps)
            else:
                rest.append(other)
        for other in rest:
            push(other)
        out = step_path(s, push, solver, bound)
        if out is not None:
            done.append(out)
    return done


def same_ast(a, b) -> bool:
    return a.eq(b)


def mergeable(a: State, b: State) -> bool:
    if (a.returns, a.pending_rotation) != (b.returns, b.pending_rotation) or len(a.frames) != len(b.frames):
        return False
    if not same_ast(a.mem, b.mem) or len(a.events) != len(b.events):
        return False
    for x, y in zip(a.events, b.events):
        if type(x) is not type(y):
            return False
        if isinstance(x, Store) and not (x.width == y.width and same_ast(x.addr, y.addr) and same_ast(x.value, y.value)):
            return False
    for fa, fb in zip(a.frames, b.frames):
        if fa.regs.keys() != fb.regs.keys():
            return False
        if not all(same_ast(v, fb.regs[k]) for k, v in fa.regs.items()):
            return False
    return True


def feasible(solver: z3.Solver, cond: list) -> bool:
    solver.push()
    solver.add(*cond)
    r = solver.check()
    solver.pop()
    if r == z3.unknown:
        raise ExecError("the solver could not decide a branch")
    return r == z3.sat


def step_path(s: State, push, solver: z3.Solver, bound: int) -> Outcome | None:
    """Runs `s` to its next conditional branch (pushing what continues, and returning
    None) or to the end of its path (returning the outcome)."""
    while True:
        ops, length = s.lifter.at(s.pc)
        if s.index == 0:
            s.unique = {}  # temporaries do not outlive their instruction
            s.steps += 1
            if s.steps > bound:
                return Outcome("bound", s.cond, s.events, None, s.mem, s.pc)
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
            s.write(op.output, z3.Extract(min(lo + 8 * op.output.size, v.size()) - 1, lo, v) if lo < v.size() else bv(0, 8 * op.output.size))
        elif code == OP.PIECE:
            s.write(op.output, z3.Concat(s.read(op.inputs[0]), s.read(op.inputs[1])))
        elif code == OP.LOAD:
            s.write(op.output, s.load(resize(s.read(op.inputs[1]), 32), op.output.size))
        elif code == OP.STORE:
            v = s.read(op.inputs[2])
            s.store(resize(s.read(op.inputs[1]), 32), v, op.inputs[2].size)
        elif code == OP.BRANCH:
            jump(s, op.inputs[0])
        elif code == OP.CBRANCH:
            c = z3.simplify(s.read(op.inputs[1]) != 0)
            if z3.is_true(c):
                jump(s, op.inputs[0])
            elif z3.is_false(c):
                pass
            else:
                t_ok = feasible(solver, s.cond + [c])
                f_ok = feasible(solver, s.cond + [z3.Not(c)])
                if t_ok and f_ok:
                    other = s.copy()
                    other.cond.append(z3.Not(c))
                    s.cond.append(c)
                    jump(s, op.inputs[0])
                    for st in (s, other):
                        settle(st)
                        push(st)
                    return None
                elif t_ok:
                    s.cond.append(c)
                    jump(s, op.inputs[0])
                else:
                    s.cond.append(z3.Not(c))
        elif code == OP.BRANCHIND:
            s.pc, s.index = concrete(s.read(op.inputs[0])), 0
        elif code in (OP.CALL, OP.CALLIND):
            target = op.inputs[0].offset if code == OP.CALL else concrete(s.read(op.inputs[0]))
            call(s, target)
        elif code == OP.RETURN:
            if not s.returns:
                return Outcome("return", s.cond, s.events, s.reg_name("a2"), s.mem, s.pc)
            ret(s)
        elif code == OP.CALLOTHER:
            name = op.inputs[0].getUserDefinedOpName()
            if name == "memw":
                s.events.append(Barrier())
            elif name == "ill":
                return Outcome("trap", s.cond, s.events, None, s.mem, s.pc)
            elif name in ("swap4", "swap8", "swap12"):
                s.pending_rotation = int(name[4:])
            elif name in ("restore4", "restore8", "restore12", "rotateRegWindow", "restoreRegWindow"):
                # rotateRegWindow (entry) and restoreRegWindow (retw) act on the window
                # base, which the call and return below model; restoreN follows a return.
                pass
            elif name in ("extw", "isync", "dsync", "esync", "rsync"):
                s.events.append(Barrier()) if name == "extw" else None
            else:
                raise ExecError(f"unmodelled operation {name} at {s.pc:#x}")
        else:
            raise ExecError(f"unmodelled p-code {code} at {s.pc:#x}")


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
    regs = {s.lifter.reg[WINDOW[i]]: s.get_reg(*s.lifter.reg[WINDOW[i + n]]) for i in range(16 - n)}
    s.returns.append((s.pc, s.index, n))
    s.frames.append(Frame(regs))
    s.pc, s.index = target, 0


def ret(s: State):
    pc, index, n = s.returns.pop()
    values = [s.get_reg(*s.lifter.reg[WINDOW[i]]) for i in range(16 - n)]
    s.frames.pop()
    for i, v in enumerate(values):
        s.set_reg(*s.lifter.reg[WINDOW[i + n]], v)
    s.pc, s.index = pc, index
