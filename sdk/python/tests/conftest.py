"""Fixtures: our kernels (sdk/tests/customops) built once per session by custom_op.load into
a temporary folder, with the installed SDK's ntx ($NEURON_CUSTOMOP_HOST_NTX or PATH)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from neuron_customop_host import custom_op

# The checkout (its kernels, its Cargo.toml): $NT_ROOT, else the one these tests are in.
ROOT = Path(os.environ.get("NT_ROOT") or Path(__file__).resolve().parents[3])
KERNELS = ROOT / "sdk" / "tests" / "customops"

# The kernels' own reader of their cases by name (sdk/tests/customops/cases.py), for the
# tests to import: a test names a case, never its number.
sys.path.insert(0, str(KERNELS))

# name: (compute sources, shape sources)
LIBRARIES = {
    "relu": (["relu.cpp"], ["relu_shape.cpp"]),
    "relu_tcm": (["relu_tcm.cpp"], ["relu_tcm_shape.cpp"]),
    "misc": (["misc.cpp"], ["misc_shape.cpp"]),
    "misuse": (["misuse.cpp"], ["misuse_shape.cpp"]),
    "ops": (["ops.cpp"], ["ops_shape.cpp"]),
    "failures": (["failures.cpp"], ["failures_shape.cpp"]),
    "shadowed": (["failures.cpp"], ["shadowed_shape.cpp"]),
    "trust": (["trust.cpp"], ["trust_shape.cpp"]),
}
# failures.cpp throws and exits, which the device runtime lacks, and trust.cpp sleeps with
# usleep, which the device's headers lack: built for the host only.
HOST_ONLY = {"failures", "shadowed", "trust"}


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("build")


@pytest.fixture(scope="session")
def built(build_dir: Path):
    """A function: the library `name` (built on first use), loaded with `cores`."""
    loaded = {}

    def get(name: str, **kwargs):
        if name not in loaded:
            compute, shape = LIBRARIES[name]
            sources = [KERNELS / c for c in compute], [KERNELS / s for s in shape]
            custom_op.load(name, *sources, build_dir, device_parity=name not in HOST_ONLY).close()
            loaded[name] = build_dir / f"lib{name}.so"
        return custom_op.load_library(loaded[name], **kwargs)

    return get
