"""Evidence that the validator can fail: mutants of the shipped object, each a one-instruction
(or one-literal) change the contract forbids, each of which must be refuted with a
counterexample. The mutations are found in the object by instruction, not by offset, so
they follow the code when it moves.

usage: mutants.py OBJECT --ld LD --out DIR

Writes DIR/<mutant>.o and DIR/<mutant>.json (the refutation, with its counterexample as a
replayable vector: table bytes, arguments). Exits 1 when a mutant is not refuted or a
mutation site is not found.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import os
import sys
import time

import pypcode
import validate
from elftools.elf.elffile import ELFFile

TRANSLATE = ".text._Z16neuron_translatePvy"
LITERALS = ".literal._Z16neuron_translatePvy"
# A Rust function (v0-mangled: its crate hash changes with the build), found by its name's
# end as validate.local_symbol finds symbols.
OUT_OF_RANGE = ".text.unlikely._R*19refill_out_of_range"
SPAN = ".text.neuron_translate_span"
LOOKUP = ".text._Z31neuron_translate_mapping_lookupPvyPyS0_"

CTX = pypcode.Context("Xtensa:LE:32:default")
# Xtensa's 3-byte `nop`: what a dropped instruction becomes.
NOP = bytes.fromhex("f02000")


def instructions(data: bytes):
    return CTX.disassemble(bytes(data), 0, 0, 0).instructions


def site_register_stores(data: bytes):
    """The refill's register stores: memw; s32i hi, reg, 4; memw; s32i lo, reg, 0."""
    ins = instructions(data)
    for i in range(len(ins) - 3):
        a, b, c, d = ins[i : i + 4]
        if (
            (a.mnem, b.mnem, c.mnem, d.mnem) == ("memw", "s32i", "memw", "s32i")
            and b.body.endswith(", 0x4")
            and d.body.endswith(", 0x0")
        ):
            return a, b, c, d
    return None


def swap_hi_lo(data: bytearray):
    """The two register stores in the other order: lo, then hi."""
    _, hi, _, lo = site_register_stores(data) or (None,) * 4
    if hi is None:
        return None
    h, lw = hi.addr.offset, lo.addr.offset
    data[h : h + 3], data[lw : lw + 3] = data[lw : lw + 3], data[h : h + 3]
    return f"swapped the s32i at {h:#x} and {lw:#x}"


def drop_memw(data: bytearray):
    """No barrier before the register stores: the first memw becomes a nop."""
    site = site_register_stores(data)
    if site is None:
        return None
    at = site[0].addr.offset
    data[at : at + 3] = NOP
    return f"memw at {at:#x} is now a nop"


def drop_mask_bit(data: bytearray):
    """The reusable windows' mask loses bit 24: the literal 0xFF000000 becomes 0xFE000000."""
    for at in range(0, len(data) - 3, 4):
        if int.from_bytes(data[at : at + 4], "little") == 0xFF00_0000:
            data[at : at + 4] = (0xFE00_0000).to_bytes(4, "little")
            return f"literal at {at:#x}: 0xff000000 -> 0xfe000000"
    return None


def drop_modulo(data: bytearray):
    """next_alloc used as the victim without `% 3`: the subtraction of 3 * (n / 3)
    becomes a move."""
    for i in instructions(data):
        if i.mnem == "sub":
            at = i.addr.offset
            b = data[at : at + 3]
            r, s = b[1] & 0xF, b[1] >> 4
            if r != s:
                continue
            # or ar, as, as (RRR: op2 = 2) keeps n itself.
            data[at : at + 3] = bytes([(s << 4) | 0, (s << 4) | r, 0x20])
            return f"sub at {at:#x} is now or a{r}, a{s}, a{s}"
    return None


def skip_first_cut(data: bytearray):
    """The span forgets record 0: its first call of cut_before_member becomes a nop (so a
    hit or refill in slot 1 or later spans past the addresses record 0 matches)."""
    for i in instructions(data):
        if i.mnem == "callx8":
            at = i.addr.offset
            data[at : at + 3] = NOP
            return f"callx8 at {at:#x} (record 0's cut) is now a nop"
    return None


def drop_end_decrement(data: bytearray):
    """The lookup's end loses its `- 1`: the first `addi aN, aN, -1` becomes a nop, so the
    low word of *out_end is ptr - mask instead of ptr + ~mask (one past the window)."""
    for i in instructions(data):
        if i.mnem == "addi" and i.body.endswith(", -0x1"):
            at = i.addr.offset
            data[at : at + 3] = NOP
            return f"addi at {at:#x} ({i.body}) is now a nop"
    return None


