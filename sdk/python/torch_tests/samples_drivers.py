"""`make samples-torch-check SAMPLES=<checkout>` (opt-in: PyTorch installed): the public
training and inference drivers (train.py, inference.py) of aws-neuron-samples' customop_mlp,
run from a copy with exactly the edits docs/customop-python.md lists (EDITS below), on
synthetic MNIST-shaped data (a stand-in `torchvision` of 128 fixed images, so no download
and no torchvision install). Nothing of the samples is copied into this repository.

usage: python samples_drivers.py SAMPLES_CHECKOUT WORK_DIR
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

# docs/customop-python.md, "The samples' drivers": each file's lines as the samples have
# them, and what they become.
EDITS = {
    "build.py": [
        ("import torch_neuronx\n", ""),
        ("from torch_neuronx.xla_impl import custom_op", "from neuron_customop_host import custom_op"),
    ],
    "my_ops.py": [
        ("import torch_neuronx\n", ""),
        ("from torch_neuronx.xla_impl import custom_op", "from neuron_customop_host import custom_op"),
    ],
    "train.py": [
        ("import torch_xla.core.xla_model as xm", "from neuron_customop_host import xla_model as xm"),
        ("device = 'xla'", "device = 'cpu'"),
    ],
    "inference.py": [
        ("import torch_xla.core.xla_model as xm", "from neuron_customop_host import xla_model as xm"),
        ("device = 'xla'", "device = 'cpu'"),
    ],
}

# The same drivers on torch.relu, for the comparison (not the docs' edits: the check's own):
# my_ops.py's two ops replaced by PyTorch's, and the inference driver keeping its last
# batch's output (in both copies) to compare.
ON_TORCH_RELU = {
    "my_ops.py": [
        ("torch.ops.my_ops.relu_forward(input)", "torch.relu(input)"),
        ("torch.ops.my_ops.relu_backward(grad, input)", "torch.where(input > 0, grad, torch.zeros_like(grad))"),
    ],
}
KEEP_OUTPUT = {
    "inference.py": [
        (
            "    print('----------End Inference ---------------')",
            "    torch.save(output.detach().cpu(), 'output.pt')\n    print('----------End Inference ---------------')",
        ),
    ],
}

# A stand-in torchvision: MNIST-shaped images (1 x 28 x 28 in [0, 1)) and labels, fixed.
TORCHVISION = {
    "torchvision/__init__.py": "",
    "torchvision/transforms/__init__.py": "class ToTensor:\n    def __call__(self, x):\n        return x\n",
    "torchvision/datasets/__init__.py": "",
    "torchvision/datasets/mnist.py": (
        "import torch\n\n\nclass MNIST(torch.utils.data.Dataset):\n"
        "    def __init__(self, root, train=True, download=False, transform=None):\n"
        "        g = torch.Generator().manual_seed(1 if train else 2)\n"
        "        self.x = torch.rand(128, 1, 28, 28, generator=g)\n"
        "        self.y = torch.randint(0, 10, (128,), generator=g)\n"
        "        self.transform = transform\n\n"
        "    def __len__(self):\n        return len(self.y)\n\n"
        "    def __getitem__(self, k):\n        return self.transform(self.x[k]), int(self.y[k])\n"
    ),
}


def edited(src: Path, dst: Path, *more: dict[str, list[tuple[str, str]]]) -> None:
    """The sample folder `src` copied to `dst` with its files edited as EDITS says, then as
    each of `more` says."""
    shutil.copytree(src, dst)
    for name, edits in [e for table in (EDITS, *more) for e in table.items()]:
        path = dst / name
        if not path.exists():
            continue
        text = path.read_text()
        for before, after in edits:
            assert before in text, f"{src / name} no longer has {before!r}: the docs' edits are stale"
            text = text.replace(before, after)
        path.write_text(text)


def run(folder: Path, script: str, env: dict[str, str]) -> str:
    p = subprocess.run([sys.executable, script], cwd=folder, env=env, capture_output=True, text=True, check=False)
    assert p.returncode == 0, f"{folder.name}/{script}: exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout


def main() -> None:
    samples, work = Path(sys.argv[1]) / "torch-neuronx", Path(sys.argv[2]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    for name, text in TORCHVISION.items():
        (work / "stand-in" / name).parent.mkdir(parents=True, exist_ok=True)
        (work / "stand-in" / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(work / "stand-in")}
    for folder, script, said in [
        ("training/customop_mlp/neuron", "train.py", "Final loss is"),
        ("inference/customop_mlp/neuron", "inference.py", "Inf throughput"),
    ]:
        outs = []
        for variant, more in (("custom-op", [KEEP_OUTPUT]), ("torch-relu", [KEEP_OUTPUT, ON_TORCH_RELU])):
            copy = work / f"{folder.replace('/', '-')}-{variant}"
            edited(samples / folder, copy, *more)
            run(copy, "build.py", env)
            out = run(copy, script, env)
            assert said in out, f"{folder}/{script} printed {out!r}"
            outs.append((copy, out))
        same_results(folder, script, outs)
        print(f"ok {folder}/{script} with the documented edits: {said} ..., bit for bit as on torch.relu")
    print("the public samples' drivers run with the documented edits, as on torch.relu")


def same_results(folder: str, script: str, outs: list[tuple[Path, str]]) -> None:
    """The custom op's run and torch.relu's give the same bits: the training's checkpoint
    (every tensor of its state) and final loss, the inference's last output."""
    import torch

    (mine, said), (theirs, their_said) = outs
    if script == "train.py":
        a, b = (torch.load(c / "checkpoints" / "checkpoint.pt")["state_dict"] for c in (mine, theirs))
        assert a.keys() == b.keys(), f"{folder}: the checkpoints hold {sorted(a)} and {sorted(b)}"
        differ = [k for k in a if not torch.equal(a[k], b[k])]
        assert not differ, f"{folder}: the checkpoint's {differ} differ from the same training on torch.relu"
        loss = [line for line in said.splitlines() if line.startswith("Final loss")]
        assert loss == [line for line in their_said.splitlines() if line.startswith("Final loss")], (said, their_said)
    else:
        a, b = (torch.load(c / "output.pt") for c in (mine, theirs))
        assert torch.equal(a, b), f"{folder}: the last batch's output differs from the same model on torch.relu"


if __name__ == "__main__":
    main()
