"""The torch tests' library: sdk/tests/customops/relu.cpp built by custom_op.load (as a
build.py does) into a temporary folder, which my_ops.py then loads."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from neuron_customop_host import custom_op

ROOT = Path(os.environ.get("NT_ROOT") or Path(__file__).resolve().parents[3])
KERNELS = ROOT / "sdk" / "tests" / "customops"

if "NT_TORCH_BUILD" not in os.environ:
    os.environ["NT_TORCH_BUILD"] = tempfile.mkdtemp(prefix="nt-torch-")
custom_op.load("relu", [KERNELS / "relu.cpp"], [KERNELS / "relu_shape.cpp"], os.environ["NT_TORCH_BUILD"]).close()
