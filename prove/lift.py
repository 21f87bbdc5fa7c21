"""Lifting Xtensa machine code to p-code through Ghidra's SLEIGH semantics (pypcode): the
linked image's bytes and symbols, and one instruction's p-code at a time, cached."""

from __future__ import annotations

import pypcode

OP = pypcode.OpCode


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
