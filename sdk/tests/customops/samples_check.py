"""`make samples-check SAMPLES=<checkout>`: the public aws-neuron-samples relu kernels, built
unmodified from a checkout by an installed `ntx op run` and run on 1, 2 and 8 cores where
they allow it (the multicore sample on 1 core writes an eighth: get_cpu_count() is 8),
against NumPy, on the host model (with --sanitize) and on the emulated Q7
(--device); and the multicore sample's overrun on an element count that is not a multiple
of the cores. Nothing of the samples is copied into this repository.

Usage: samples_check.py NTX SAMPLES_CHECKOUT WORK_DIR.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np

VARIANTS = [
    ("training/customop_mlp/neuron", ["relu_forward", "relu_backward"], [1]),
    ("inference/customop_mlp/neuron", ["relu_forward", "relu_backward"], [1]),
    ("inference/customop_mlp/neuron-tcm", ["relu_forward"], [1]),
    ("inference/customop_mlp/neuron-multicore", ["relu_forward"], [2, 8]),
]


def run(ntx, folder, work, op, inputs, cores, device=False):
    out = work / "out.npy"
    out.unlink(missing_ok=True)
    cmd = [ntx, "op", "run", "--compute", folder / "relu.cpp", "--shape", folder / "shape.cpp"]
    cmd += ["--cores", str(cores), "--device" if device else "--sanitize", op, *inputs, "--out", out]
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
    return p, (np.load(out) if out.exists() else None)


def main():
    ntx, samples, work = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    x = np.linspace(-3, 3, 64 * 128, dtype=np.float32).reshape(64, 128)
    g = np.linspace(1, 2, 64 * 128, dtype=np.float32).reshape(64, 128)
    np.save(work / "x.npy", x)
    np.save(work / "g.npy", g)
    want = {"relu_forward": np.maximum(x, 0), "relu_backward": np.where(x > 0, g, 0).astype(np.float32)}
    args = {"relu_forward": ["x.npy"], "relu_backward": ["g.npy", "x.npy"]}
    failed = 0
    for device in (False, True):
        for sub, ops, cores_list in VARIANTS:
            folder = samples / "torch-neuronx" / sub
            for op in ops:
                for cores in cores_list:
                    p, got = run(ntx, folder, work, op, args[op], cores, device)
                    ok = p.returncode == 0 and got is not None and np.array_equal(got, want[op])
                    failed += not ok
                    where = "the emulated Q7" if device else "the host model"
                    detail = "" if ok else ": " + p.stderr
                    print(f"{'ok' if ok else 'FAILED'} {sub} {op} on {cores} core(s), {where}{detail}")
    # On one core get_cpu_count() is 8, as the device's library says: the multicore sample
    # writes its first eighth, the rest is reported, on the host and the device alike.
    folder = samples / "torch-neuronx/inference/customop_mlp/neuron-multicore"
    for device in (False, True):
        p, _ = run(ntx, folder, work, "relu_forward", ["x.npy"], 1, device)
        reported = p.returncode == 2 and "output-unwritten" in p.stderr and "1024..8192" in p.stderr
        failed += not reported
        where = "device" if device else "host"
        print(f"{'ok' if reported else 'FAILED'} multicore sample on 1 core ({where}): 1024..8192 unwritten")
    odd = np.linspace(-3, 3, 3 * 1001, dtype=np.float32).reshape(3, 1001)
    np.save(work / "odd.npy", odd)
    folder = samples / "torch-neuronx/inference/customop_mlp/neuron-multicore"
    for cores in (2, 8):
        p, _ = run(ntx, folder, work, "relu_forward", ["odd.npy"], cores)
        reported = p.returncode == 2 and "tcm-copy-past-end" in p.stderr
        failed += not reported
        print(f"{'ok' if reported else 'FAILED'} multicore sample on 3003 elements, {cores} cores: overrun reported")
        print("   " + p.stderr.strip().replace("\n", "\n   "))
    print("samples check failed" if failed else "samples check passed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
