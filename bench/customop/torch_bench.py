"""The PyTorch path's speed (make torch-bench, opt-in: PyTorch installed; figures in
bench/README.md): the TCM relu over 64 Mi float32 (256 MiB) called as torch.ops on a CPU
tensor, against torch.relu and NumPy's np.maximum(x, 0) on the same data in the same run;
and torch.ops on a one-element tensor against torch.relu on it. Min / median / max over the
calls after the first (the first starts the server and its core, and maps every page once).

usage: python torch_bench.py NTX KERNELS_DIR BUILD_DIR [CALLS]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import torch

from neuron_customop_host import custom_op

sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_bench import row, timed  # noqa: E402  (the same timing and rows)


def main() -> None:
    ntx, kernels, build = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    calls = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    os.environ["NEURON_CUSTOMOP_HOST_NTX"] = ntx
    # ntx's default flags, as the public samples build (no extra_cflags).
    tcm = custom_op.load("relu_tcm", [kernels / "relu_tcm.cpp"], [kernels / "relu_tcm_shape.cpp"], build)
    relu = custom_op.load("relu", [kernels / "relu.cpp"], [kernels / "relu_shape.cpp"], build)
    torch.manual_seed(0)
    t = torch.randn(8192, 8192, dtype=torch.float32)
    x = t.numpy()
    print(f"relu over 8192 x 8192 float32 (256 MiB), {calls} calls after the first: min / median / max")
    numpy_new = timed(lambda: np.maximum(x, 0), calls)
    row("NumPy np.maximum(x, 0), a new output", numpy_new)
    row("torch.relu(t)", timed(lambda: torch.relu(t), calls), numpy_new)
    op = torch.ops.relu_tcm_ops.relu_tcm
    row("torch.ops.relu_tcm_ops.relu_tcm(t), 1 core", timed(lambda: op(t), calls), numpy_new)
    assert torch.equal(op(t), torch.relu(t))
    one = torch.zeros((1, 1), dtype=torch.float32)
    many = max(calls, 200)
    row("torch.relu on a 1 x 1 tensor", timed(lambda: torch.relu(one), many))
    row("torch.ops.relu_ops.relu_forward on a 1 x 1 tensor", timed(lambda: torch.ops.relu_ops.relu_forward(one), many))
    tcm.close()
    relu.close()


if __name__ == "__main__":
    main()
