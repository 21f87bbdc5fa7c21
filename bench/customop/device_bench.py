"""The relu kernels on the emulated Q7 (make bench; figures in bench/README.md and
docs/performance.md): instructions per output element from `ntx op run --device`'s
--stats=json (exact: the same on every run) for relu through the standard accessor, through
TCM on one core and on 8 cores, over 64 Ki float32 (256 x 256); beside them the same op's
host-model run and its emulation, wall time of the op's program (min / median / max of
`RUNS`); and relu through TCM and through the accessor over 1 Mi float32 on one emulated
core, with the emulated instructions per second (the device runtime's included: qemu runs
them too); and the public-sample-shaped accessor relu over 512 x 512 float32 as a user runs
it, `ntx op run --device` against `ntx op run` (each building into a fresh folder: compile
included). The op's programs count by the SDK's qemu plugin, as ntx runs them.

usage: device_bench.py NTX KERNELS_DIR WORK_DIR [RUNS]
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


def build(ntx: str, kernels: Path, work: Path, name: str, op: str) -> tuple[Path, Path, Path]:
    """ntx op run --device once (it builds both programs): the host program, the device
    program and the translation object."""
    cmd = [ntx, "op", "run", "--device", "--compute", kernels / f"{name}.cpp"]
    cmd += ["--shape", kernels / f"{name}_shape.cpp", "--build-dir", work / name, op, work / "small.npy"]
    subprocess.run(cmd, check=True, capture_output=True)
    translation = next(Path(ntx).resolve().parent.parent.glob("lib/*/translation.o"))
    return work / name / "op", work / name / "device" / "op.elf", translation


def run(program: Path, args: list, device: tuple[Path, Path] | None) -> tuple[float, dict]:
    """Seconds of one run of the op's program, and its --stats=json document."""
    cmd = [program, *map(str, args), "--stats=json", "--timeout", "0"]
    if device:
        cmd += ["--device", device[0], "--translation", device[1]]
    t = time.perf_counter()
    p = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return time.perf_counter() - t, json.loads(p.stdout)


def user_run(ntx: str, kernels: Path, work: Path, device: bool) -> float:
    """Seconds of `ntx op run [--device]` of the accessor relu over 512 x 512, building into
    a fresh folder."""
    folder = work / ("user-device" if device else "user-host")
    shutil.rmtree(folder, ignore_errors=True)
    cmd = [ntx, "op", "run", *(["--device"] if device else []), "--compute", kernels / "relu.cpp"]
    cmd += ["--shape", kernels / "relu_shape.cpp", "--build-dir", folder, "relu_forward", work / "x512.npy"]
    cmd += ["--out", work / "user-out.npy", "--timeout", "0"]
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t


def times(label: str, ts: list[float]) -> str:
    return f"{label} {min(ts):.3f} / {statistics.median(ts):.3f} / {max(ts):.3f} s"


def main() -> None:
    ntx, kernels, work = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    work.mkdir(parents=True, exist_ok=True)
    pc = os.environ.get("PKG_CONFIG_PATH", "")
    prefix_pc = str(Path(ntx).resolve().parent.parent / "lib" / "pkgconfig")
    plugin = subprocess.run(
        ["pkg-config", "--variable=count_plugin", "neuron_customop_device"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PKG_CONFIG_PATH": f"{prefix_pc}:{pc}" if pc else prefix_pc},
    ).stdout.strip()
    os.environ["NT_QEMU_COUNT_PLUGIN"] = plugin
    rng = np.random.default_rng(0)
    np.save(work / "x512.npy", rng.standard_normal((512, 512), dtype=np.float32))
    np.save(work / "small.npy", rng.standard_normal((4, 4), dtype=np.float32))
    np.save(work / "x64k.npy", rng.standard_normal((256, 256), dtype=np.float32))
    np.save(work / "x1m.npy", rng.standard_normal((1024, 1024), dtype=np.float32))
    relu = build(ntx, kernels, work, "relu", "relu_forward")
    tcm = build(ntx, kernels, work, "relu_tcm", "relu_tcm")
    cases = [
        ("relu, standard accessor, 1 core", relu, ["relu_forward", work / "x64k.npy"]),
        ("relu, TCM, 1 core", tcm, ["relu_tcm", work / "x64k.npy"]),
        ("relu, TCM, 8 cores", tcm, ["relu_multicore", work / "x64k.npy", "--cores", "8"]),
    ]
    print("64 Ki float32 (256 x 256): instructions per output element (all cores; core 0's per element it wrote),")
    print("then the host model's run and the emulated run of the op's program, min / median / max")
    for label, (program, elf, translation), args in cases:
        host = [run(program, args, None)[0] for _ in range(runs)]
        device, stats = [], {}
        for _ in range(runs):
            t, stats = run(program, args, (elf, translation))
            device.append(t)
        op, core0 = stats["device"], stats["per_core"][0]["device"]
        total = op["instructions"] / op["elements"]
        trans = op["translation"] / op["elements"]
        core0 = core0["instructions"] / core0["elements"]
        print(f"  {label:<34} {total:7.2f} ({core0:6.2f}; {trans:5.2f} in translation)", end="")
        print(f"  {times('host', host)}   {times('emulated', device)}", flush=True)
    print("1 Mi float32 (1024 x 1024) on one emulated core:")
    for label, (program, elf, translation), op in (
        ("relu, TCM", tcm, "relu_tcm"),
        ("relu, standard accessor", relu, "relu_forward"),
    ):
        ts = []
        for _ in range(runs):
            t, stats = run(program, [op, work / "x1m.npy"], (elf, translation))
            ts.append(t)
        d = stats["per_core"][0]["device"]
        rate = (d["instructions"] + d["runtime"]) / statistics.median(ts) / 1e6
        print(f"  {label:<34} {d['instructions'] / d['elements']:7.2f} per element  {times('emulated', ts)}", end="")
        print(f"  {rate:.0f} M instructions/s (median)", flush=True)
    print("the accessor relu over 512 x 512 float32 as a user runs it (compile included):")
    host = [user_run(ntx, kernels, work, False) for _ in range(runs)]
    device = [user_run(ntx, kernels, work, True) for _ in range(runs)]
    ratio = statistics.median(device) / statistics.median(host)
    print(f"  ntx op run: {times('host', host)}   ntx op run --device: {times('device', device)}   {ratio:.1f}x")


if __name__ == "__main__":
    main()
