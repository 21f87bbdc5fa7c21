"""The xla_model stand-in: what the samples and common training loops call, on one CPU
process, and a clear error for the rest. Needs no PyTorch."""

from __future__ import annotations

import io

import pytest

from neuron_customop_host import xla_model as xm


class _Optimizer:
    def __init__(self) -> None:
        self.steps: list[dict[str, object]] = []

    def step(self, **kwargs: object) -> str:
        self.steps.append(kwargs)
        return "stepped"


def test_a_training_loops_calls_are_one_replicas() -> None:
    opt = _Optimizer()
    assert xm.optimizer_step(opt) == "stepped" and opt.steps == [{}]
    xm.optimizer_step(opt, barrier=True, optimizer_args={"closure": None})
    assert opt.steps[1] == {"closure": None}
    assert (xm.get_ordinal(), xm.get_local_ordinal(), xm.xrt_world_size(), xm.is_master_ordinal()) == (0, 0, 1, True)
    out = io.StringIO()
    xm.master_print("loss", 0.5, fd=out)
    assert out.getvalue() == "loss 0.5\n"
    xm.mark_step()


def test_a_call_it_does_not_stand_in_for_says_so() -> None:
    with pytest.raises(AttributeError, match="does not stand in for torch_xla's xla_model.all_reduce"):
        xm.all_reduce  # noqa: B018
