"""Every op of a loaded library as torch.ops.<library>.<op>, through torch.library, on CPU
tensors of the API's element types (imported only when PyTorch is installed). A tensor is
handed over as a NumPy array (made contiguous), the result comes back as a tensor; loading
a library of the same name again points the ops it defines at it (a warning names those
replaced) and keeps the others on the library that defined them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from . import _symbolic
from ._abi import DTYPES, DType
from .errors import ArgumentTypeError, ShapeRelationError, warn
from .library import BFLOAT16, Library, TensorSpec

# Per library name: its torch.library.Library (kept alive) and, per op, the Library that
# runs it now.
_REGISTERED: dict[str, tuple[Any, dict[str, Library]]] = {}


# The API's element types (the runtime's table, _abi.DTYPES), PyTorch's and NumPy's
# (bfloat16: ml_dtypes' when installed, else its bit patterns as uint16, which the library
# takes as bfloat16).
_DTYPES: list[tuple[Any, np.dtype]] = [
    (getattr(torch, name), BFLOAT16 if code == DType.BFLOAT16 and BFLOAT16 is not None else np.dtype(descr))
    for code, name, _size, descr in DTYPES
]


# A call's lookups: a tensor's NumPy type by its PyTorch type, and the NumPy types an
# output of bfloat16 comes back as (ml_dtypes' type, or its bit patterns as uint16).
_NUMPY_OF: dict[Any, np.dtype] = dict(_DTYPES)
_BFLOAT16_BITS = {np.dtype(np.uint16)} | ({np.dtype(BFLOAT16)} if BFLOAT16 is not None else set())


def _fake(routes: dict[str, Library], name: str) -> Any:
    """Op `name`'s fake implementation: its shape function run on data-less tensors of the
    arguments' shapes and element types (once per signature and library), an empty tensor
    of what it gives on the arguments' device (fake or meta)."""
    # Keyed by the library itself (not its id(), which a later library could reuse).
    cache: dict[tuple[Any, ...], tuple[np.dtype, tuple[int, ...]]] = {}

    def fake(*args: Any) -> torch.Tensor:
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), torch.device("meta"))
        symbolic = _symbolic_output(routes[name], name, args) if _symbolic.is_symbolic(args) else None
        if symbolic is not None:
            dtype, sizes = symbolic
            return torch.empty(sizes, dtype=_torch_dtype(dtype), device=device)
        specs: list[Any] = []
        for a in args:
            if isinstance(a, torch.Tensor):
                specs.append(TensorSpec(_numpy_dtype(name, a), tuple(int(d) for d in a.shape)))
            else:
                specs.append(_scalar(a))
        library = routes[name]
        key = (library, *(_key(s) for s in specs))
        if key not in cache:
            cache[key] = library.output_spec(name, specs)
        dtype, shape = cache[key]
        return torch.empty(shape, dtype=_torch_dtype(dtype), device=device)

    return fake


def _torch_dtype(dtype: np.dtype) -> Any:
    return next(t for t, n in _DTYPES if n == dtype)


# Per (library, op): the relations between sizes that graphs compiled with dynamic shapes
# assumed (_symbolic), which every call of the op is held to; and the ops whose sizes could
# not be kept symbolic, warned of once.
_RELATIONS: dict[tuple[Library, str], set[_symbolic.Relation]] = {}
_WARNED_CONCRETE: set[tuple[Library, str]] = set()


def _symbolic_output(library: Library, name: str, args: Sequence[Any]) -> tuple[np.dtype, list[Any]] | None:
    """The output's element type and symbolic sizes for arguments with symbolic sizes, or
    None (warned once per op) when they cannot be kept symbolic."""
    dtypes: set[np.dtype] = set()

    def output_shape(shapes: list[list[int] | None]) -> tuple[int, ...]:
        specs = [
            TensorSpec(_numpy_dtype(name, a), tuple(s)) if s is not None else _scalar(a)
            for a, s in zip(args, shapes, strict=True)
        ]
        dtype, shape = library.output_spec(name, specs)
        dtypes.add(dtype)
        if len(dtypes) > 1:
            raise _symbolic.NotAffine("the output's element type changes with the sizes")
        return shape

    try:
        relation, sizes = _symbolic.derive(args, output_shape)
    except _symbolic.NotAffine as why:
        if (library, name) not in _WARNED_CONCRETE:
            _WARNED_CONCRETE.add((library, name))
            warn(
                f"torch.ops.{library.name}.{name}: the output's sizes are not kept symbolic ({why}); "
                f"torch.compile with dynamic shapes compiles the graph again for each new size"
            )
        return None
    _RELATIONS.setdefault((library, name), set()).add(relation)
    return dtypes.pop(), sizes


