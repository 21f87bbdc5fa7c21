"""Output sizes kept symbolic for torch.compile(dynamic=True) (imported with _torch).

A shape function is C++ code the SDK runs on concrete sizes, so under dynamic shapes the
fake implementation cannot hand it symbols. It probes instead: it runs the shape function
at the sizes PyTorch traces with (each symbol's hint), once more for each symbol with that
symbol's size changed, and once with all of them changed. Each output size that is an
integer affine function of the symbols over those runs (a constant, an input's size, a
sum or multiple of sizes) is returned as that expression of the input's own symbolic
sizes; the last run checks the whole relation. Where there is none (a size the shape
function refuses, a product of sizes, a symbol PyTorch has no value for, a size that is an
expression rather than a symbol), the sizes are made concrete as before, which compiles
the graph again for each new size, and a warning says why, once per op.

A relation found by probing might still not hold at a size never tried (a shape function
that branches on a size). So the real call checks it: every call whose inputs have the
pattern a relation was found for (the sizes that shared a symbol equal, the constant sizes
the same) must give the shape the relation says, or raises `ShapeRelationError`; a
compiled graph never computes on with a shape other than the one it assumed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

# Each symbol is changed by its own step in its probe and by another in the joint probe
# (steps of 3 or more: PyTorch specializes sizes 0 and 1, and a hint is 2 or more).
_STEP = 3
_JOINT_STEP = 5

# Where a size comes from: (argument index, dimension).
Place = tuple[int, int]


@dataclass(frozen=True)
class Size:
    """An output size: `constant` plus each term's coefficient times the input size at its
    place."""

    constant: int
    terms: tuple[tuple[int, Place], ...]

    def at(self, shapes: Sequence[Sequence[int] | None]) -> int:
        return self.constant + sum(c * _size(shapes, p) for c, p in self.terms)


@dataclass(frozen=True)
class Relation:
    """The output's sizes for inputs of one pattern: `same` lists the groups of places that
    shared a symbol, `fixed` the places whose size was a constant, and `ranks` each
    argument's number of dimensions (None for a scalar)."""

    ranks: tuple[int | None, ...]
    same: tuple[tuple[Place, ...], ...]
    fixed: tuple[tuple[Place, int], ...]
    sizes: tuple[Size, ...]

    def applies(self, shapes: Sequence[Sequence[int] | None]) -> bool:
        if tuple(None if s is None else len(s) for s in shapes) != self.ranks:
            return False
        if any(_size(shapes, p) != v for p, v in self.fixed):
            return False
        return all(len({_size(shapes, p) for p in group}) == 1 for group in self.same)

    def shape_at(self, shapes: Sequence[Sequence[int] | None]) -> tuple[int, ...]:
        return tuple(s.at(shapes) for s in self.sizes)

    def spelled(self) -> str:
        def one(s: Size) -> str:
            text = ""
            for c, (a, d) in s.terms:
                factor = "" if abs(c) == 1 else f"{abs(c)}*"
                text += f"{' - ' if c < 0 else ' + ' if text else ''}{factor}arg{a}.size({d})"
            if s.constant or not text:
                text += f"{' - ' if s.constant < 0 else ' + ' if text else ''}{abs(s.constant) if text else s.constant}"
            return text.lstrip(" +")

        return "(" + ", ".join(one(s) for s in self.sizes) + ")"


def _size(shapes: Sequence[Sequence[int] | None], p: Place) -> int:
    shape = shapes[p[0]]
    assert shape is not None, "a place is a tensor argument's"
    return int(shape[p[1]])


def is_symbolic(args: Sequence[Any]) -> bool:
    """Whether a tensor argument has a size that is a symbol (torch.compile, dynamic)."""
    return any(isinstance(d, torch.SymInt) for a in args if isinstance(a, torch.Tensor) for d in a.shape)


class NotAffine(Exception):
    """Why the output's sizes cannot be kept symbolic."""


