"""`custom_op.load` and `custom_op.load_library`, with the vendor's names and meanings: `load`
builds the compute and shape sources into lib<name>.so in the build directory (the op's
program, which the library runs as its server) and loads it; `load_library` loads what
`load` built. A build whose sources, flags and SDK are unchanged is not compiled again (a
stamp beside the library records what it was built from, as PyTorch's cpp_extension keeps
a hash of its sources)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from . import _sdk
from .library import Library

STAMP_VERSION = 1


def _fingerprint(tool: str, name: str, sources: list[Path], std: str, cflags: list[str]) -> str:
    """What a build depends on: the sources' bytes, the flags, the ntx and SDK it used."""
    h = hashlib.sha256()
    parts = [str(STAMP_VERSION), name, std, json.dumps(cflags), _sdk.version(tool), str(Path(tool).resolve())]
    for p in parts:
        h.update(p.encode() + b"\0")
    for src in sources:
        h.update(str(src).encode() + b"\0" + src.read_bytes() + b"\0")
    sdk = Path(tool).resolve().parent.parent / "lib" / "libneuron_customop_host.a"
    if sdk.exists():
        st = sdk.stat()
        h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def load(
    name: str,
    compute_srcs: Sequence[str | os.PathLike[str]],
    shape_srcs: Sequence[str | os.PathLike[str]],
    build_directory: str | os.PathLike[str] | None = None,
    multicore: bool = False,
    verbose: bool = False,
    extra_cflags: Sequence[str] | None = None,
    cores: int | None = None,
    std: str = "c++14",
    timeout: float = 60.0,
    sanitize: bool = False,
) -> Library:
    """Builds lib<name>.so from the sources into `build_directory` (default: the current
    folder) unless it is up to date, and loads it (see `load_library`)."""
    if not name or name == "builtin" or "/" in name:
        raise ValueError(f"name={name!r}: a library's name, not empty, not 'builtin', without '/'")
    if isinstance(compute_srcs, (str, os.PathLike)) or isinstance(shape_srcs, (str, os.PathLike)):
        raise TypeError("compute_srcs and shape_srcs are lists of source files")
    compute = [Path(s).resolve() for s in compute_srcs]
    shape = [Path(s).resolve() for s in shape_srcs]
    missing = [str(s) for s in compute + shape if not s.is_file()]
    if not compute or not shape or missing:
        raise FileNotFoundError(f"sources missing: {', '.join(missing) or 'compute_srcs and shape_srcs need one each'}")
    cflags = [str(f) for f in (extra_cflags or [])]
    out_dir = Path(build_directory if build_directory is not None else os.getcwd())
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = out_dir / f"lib{name}.so"
    stamp = out_dir / f"lib{name}.so.stamp"
    tool = _sdk.ntx()
    fingerprint = _fingerprint(tool, name, compute + shape, std, cflags)
    if lib.exists() and stamp.exists() and stamp.read_text().strip() == fingerprint:
        if verbose:
            print(f"neuron_customop_host: {lib} is up to date", file=sys.stderr)
    else:
        cmd = [tool, "op", "build", "--name", name, "--std", std, "--out", str(lib)]
        cmd += [a for s in compute for a in ("--compute", str(s))]
        cmd += [a for s in shape for a in ("--shape", str(s))]
        cmd += [f"--cflag={f}" for f in cflags]
        if verbose:
            print(f"neuron_customop_host: building {lib}: {' '.join(cmd)}", file=sys.stderr)
        stamp.unlink(missing_ok=True)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"building lib{name}.so failed:\n{p.stderr.strip()}")
        stamp.write_text(fingerprint + "\n")
    return load_library(lib, multicore=multicore, cores=cores, timeout=timeout, sanitize=sanitize)


def load_library(
    path: str | os.PathLike[str],
    multicore: bool = False,
    cores: int | None = None,
    timeout: float = 60.0,
    sanitize: bool = False,
) -> Library:
    """Loads an op library `load` built: its ops as methods, on 8 cores with `multicore`
    (or `cores`), each call ended after `timeout` seconds (0: no limit), each op registered
    as torch.ops.<library>.<op> when PyTorch is installed; `sanitize` turns on the checks
    that cost a call per element (docs/customop-host.md)."""
    library = Library(path, multicore=multicore, cores=cores, timeout=timeout, sanitize=sanitize)
    if "torch" in sys.modules or _torch_installed():
        from . import _torch

        _torch.register(library)
    return library


def _torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None