def _scalar(a: Any) -> Any:
    """A scalar argument as the shape function takes it (a symbolic one made concrete)."""
    return int(a) if isinstance(a, torch.SymInt) else float(a) if isinstance(a, torch.SymFloat) else a


def _held_to_relations(library: Library, name: str, args: Sequence[Any], out: torch.Tensor) -> None:
    """Raises ShapeRelationError when `out`'s shape is not the one a relation compiled for
    inputs like `args` says."""
    relations = _RELATIONS.get((library, name))
    if not relations:
        return
    shapes = [list(a.shape) if isinstance(a, torch.Tensor) else None for a in args]
    for r in relations:
        if r.applies(shapes) and tuple(out.shape) != r.shape_at(shapes):
            raise ShapeRelationError(
                f"torch.ops.{library.name}.{name}: the output is {tuple(out.shape)} for inputs of "
                f"{[s for s in shapes if s is not None]}, where a graph compiled with dynamic shapes "
                f"assumed {r.spelled()} = {r.shape_at(shapes)} (found by running the shape function "
                f"at other sizes)"
            )


def _key(s: Any) -> Any:
    """An argument as the fake cache tells arguments apart: a float by its bits (-0.0 is
    not 0.0 to a shape function that tests signbit), a tensor by its type and shape."""
    if isinstance(s, TensorSpec):
        return (s.dtype.str, s.shape)
    if isinstance(s, float):
        return (float, s.hex())
    return (type(s), s)


def _numpy_dtype(name: str, t: torch.Tensor) -> np.dtype:
    """The NumPy element type a tensor crosses as, or a refusal in PyTorch's words
    (torch.uint16 is no bfloat16: torch.bfloat16 is)."""
    dtype = _NUMPY_OF.get(t.dtype)
    if dtype is None:
        names = ", ".join(str(d) for d, _ in _DTYPES)
        raise ArgumentTypeError(f"{name}: tensors of {t.dtype} are not an API type ({names})")
    return dtype


def _to_numpy(t: Any) -> Any:
    if not isinstance(t, torch.Tensor):
        return t.item() if isinstance(t, np.generic) else t
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def _to_torch(a: np.ndarray) -> torch.Tensor:
    if a.dtype in _BFLOAT16_BITS:
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)


def register(library: Library) -> None:
    """Defines each op of `library` in its namespace (once) and points it at `library`; ops
    of an earlier library of the same name that `library` does not define stay on it."""
    if library.name not in _REGISTERED:
        _REGISTERED[library.name] = (torch.library.Library(library.name, "DEF"), {})
    lib, routes = _REGISTERED[library.name]
    replaced, kept = [], []
    for name, op in library.ops.items():
        before = routes.get(name)
        if before is None:
            lib.define(op.schema)
            lib.impl(name, _impl(routes, name), "CPU")
            torch.library.register_fake(f"{library.name}::{name}", _fake(routes, name), lib=lib)
        elif before.ops[name].params != op.params:
            kept.append(name)
            continue
        elif before.path != library.path:
            replaced.append(name)
        routes[name] = library
    if replaced:
        warn(
            f"torch.ops.{library.name}: {', '.join(replaced)} now run {library.path}; "
            f"the ops it does not define keep their library"
        )
    if kept:
        warn(
            f"torch.ops.{library.name}: {', '.join(kept)} keep their earlier library: {library.path} "
            f"defines them with other parameters (call them as lib.ops[...])"
        )


def _impl(routes: dict[str, Library], name: str) -> Any:
    """The CPU implementation of op `name`: the library that runs it now, on NumPy arrays."""

    def impl(*args: Any) -> torch.Tensor:
        for a in args:
            if isinstance(a, torch.Tensor):
                _numpy_dtype(name, a)
        library = routes[name]
        out = _to_torch(library.ops[name](*[_to_numpy(a) for a in args]))
        _held_to_relations(library, name, args, out)
        return out

    return impl
