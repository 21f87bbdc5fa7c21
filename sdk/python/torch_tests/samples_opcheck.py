"""`make samples-torch-check SAMPLES=<checkout>` (opt-in: PyTorch installed): the public
aws-neuron-samples relu libraries built unmodified from a checkout by `custom_op.load`, as
their build.py builds them (multicore for the multicore sample), each op put through
`torch.library.opcheck` (schema, fake tensor, AOT dispatch with dynamic shapes) and
against torch.relu. Nothing of the samples is copied into this repository.

usage: python samples_opcheck.py SAMPLES_CHECKOUT BUILD_DIR
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch

from neuron_customop_host import NeuronCustomOpWarning, custom_op

# (folder, multicore as its build.py says, ops)
SAMPLES = [
    ("training/customop_mlp/neuron", False, ["relu_forward", "relu_backward"]),
    ("inference/customop_mlp/neuron", False, ["relu_forward", "relu_backward"]),
    ("inference/customop_mlp/neuron-tcm", False, ["relu_forward"]),
    ("inference/customop_mlp/neuron-multicore", True, ["relu_forward"]),
]


def main() -> None:
    samples, build = Path(sys.argv[1]) / "torch-neuronx", Path(sys.argv[2]).resolve()
    warnings.simplefilter("ignore", NeuronCustomOpWarning)  # each sample replaces my_ops' ops
    torch.manual_seed(0)
    # 64 x 128: a multiple of the 8 cores (the multicore sample overruns on other sizes).
    x, g = torch.randn(64, 128), torch.rand(64, 128)
    for folder, multicore, ops in SAMPLES:
        src = samples / folder
        out = build / folder.replace("/", "-")
        lib = custom_op.load("relu", [src / "relu.cpp"], [src / "shape.cpp"], out, multicore=multicore)
        lib.close()
        custom_op.load_library(out / "librelu.so")
        for op in ops:
            f = getattr(torch.ops.my_ops, op)
            args = (x,) if op == "relu_forward" else (g, x)
            want = torch.relu(x) if op == "relu_forward" else torch.where(x > 0, g, 0)
            assert torch.equal(f(*args), want), f"{folder} {op}: not torch's result"
            result = torch.library.opcheck(f, args)
            bad = {k: v for k, v in result.items() if v != "SUCCESS"}
            assert not bad, f"{folder} {op}: {bad}"
            names = [a.name for a in f.default._schema.arguments]
            print(f"ok {folder} {op}({', '.join(names)}): torch's result, opcheck {sorted(result)} all SUCCESS")
    print("the public samples pass opcheck")


if __name__ == "__main__":
    main()
