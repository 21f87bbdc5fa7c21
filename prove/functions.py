"""The registry: for each function the validator proves, its symbol, its contract, its
precondition, what it rests on and how its units are scheduled (FUNCTIONS)."""

from __future__ import annotations

import dataclasses

import z3
from contract import (
    CALLER_SP,
    HELPER,
    RECORD,
    STACK,
    cut_summary,
    local_symbol,
    rd,
    spec_ctx,
    spec_cut,
    spec_init,
    spec_lookup,
    spec_span,
    spec_translate,
    stack_precondition,
    u,
)


@dataclasses.dataclass(frozen=True)
class Contract:
    """A function's contract as the proof takes it: its cases, and the summaries of the
    calls it makes (by entry address) that the proof takes at their proven word."""

    cases: list
    summaries: dict = dataclasses.field(default_factory=dict)


def no_values(*_):
    return []


def no_precondition(mem, args):
    return z3.BoolVal(True)


@dataclasses.dataclass(frozen=True)
class Function:
    """Everything the validator knows of one function (the registry, FUNCTIONS)."""

    name: str
    # Its ELF symbol; None for a local Rust function, found by its name's end (local_symbol).
    symbol: str | None
    # (memory, arguments, image) -> Contract.
    contract: object
    # What its inputs are taken to satisfy: (memory, arguments) -> z3 Bool.
    precondition: object = no_precondition
    # The functions its proof rests on (proven first, in the same run).
    depends: tuple = ()
    # Taken as given, and stated in docs/prove.md: (arguments) -> [z3 Bool]. A function
    # with givens (the table 4-aligned) has its table's words read whole
    # (machine.State.load_word).
    given: object = None
    # Given a table at a2: a counterexample is first looked for with the table, its
    # register locations and `outputs` where the qemu replay can put them.
    table: bool = False
    # Replayed on the host library, which uses whole 64-bit register locations.
    whole_registers: bool = False
    # Reads ENGINE_BASE_ADDR and hbm_scratch (init): its counterexample is those two.
    reads_engine: bool = False
    # The pointers it writes through, by name: (memory, arguments) -> [(name, pointer)].
    outputs: object = no_values
    # Its other inputs a counterexample shows: (arguments) -> [(name, value)].
    inputs: object = no_values
    # Its units' order in a run (lower first: the slowest, so the others fill the gaps):
    # (group) -> int.
    priority: object = lambda group: 2


def span_contract(mem, args, image):
    d = z3.BitVec("span_offset", 64)
    return Contract(spec_span(mem, args, d), {image.symbols[local_symbol(image, HELPER)][0]: cut_summary(d)})


# Proven in this order (a function after those its proof rests on).
FUNCTIONS = {
    f.name: f
    for f in [
        Function(
            "neuron_translate_ctx",
            "_Z20neuron_translate_ctxv",
            contract=lambda mem, args, image: Contract(spec_ctx(mem, args, image)),
        ),
        Function(
            "neuron_translate_mapping_lookup",
            "_Z31neuron_translate_mapping_lookupPvyPyS0_",
            contract=lambda mem, args, image: Contract(spec_lookup(mem, args)),
            precondition=stack_precondition,
            table=True,
            outputs=lambda mem, args: [("out_start", args["a6"]), ("out_end", args["a7"])],
        ),
        Function(
            "neuron_translate",
            "_Z16neuron_translatePvy",
            contract=lambda mem, args, image: Contract(spec_translate(mem, args)),
            precondition=stack_precondition,
            table=True,
            priority=lambda group: 1,
        ),
        Function(
            "_init_translate_ctx",
            "_Z19_init_translate_ctxv",
            contract=lambda mem, args, image: Contract(spec_init(mem, args, image)),
            reads_engine=True,
        ),
        Function(
            HELPER,
            None,
            contract=lambda mem, args, image: Contract(spec_cut(mem, args)),
            precondition=lambda mem, args: STACK.outside(args["a2"], RECORD),
        ),
        Function(
            "neuron_translate_span",
            "neuron_translate_span",
            contract=span_contract,
            precondition=stack_precondition,
            depends=(HELPER,),
            # The table is 4-aligned, as its C type (align 8) requires. Then the refill's
            # 32-bit register stores (4-aligned, or the call traps) either are a word of the
            # table or miss it, which the executor resolves word by word instead of byte by byte.
            given=lambda args: [(args["a2"] & 3) == 0],
            table=True,
            whole_registers=True,
            outputs=lambda mem, args: [("out_span", rd(mem, u(CALLER_SP), 4))],
            inputs=lambda args: [("len", z3.Concat(args["a7"], args["a6"]))],
            priority=lambda group: 0 if group.startswith("refill") else 2,
        ),
    ]
}


# --- driving ----------------------------------------------------------------------------