# (name, section, mutation, the function whose proof must fail, whether an emulator that
# shows final memory can see the difference: the order of two stores to different words
# and a missing barrier leave the same memory behind, which is why they need a proof)
MUTANTS = [
    ("hi-lo-order", TRANSLATE, swap_hi_lo, "neuron_translate", False),
    ("mask-bit", LITERALS, drop_mask_bit, "_init_translate_ctx", True),
    ("modulo-3", OUT_OF_RANGE, drop_modulo, "neuron_translate", True),
    ("memw", TRANSLATE, drop_memw, "neuron_translate", False),
    ("span-forgets-record-0", SPAN, skip_first_cut, "neuron_translate_span", True),
    ("lookup-end-past-window", LOOKUP, drop_end_decrement, "neuron_translate_mapping_lookup", True),
]


def find_section(elf, name: str):
    """The section called `name`, or, for a name with a `*`, the one section whose name
    starts with what comes before it and ends with what comes after."""
    if "*" not in name:
        return elf.get_section_by_name(name)
    head, tail = name.split("*")
    found = [s for s in elf.iter_sections() if s.name.startswith(head) and s.name.endswith(tail)]
    if len(found) > 1:
        raise SystemExit(f"mutants.py: more than one section matches {name}: {[s.name for s in found]}")
    return found[0] if found else None


def mutate(obj: bytes, section: str, how) -> tuple[bytes, str | None]:
    import io

    elf = ELFFile(io.BytesIO(obj))
    sec = find_section(elf, section)
    if sec is None:
        return obj, None
    off, size = sec["sh_offset"], sec["sh_size"]
    data = bytearray(obj[off : off + size])
    what = how(data)
    out = bytearray(obj)
    out[off : off + size] = data
    return bytes(out), what


def section_of(obj: bytes, function: str) -> bytes | None:
    """The bytes of the code section of a function (by the end of its name)."""
    import io

    elf = ELFFile(io.BytesIO(obj))
    for sec in elf.iter_sections():
        if sec.name.startswith(".text") and sec.name.endswith(function):
            return sec.data()
    return None


def prove_mutant(original: bytes, out: str, ld: str, config: validate.Config, mutant) -> tuple[bool, list[str]]:
    """Writes one mutant, runs the validator on it; (refuted, the lines to print)."""
    name, section, how, function, observable = mutant
    t0 = time.time()
    data, what = mutate(original, section, how)
    if what is None:
        return False, [f"MISSING: {name}: no mutation site in {section}"]
    path = os.path.join(out, f"{name}.o")
    with open(path, "wb") as f:
        f.write(data)
    # A mutation changes one section: the helpers the function's proof rests on are
    # the real object's, proven by validate.py before the mutants run.
    trusted = [dep for dep in validate.FUNCTIONS[function].depends if section_of(original, dep) == section_of(data, dep)]
    results = validate.run_object(path, ld, [function], config, trusted=trusted)
    refuted = [p for r in results for p in r["paths"] if not p["proven"]]
    record = {
        "mutant": name,
        "mutation": what,
        "function": function,
        "observable_by_emulation": observable,
        "refuted": refuted[:1],
    }
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump(record, f, indent=1)
    mine = [r for r in results if r["function"] == function]
    shown = f"{validate.figures(mine[0])}, {time.time() - t0:.1f} s" if mine else f"{time.time() - t0:.1f} s"
    if refuted and refuted[0]["counterexample"]:
        return True, [
            f"REFUTED: {name} ({what}; {shown}): {refuted[0]['refuted']}",
            f"  counterexample: {json.dumps(refuted[0]['counterexample'])}",
        ]
    errors = [r["error"] for r in results if "error" in r]
    return False, [f"SURVIVED: {name} ({what}; {shown}): the validator did not refute the mutant", *[f"  {e}" for e in errors]]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("object")
    p.add_argument("--ld", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--jobs", type=int, default=validate.Config.jobs, help="mutants proven at once")
    p.add_argument("--seed", type=int, default=validate.Config.seed)
    p.add_argument("--budget", type=int, default=validate.Config.budget)
    p.add_argument("--guard", type=float, default=validate.Config.guard)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    original = open(a.object, "rb").read()
    # `jobs` mutants at once, each its units one after the other (each in a fresh process)
    # up to the first refuted; printed in the list's order.
    config = validate.Config(seed=a.seed, budget=a.budget, guard=a.guard, jobs=1, first=True)
    spawn = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(a.jobs, mp_context=spawn) as pool:
        done = list(pool.map(prove_mutant, *zip(*[(original, a.out, a.ld, config, m) for m in MUTANTS], strict=True)))
    for _, lines in done:
        print("\n".join(lines))
    sys.exit(0 if all(ok for ok, _ in done) else 1)


if __name__ == "__main__":
    main()
