"""The stack the device runs a kernel on (docs/customop-device.md, "The stack"), on the
emulated Q7 and the host: check_device.py's stack checks."""

import subprocess
import sys

import numpy as np
from device_build import Built, ntx_device, same_as_host

STACK_KERNEL = """#include <torch/torch.h>
// Each row of x summed through a local array of ROW_BUF floats (10000 bytes of stack).
#ifndef ROW_BUF
#define ROW_BUF 2500
#endif
torch::Tensor row_sums(const torch::Tensor &x)
{
    volatile float buf[ROW_BUF];
    auto in = x.accessor<float, 2>();
    torch::Tensor out = torch::zeros({x.size(0)}, torch::kFloat);
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.size(0); ++i) {
        for (int64_t k = 0; k < ROW_BUF; ++k)
            buf[k] = k < x.size(1) ? float(in[i][k]) : float(buf[k - x.size(1)]);
        float s = 0;
        for (int64_t k = 0; k < ROW_BUF; ++k)
            s += buf[k];
        o[i] = s;
    }
    return out;
}
"""

STACK_SHAPE = """#include <torch/torch.h>
#include "torchneuron/register.h"
torch::Tensor row_sums_shape(const torch::Tensor &x) { return torch::zeros({x.size(0)}, torch::kFloat); }
NEURON_LIBRARY(stack_ops, m) { m.def("row_sums", &row_sums_shape, "row_sums"); }
"""


def on_device(built, work):
    """`built`'s row_sums of rows.npy on the emulated Q7: the finished process."""
    cmd = [
        built.program,
        "row_sums",
        "rows.npy",
        "--out",
        "rows-out.npy",
        "--device",
        built.elf,
        "--translation",
        built.translation,
    ]
    return subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)


def build(ntx, src, work, name, *flags, code=0):
    """stack.cpp built by `ntx op run --device` with `flags` into WORK/NAME, run once."""
    return Built(ntx, src, work, name, work / "stack.cpp", work / "stack_shape.cpp", *flags, "row_sums", "rows.npy", code=code)


def check(ntx, src, work):
    """A kernel with 10000 bytes of locals, past the HBM stack of the default STACK_SIZE
    (4064 bytes of frames): the device runs it if the core's own room holds it, so
    stack-may-overflow (a warning, the host's bytes) and stack-overflow-host on the host;
    with 280000 bytes, past a core's 256 KiB too, stack-overflow (exit 2) at the first
    request; with -DSTACK_SIZE=16384 nothing is reported; more than 4 MiB is refused."""
    (work / "stack.cpp").write_text(STACK_KERNEL)
    (work / "stack_shape.cpp").write_text(STACK_SHAPE)
    np.save(work / "rows.npy", np.load(work / "x.npy")[:2])
    deep = build(ntx, src, work, "stack")
    same_as_host(deep, "row_sums past the HBM stack", "row_sums", "rows.npy")
    said = on_device(deep, work).stderr
    if "warning[stack-may-overflow]" not in said or "past the 4064" not in said:
        sys.exit(f"a kernel past the HBM stack:\n{said}")
    if "error[" in said or "-DSTACK_SIZE=10" not in said:
        sys.exit(f"a kernel past the HBM stack, the remedy: {said}")
    print("ok stack-may-overflow: 10000 bytes of locals past the 4064 of an HBM stack, a warning")
    p = subprocess.run(
        [deep.program, "row_sums", "rows.npy", "--out", "rows-out.npy"], cwd=work, capture_output=True, text=True, check=False
    )
    if p.returncode != 0 or "warning[stack-overflow-host]" not in p.stderr:
        sys.exit(f"the same on the host: exit {p.returncode}\n{p.stderr}")
    print("ok stack-overflow-host: the host's frames past 4064 when the kernel called the SDK (a warning)")
    p = on_device(build(ntx, src, work, "stack-huge", "--cflag=-DROW_BUF=70000", code=2), work)
    if p.returncode != 2 or "error[stack-overflow]" not in p.stderr or "faults either way" not in p.stderr:
        sys.exit(f"a kernel past a core's local memory: exit {p.returncode}\n{p.stderr}")
    print("ok stack-overflow: 280000 bytes of locals, past a core's 256 KiB as well, exit 2")
    raised = build(ntx, src, work, "stack-raised", "--cflag=-DSTACK_SIZE=16384")
    same_as_host(raised, "row_sums with -DSTACK_SIZE=16384", "row_sums", "rows.npy")
    p = on_device(raised, work)
    if p.returncode != 0 or "stack-" in p.stderr:
        sys.exit(f"-DSTACK_SIZE=16384 holds 10000 bytes: exit {p.returncode}\n{p.stderr}")
    shape = work / "stack_shape.cpp"
    p = ntx_device(
        ntx, src, work, "stack-big", work / "stack.cpp", shape, "--cflag=-DSTACK_SIZE=4194305", "row_sums", "rows.npy", code=1
    )
    if "STACK_SIZE cannot be greater than 4MB" not in p.stderr:
        sys.exit(f"-DSTACK_SIZE=4194305: {p.stderr!r}")
    print("ok -DSTACK_SIZE past 4 MiB refused at compile time")
