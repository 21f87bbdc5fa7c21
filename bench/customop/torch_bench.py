"""The PyTorch path's speed (make torch-bench, opt-in: PyTorch installed; figures in
bench/README.md): the TCM relu over 64 Mi float32 (256 MiB) called as torch.ops on a CPU
tensor, against torch.relu and NumPy's np.maximum(x, 0) on the same data in the same run;
and torch.ops on a one-element tensor against torch.relu on it. Min / median / max over the
calls after the first (the first starts the server and its core, and maps every page once).

usage: python torch_bench.py NTX KERNELS_DIR BUILD_DIR [CALLS]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_bench import arguments, load_relus, row, timed  # noqa: E402  (the same setup, timing and rows)


def main() -> None:
    kernels, build, calls = arguments()
    tcm, relu = load_relus(kernels, build)
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
