"""Calls on the emulated Q7 from Python: `custom_op.load(..., device=True, profile=DIR)` and
`load_library(..., device=True)` run each call as `ntx op run --device` does, with the
library's sources, cores, timeout and sanitize: the host run's values, the device's counts
in `last_stats`, the profile's three files, the same errors as on the host."""

from __future__ import annotations

import json
from pathlib import Path

import cases
import numpy as np
import pytest

from neuron_customop_host import ArgumentValueError, MisuseError, custom_op

from .conftest import KERNELS

MISUSE = cases.read("misuse_cases.h")


def test_a_call_on_the_emulated_q7_gives_the_host_runs_values_and_its_counts(build_dir: Path, tmp_path: Path) -> None:
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    profile = tmp_path / "profile"
    sources = [KERNELS / "relu.cpp"], [KERNELS / "relu_shape.cpp"]
    with custom_op.load("relu_dev", *sources, build_dir, device=True, profile=profile) as lib:
        y = lib.relu_forward(x)
        np.testing.assert_array_equal(y, np.maximum(x, 0))
        counted = lib.last_stats["device"]["instructions"]
        assert counted > 0 and lib.last_stats["device"]["elements"] == 12
    written = json.loads((profile / "profile.json").read_text())
    assert written["op"] == "relu_forward" and written["instructions"] == counted
    assert sorted(p.name for p in profile.iterdir()) == ["profile.json", "profile.svg", "profile.txt"]
    with custom_op.load_library(build_dir / "librelu_dev.so") as host:
        np.testing.assert_array_equal(host.relu_forward(x), y)
        assert "device" not in (host.last_stats or {})


def test_a_misuse_on_the_emulated_q7_raises_as_on_the_host(built, build_dir: Path) -> None:
    built("misuse").close()
    x = np.zeros((60, 50), np.float32)
    with custom_op.load_library(build_dir / "libmisuse.so", device=True) as lib:
        with pytest.raises(MisuseError, match="index-out-of-range") as e:
            lib.misuse(x, MISUSE["INDEX_PAST_END"])
        assert [r["kind"] for r in e.value.reports] == ["index-out-of-range"]


def test_device_and_profile_are_refused_where_they_cannot_run(built, build_dir: Path, tmp_path: Path) -> None:
    built("relu").close()
    with pytest.raises(ArgumentValueError, match=r"profile=.* counts a run on the emulated Q7: give device=True too"):
        custom_op.load_library(build_dir / "librelu.so", profile=tmp_path / "p")
    copied = tmp_path / "librelu.so"
    copied.write_bytes((build_dir / "librelu.so").read_bytes())
    copied.chmod(0o755)
    with pytest.raises(ArgumentValueError, match=r"device=True: .*librelu\.so has no record of the sources it was built from"):
        custom_op.load_library(copied, device=True)
