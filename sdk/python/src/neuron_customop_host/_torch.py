"""Every op of a loaded library as torch.ops.<library>.<op>, through torch.library, on CPU
tensors of the API's element types (imported only when PyTorch is installed). A tensor is
handed over as a NumPy array (made contiguous), the result comes back as a tensor; loading
a library of the same name again points the ops it defines at it (a warning names those
replaced) and keeps the others on the library that defined them."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

from .errors import NeuronCustomOpWarning
from .library import Library

_SCHEMA = {"tensor": "Tensor", "int": "int", "double": "float", "scalar": "Scalar"}
# Per library name: its torch.library.Library (kept alive) and, per op, the Library that
# runs it now.
_REGISTERED: dict[str, tuple[Any, dict[str, Library]]] = {}


def _to_numpy(t: Any) -> Any:
    if not isinstance(t, torch.Tensor):
        return t.item() if isinstance(t, np.generic) else t
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def _to_torch(a: np.ndarray) -> torch.Tensor:
    if a.dtype == np.uint16 or a.dtype.name == "bfloat16":
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
            params = ", ".join(f"{_SCHEMA[p]} a{k}" for k, p in enumerate(op.params))
            lib.define(f"{name}({params}) -> Tensor")
            lib.impl(name, _impl(routes, name), "CPU")
        elif before.ops[name].params != op.params:
            kept.append(name)
            continue
        elif before is not library:
            replaced.append(name)
        routes[name] = library
    if replaced:
        warnings.warn(
            f"torch.ops.{library.name}: {', '.join(replaced)} now run {library.path}; "
            f"the ops it does not define keep their library",
            NeuronCustomOpWarning,
            stacklevel=3,
        )
    if kept:
        warnings.warn(
            f"torch.ops.{library.name}: {', '.join(kept)} keep their earlier library: {library.path} "
            f"defines them with other parameters (call them as lib.ops[...])",
            NeuronCustomOpWarning,
            stacklevel=3,
        )


def _impl(routes: dict[str, Library], name: str) -> Any:
    """The CPU implementation of op `name`: the library that runs it now, on NumPy arrays."""

    def impl(*args: Any) -> torch.Tensor:
        return _to_torch(routes[name].ops[name](*[_to_numpy(a) for a in args]))

    return impl
