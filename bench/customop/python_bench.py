"""The Python front end's speed (make bench; figures in bench/README.md): relu through TCM
over 64 Mi float32 (256 MiB) called from Python on a NumPy array, against NumPy's
np.maximum(x, 0) on the same array in the same run; and a call of an op on a one-element
tensor. Min / median / max over the calls after the first (the first starts the server
and its core, and maps every page once).

usage: python_bench.py NTX KERNELS_DIR BUILD_DIR [CALLS]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from neuron_customop_host import custom_op


def timed(f, calls: int) -> list[float]:
    """Milliseconds of each of `calls` calls of f after a first, untimed one."""
    f()
    out = []
    for _ in range(calls):
        t = time.perf_counter()
        f()
        out.append((time.perf_counter() - t) * 1e3)
    return out


def row(name: str, ms: list[float], base: list[float] | None = None) -> None:
    line = f"{name:<58} {min(ms):8.3f} / {statistics.median(ms):8.3f} / {max(ms):8.3f} ms"
    if base:
        line += f"   {statistics.median(ms) / statistics.median(base):.2f}x NumPy's median"
    print(line, flush=True)


def arguments() -> tuple[Path, Path, int]:
    """The kernels' folder, the build folder and the calls the command line gives (its
    NTX the package's ntx from now on)."""
    import os

    os.environ["NEURON_CUSTOMOP_HOST_NTX"] = sys.argv[1]
    return Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]) if len(sys.argv) > 4 else 7


def load_relus(kernels: Path, build: Path) -> tuple[Any, Any]:
    """The TCM and the accessor relu libraries, at ntx's default flags as the public
    samples build (no extra_cflags)."""
    tcm = custom_op.load("relu_tcm", [kernels / "relu_tcm.cpp"], [kernels / "relu_tcm_shape.cpp"], build)
    relu = custom_op.load("relu", [kernels / "relu.cpp"], [kernels / "relu_shape.cpp"], build)
    return tcm, relu


def main() -> None:
    kernels, build, calls = arguments()
    tcm, relu = load_relus(kernels, build)
    x = np.random.default_rng(0).standard_normal((8192, 8192), dtype=np.float32)
    out = np.empty_like(x)
    print(f"relu over 8192 x 8192 float32 (256 MiB), {calls} calls after the first: min / median / max")
    numpy_new = timed(lambda: np.maximum(x, 0), calls)
    row("NumPy np.maximum(x, 0), a new output", numpy_new)
    row("NumPy np.maximum(x, 0, out=...)", timed(lambda: np.maximum(x, 0, out=out), calls))
    row("lib.relu_tcm(x), 1 core (copy in, kernel, copy out)", timed(lambda: tcm.relu_tcm(x), calls), numpy_new)
    e = tcm.empty(x.shape, np.float32)
    e[:] = x
    row("lib.relu_tcm(e), e = lib.empty(...) (no copy in)", timed(lambda: tcm.relu_tcm(e), calls), numpy_new)
    assert np.array_equal(tcm.relu_tcm(x), np.maximum(x, 0))
    one = np.zeros((1, 1), np.float32)
    row("lib.relu_forward on a 1 x 1 tensor (one call)", timed(lambda: relu.relu_forward(one), max(calls, 200)))
    tcm.close()
    relu.close()


if __name__ == "__main__":
    main()
