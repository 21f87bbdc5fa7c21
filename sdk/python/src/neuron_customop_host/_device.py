"""A library's calls on the emulated Q7 (`device=True`, `profile=DIR`): each call is the
command line's `ntx op run --device`, with the sources and flags `custom_op.load` built the
library from (recorded in its stamp), the library's cores, timeout and sanitize, the
tensors as .npy files in a temporary folder and the output read back from one. The exit
status and the `--stats=json` document are the server's answer's, so a call ends with the
same errors and warnings as on the host run. The shape function (PyTorch's fake
implementation) still runs on the host's server: it computes no values."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._abi import Tag


@dataclass(frozen=True)
class DeviceBuild:
    """What `ntx op run --device` builds the library's device program from: as `load` was
    given it, in the folder it was called from (relative flags are read there)."""

    tool: str
    name: str
    std: str
    options: tuple[str, ...]
    compute: tuple[str, ...]
    shape: tuple[str, ...]
    cwd: str
    build_dir: str

    def record(self) -> dict[str, Any]:
        """The stamp's record of it."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items() if k != "tool"}


def recorded(stamp: Path, tool: str) -> DeviceBuild | None:
    """The build `load` recorded in `stamp` (None: no record, or one of another form)."""
    try:
        r = json.loads(stamp.read_text())["build"]
        return DeviceBuild(
            tool,
            str(r["name"]),
            str(r["std"]),
            tuple(map(str, r["options"])),
            tuple(map(str, r["compute"])),
            tuple(map(str, r["shape"])),
            str(r["cwd"]),
            str(r["build_dir"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _text(prepared: dict[str, Any]) -> str:
    """A number as the runner's command line takes it (a double by its shortest exact
    decimal, `nan`, `inf` and `-inf` by name)."""
    ((tag, value),) = prepared.items()
    if tag in (Tag.DOUBLE, Tag.SCALAR_FLOAT):
        return repr(struct.unpack("<d", int(value).to_bytes(8, "little"))[0])
    return str(value)


@dataclass(frozen=True)
class Settings:
    """A call's settings: the library's."""

    cores: int
    timeout: float
    sanitize: bool
    profile: str | None


def call(build: DeviceBuild, op: str, prepared: Sequence[Any], s: Settings) -> tuple[dict[str, Any], np.ndarray | None]:
    """Op `op` on the emulated Q7 with `prepared` (`Library._prepare`'s: (code, array) for a
    tensor, the server's form of a number): the answer as the server gives it (`status`,
    `stats`, `error`) and the output (None unless it ran)."""
    with tempfile.TemporaryDirectory(prefix="nt-device-") as tmp:
        args = []
        for k, p in enumerate(prepared):
            if isinstance(p, tuple):
                path = os.path.join(tmp, f"input{k}.npy")
                np.save(path, np.ascontiguousarray(p[1]))
                args.append(path)
            else:
                args.append(_text(p))
        out = os.path.join(tmp, "output.npy")
        cmd = [build.tool, "op", "run", "--device", "--name", build.name, "--std", build.std, *build.options]
        cmd += [a for c in build.compute for a in ("--compute", c)] + [a for c in build.shape for a in ("--shape", c)]
        cmd += ["--build-dir", build.build_dir, "--cores", str(s.cores), "--timeout", repr(s.timeout)]
        cmd += ["--stats=json", "--out", out] + (["--sanitize"] if s.sanitize else [])
        cmd += ["--profile", s.profile] if s.profile is not None else []
        cmd += [op, *args]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=build.cwd)
        try:
            stats = json.loads(p.stdout) if p.stdout.strip() else None
        except ValueError:
            stats = None
        said = [line for line in p.stderr.splitlines() if not line.startswith(("warning[", "error["))]
        if p.returncode == 0 and said:
            # What the kernels printed (the runner sends it to stderr under --stats=json).
            print("\n".join(said), file=sys.stderr)
        answer = {"status": p.returncode, "stats": stats, "error": p.stderr.strip() or None}
        return answer, (np.load(out) if p.returncode == 0 and Path(out).exists() else None)
