"""A stand-in for `torch_xla.core.xla_model` on a workstation's CPU, one process, one
device: what the public custom-op samples' drivers and common training loops call.
`xla_device()` is the CPU, `mark_step()` does nothing (each operation ran when it was
called: there is no graph to cut), `save()` is `torch.save`, `optimizer_step()` is the
optimizer's step (one replica: nothing to reduce), `master_print()` prints, the ordinal is
0 of 1. Any other name raises an AttributeError that says it is not stood in for. Import it
where the samples import torch_xla's (`from neuron_customop_host import xla_model as xm`);
docs/customop-python.md lists the other changes. Needs PyTorch."""

from __future__ import annotations

from typing import Any


def xla_device(n: int | None = None, devkind: str | None = None) -> Any:
    """The device the samples' tensors go to: the CPU (`n` and `devkind` are ignored)."""
    import torch

    return torch.device("cpu")


def mark_step(wait: bool = False) -> None:
    """Nothing to do on the CPU: each operation already ran."""


def save(data: Any, file_or_path: Any, master_only: bool = True, global_master: bool = False) -> None:
    """`torch.save(data, file_or_path)`: the tensors are on the CPU already."""
    import torch

    torch.save(data, file_or_path)


def optimizer_step(optimizer: Any, barrier: bool = False, optimizer_args: dict[str, Any] | None = None) -> Any:
    """`optimizer.step(**optimizer_args)`: one replica, so no gradients to reduce first."""
    return optimizer.step(**(optimizer_args or {}))


def master_print(*args: Any, fd: Any = None, finalize: bool = True) -> None:
    """`print` (this process is the master): to `fd` if given, else stdout."""
    print(*args, file=fd, flush=True)


def get_ordinal(defval: int = 0) -> int:
    """This replica's ordinal: 0, the only one."""
    return 0


def get_local_ordinal(defval: int = 0) -> int:
    """This replica's ordinal on its host: 0."""
    return 0


def is_master_ordinal(local: bool = True) -> bool:
    """Whether this is the master replica: always."""
    return True


def xrt_world_size(defval: int = 1) -> int:
    """How many replicas there are: 1."""
    return 1


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"neuron_customop_host.xla_model does not stand in for torch_xla's xla_model.{name}: "
        "it runs on one CPU process (docs/customop-python.md lists what it has)"
    )
