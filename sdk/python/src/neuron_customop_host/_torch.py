"""Every op of a loaded library as torch.ops.<library>.<op>, through torch.library, on CPU
tensors of the API's element types (imported only when PyTorch is installed). A tensor is
handed over as a NumPy array (made contiguous), the result comes back as a tensor; loading
a library of the same name again points the ops it defines at it (a warning names those
replaced) and keeps the others on the library that defined them."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .errors import ArgumentTypeError, warn
from .library import BFLOAT16, Library, TensorSpec

# Per library name: its torch.library.Library (kept alive) and, per op, the Library that
# runs it now.
_REGISTERED: dict[str, tuple[Any, dict[str, Library]]] = {}


# The API's element types, PyTorch's and NumPy's (bfloat16: ml_dtypes' when installed, else
# its bit patterns as uint16, which the library takes as bfloat16).
_DTYPES: list[tuple[Any, np.dtype]] = [
    (torch.uint8, np.dtype(np.uint8)),
    (torch.int8, np.dtype(np.int8)),
    (torch.int16, np.dtype(np.int16)),
    (torch.int32, np.dtype(np.int32)),
    (torch.int64, np.dtype(np.int64)),
    (torch.float16, np.dtype(np.float16)),
    (torch.float32, np.dtype(np.float32)),
    (torch.bfloat16, BFLOAT16 if BFLOAT16 is not None else np.dtype(np.uint16)),
]


def _fake(routes: dict[str, Library], name: str) -> Any:
    """Op `name`'s fake implementation: its shape function run on data-less tensors of the
    arguments' shapes and element types (once per signature and library), an empty tensor
    of what it gives on the arguments' device (fake or meta)."""
    # Keyed by the library itself (not its id(), which a later library could reuse).
    cache: dict[tuple[Any, ...], tuple[np.dtype, tuple[int, ...]]] = {}

    def fake(*args: Any) -> torch.Tensor:
        specs: list[Any] = []
        for a in args:
            if isinstance(a, torch.Tensor):
                specs.append(TensorSpec(_numpy_dtype(name, a), tuple(int(d) for d in a.shape)))
            else:
                specs.append(int(a) if isinstance(a, torch.SymInt) else float(a) if isinstance(a, torch.SymFloat) else a)
        library = routes[name]
        key = (library, *(_key(s) for s in specs))
        if key not in cache:
            cache[key] = library.output_spec(name, specs)
        dtype, shape = cache[key]
        torch_dtype = next(t for t, n in _DTYPES if n == dtype)
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), torch.device("meta"))
        return torch.empty(shape, dtype=torch_dtype, device=device)

    return fake


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
    dtype = next((n for d, n in _DTYPES if d == t.dtype), None)
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
        return _to_torch(routes[name].ops[name](*[_to_numpy(a) for a in args]))

    return impl
