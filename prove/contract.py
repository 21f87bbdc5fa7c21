"""The contract (docs/contract.md §2-§5) as the validator states it: the table's layout,
the register block, the initial table, and for each exported function the cases a path
must match (their conditions, outcomes, return values and events), written from the
contract's text and not from the Rust code."""

from __future__ import annotations

import dataclasses

import machine as mx
import z3
from explore import Summary

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
class ExpectedStore:
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
class ExpectedBarrier:
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
                    events.append(ExpectedStore(out_start, start, 8, "*out_start = ptr", any_order=True))
                if not e_null:
                    events.append(ExpectedStore(out_end, end, 8, "*out_end = ptr + ~mask", any_order=True))
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
        ExpectedStore(r["base"] + PTR, tag, 8, f"records[{v}].ptr = tag", any_order=True),
        ExpectedBarrier("the barrier before the register stores"),
        ExpectedStore(r["reg"] + 4, hi32(tag), 4, "hi32(tag) to reg_location + 4"),
        ExpectedStore(r["reg"], lo32(tag), 4, "lo32(tag) to reg_location"),
        ExpectedBarrier("the barrier after the register stores"),
        ExpectedStore(ctx + NEXT_ALLOC, u((v + 1) % 3, 8), 1, "next_alloc = (v + 1) % 3"),
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
        store = ExpectedStore(
            out_span, None if checks else span, 8, "*out_span = the span", any_order=True, check=span if checks else None
        )
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
        after = Written(mem, [(w.addr, w.value, w.width) for w in stores if isinstance(w, ExpectedStore)])
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

    return Summary("cut_before_member", contract)


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


def local_symbol(image, name: str) -> str:
    """The one Rust-mangled symbol (v0: `_R...`, the identifier length-prefixed) of `name`."""
    found = [s for s in image.symbols if s.startswith("_R") and s.endswith(f"{len(name)}{name}")]
    if len(found) != 1:
        raise SystemExit(f"validate.py: expected one symbol for {name}, found {found}")
    return found[0]
