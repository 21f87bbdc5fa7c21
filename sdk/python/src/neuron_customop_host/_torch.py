"""Every op of a loaded library as torch.ops.<library>.<op>, through torch.library, on CPU
tensors of the API's element types (imported only when PyTorch is installed). A tensor is
handed over as a NumPy array (made contiguous), the result comes back as a tensor; loading
a library of the same name again points the ops at the new one."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .library import Library

_SCHEMA = {"tensor": "Tensor", "int": "int", "double": "float", "scalar": "Scalar"}
# Per library name: its torch.library.Library (kept alive) and the Library it calls now.
_REGISTERED: dict[str, tuple[Any, list[Library]]] = {}


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
    """Defines each op of `library` in its namespace (once) and points it at `library`."""
    if library.name in _REGISTERED:
        _REGISTERED[library.name][1][0] = library
        return
    current = [library]
    lib = torch.library.Library(library.name, "DEF")
    for name, op in library.ops.items():
        params = ", ".join(f"{_SCHEMA[p]} a{k}" for k, p in enumerate(op.params))
        lib.define(f"{name}({params}) -> Tensor")

        def impl(*args: Any, _name: str = name) -> torch.Tensor:
            target = current[0]
            return _to_torch(getattr(target, _name)(*[_to_numpy(a) for a in args]))

        lib.impl(name, impl, "CPU")
    _REGISTERED[library.name] = (lib, current)
