"""A stand-in for the three `torch_xla.core.xla_model` calls the public custom-op samples'
drivers make, to run them on a workstation's CPU: `xla_device()` is the CPU, `mark_step()`
does nothing (each operation ran when it was called: there is no graph to cut), `save()` is
`torch.save`. Import it where the samples import torch_xla's
(`from neuron_customop_host import xla_model as xm`); docs/customop-python.md lists the
other changes. Needs PyTorch."""

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
