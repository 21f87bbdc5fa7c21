"""A library built by an installed `ntx op run --device` (its host program and its device
program) and the device run held to the host run: check_device.py's and device_stack.py's
helpers."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np


def ntx_device(ntx, src, work, name, compute, shape, *args, code=0):
    """ntx op run --device, building into WORK/NAME: the finished process."""
    cmd = [ntx, "op", "run", "--device", "--compute", src / compute, "--shape", src / shape]
    cmd += ["--build-dir", work / name, *map(str, args)]
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
    if p.returncode != code:
        sys.exit(f"{name} {args}: exit {p.returncode}, not {code}\n{p.stderr}")
    return p


class Built:
    """A library built by ntx op run --device: its host program and its device program."""

    def __init__(self, ntx, src, work, name, compute, shape, *op_and_args, code=0):
        ntx_device(ntx, src, work, name, compute, shape, *op_and_args, code=code)
        self.work = work
        self.source = Path(src) / compute
        self.program = work / name / "op"
        self.elf = work / name / "device" / "op.elf"
        prefix = Path(ntx).resolve().parent.parent
        self.translation = next(prefix.glob("lib/*/translation.o"))

    def run(self, *args, cores=1, device=True, stats=True, by_log=False):
        """The op's output and its --stats=json document (without stats: what it printed);
        `by_log`: the device's instructions counted from qemu's log, not by the plugin."""
        out = self.work / "out.npy"
        out.unlink(missing_ok=True)
        cmd = [self.program, *map(str, args), "--cores", str(cores), "--out", out]
        cmd += ["--stats=json"] if stats else []
        if device:
            cmd += ["--device", self.elf, "--translation", self.translation]
        env = {**os.environ, "NT_QEMU_COUNT_PLUGIN": ""} if by_log else None
        p = subprocess.run(cmd, cwd=self.work, capture_output=True, text=True, check=False, env=env)
        if p.returncode != 0:
            sys.exit(f"{args} on {cores} cores (device {device}): exit {p.returncode}\n{p.stderr}")
        return np.load(out), json.loads(p.stdout) if stats else p.stdout

    def outcome(self, *args, device=True):
        """(exit status, the output's bytes or b'') of a run, without stats."""
        out = self.work / "out.npy"
        out.unlink(missing_ok=True)
        cmd = [self.program, *map(str, args), "--out", out]
        if device:
            cmd += ["--device", self.elf, "--translation", self.translation]
        p = subprocess.run(cmd, cwd=self.work, capture_output=True, text=True, check=False)
        return p.returncode, np.load(out).tobytes() if p.returncode == 0 else b""


def same_as_host(built, name, *args, cores=1, want=None):
    """The device run against the host run: the same bytes (and `want`'s, when given); the
    device counts."""
    host, _ = built.run(*args, cores=cores, device=False)
    if want is not None and host.tobytes() != want.tobytes():
        sys.exit(f"{name}: the host run gave {host}, not {want}")
    got, stats = built.run(*args, cores=cores)
    if got.dtype != host.dtype or got.tobytes() != host.tobytes():
        sys.exit(f"{name} on {cores} cores: the device gave {got}, the host {host}")
    for c in stats["per_core"]:
        d = c.get("device")
        if not d or d["instructions"] <= 0 or d["translation"] <= 0 or d["elements"] <= 0:
            sys.exit(f"{name}, core {c['core']}: no device counts in {c}")
        if d["translation"] + d["copies"] > d["instructions"]:
            sys.exit(f"{name}, core {c['core']}: parts larger than the whole: {d}")
    # Each core's figure over the elements it wrote; the op's over the whole output.
    op = stats["device"]
    per_core = [c["device"] for c in stats["per_core"]]
    if op["elements"] != host.size or sum(d["elements"] for d in per_core) != host.size:
        sys.exit(f"{name} on {cores} cores: the elements written {[d['elements'] for d in per_core]}, not {host.size}")
    if op["instructions"] != sum(d["instructions"] for d in per_core):
        sys.exit(f"{name} on {cores} cores: the op's instructions are not the cores' sum: {op}")
    if stats["schema"] != "neuron-customop-host-stats/2":
        sys.exit(f"schema {stats['schema']}")
    # The plugin's counts are the log's, block for block (the device runtime's own, not
    # counted, may differ by how the socket's reads split).
    _, logged = built.run(*args, cores=cores, by_log=True)
    for c, by_log in zip(stats["per_core"], logged["per_core"], strict=True):
        want, got = ({k: x["device"][k] for k in ("instructions", "translation", "copies", "elements")} for x in (by_log, c))
        if got != want:
            sys.exit(f"{name} on {cores} cores, core {c['core']}: the plugin counted {got}, the log {want}")
    per = op["instructions"] / host.size
    print(f"ok {name} on {cores} core(s): the host's bytes, {per:.1f} instructions per element")
    return stats
