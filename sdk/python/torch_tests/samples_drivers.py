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


def edited(src: Path, dst: Path) -> None:
    """The sample folder `src` copied to `dst` with its files edited as EDITS says."""
    shutil.copytree(src, dst)
    for name, edits in EDITS.items():
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
        copy = work / folder.replace("/", "-")
        edited(samples / folder, copy)
        run(copy, "build.py", env)
        out = run(copy, script, env)
        assert said in out, f"{folder}/{script} printed {out!r}"
        if script == "train.py":
            assert (copy / "checkpoints" / "checkpoint.pt").is_file(), "no checkpoint saved"
        print(f"ok {folder}/{script} with the documented edits: {said} ...")
    print("the public samples' drivers run with the documented edits")


if __name__ == "__main__":
    main()