def derive(args: Sequence[Any], output_shape: Callable[[list[list[int] | None]], tuple[int, ...]]) -> tuple[Relation, list[Any]]:
    """The relation between the tensor arguments' symbolic sizes and the output's, found
    by probing `output_shape` (the shape function on concrete shapes, None for a scalar),
    and the output's sizes as symbolic integers; NotAffine with the reason if there is none."""
    places: dict[Any, list[Place]] = {}  # symbol -> its places
    fixed: list[tuple[Place, int]] = []
    ranks: list[int | None] = []
    for a, arg in enumerate(args):
        if not isinstance(arg, torch.Tensor):
            ranks.append(None)
            continue
        ranks.append(arg.dim())
        for d, size in enumerate(arg.shape):
            if not isinstance(size, torch.SymInt):
                fixed.append(((a, d), int(size)))
                continue
            expr = size.node.expr
            if not expr.is_Symbol:
                raise NotAffine(f"argument {a}'s size {d} is {expr}, an expression of sizes, not a size of its own")
            if size.node.hint is None:
                raise NotAffine(f"argument {a}'s size {d} ({expr}) has no value PyTorch knows while tracing")
            places.setdefault(expr, []).append((a, d))
    symbols = sorted(places, key=str)
    hints = {s: int(_symint(args, places[s][0]).node.hint) for s in symbols}

    def probe(values: dict[Any, int]) -> tuple[int, ...]:
        shapes = _shapes_at(ranks, fixed, places, values)
        try:
            return tuple(output_shape(shapes))
        except Exception as e:  # the shape function refused sizes it was never given
            raise NotAffine(f"the shape function refuses sizes {[s for s in shapes if s is not None]}: {e}") from None

    base = probe(hints)
    moved = [probe({**hints, s: hints[s] + _STEP + k}) for k, s in enumerate(symbols)]
    sizes = []
    if any(len(m) != len(base) for m in moved):
        raise NotAffine("the output's number of dimensions changes with the sizes")
    for k in range(len(base)):
        terms, constant = [], base[k]
        for j, s in enumerate(symbols):
            step, rise = _STEP + j, moved[j][k] - base[k]
            if rise % step:
                raise NotAffine(f"output size {k} is no integer multiple of the sizes")
            if rise:
                terms.append((rise // step, places[s][0]))
                constant -= rise // step * hints[s]
        sizes.append(Size(constant, tuple(terms)))
    relation = Relation(tuple(ranks), tuple(tuple(places[s]) for s in symbols), tuple(fixed), tuple(sizes))
    joint = {s: hints[s] + _JOINT_STEP + 2 * k for k, s in enumerate(symbols)}
    checked = probe(joint)
    want = relation.shape_at(_shapes_at(ranks, fixed, places, joint))
    if checked != want:
        raise NotAffine(f"the shape function gives {checked} where its sizes' relation {relation.spelled()} gives {want}")
    return relation, [_symbolic(args, s) for s in sizes]


def _shapes_at(
    ranks: list[int | None], fixed: list[tuple[Place, int]], places: dict[Any, list[Place]], values: dict[Any, int]
) -> list[list[int] | None]:
    shapes: list[list[int] | None] = [None if r is None else [0] * r for r in ranks]
    for (a, d), v in fixed:
        shapes[a][d] = v  # type: ignore[index]
    for s, ps in places.items():
        for a, d in ps:
            shapes[a][d] = values[s]  # type: ignore[index]
    return shapes


def _symint(args: Sequence[Any], p: Place) -> Any:
    return args[p[0]].shape[p[1]]


def _symbolic(args: Sequence[Any], s: Size) -> Any:
    """`s` as an integer or an expression of the arguments' symbolic sizes."""
    if s.constant == 0 and len(s.terms) == 1 and s.terms[0][0] == 1:
        return _symint(args, s.terms[0][1])
    value: Any = s.constant
    for c, p in s.terms:
        value = value + c * _symint(args, p)
    return value
