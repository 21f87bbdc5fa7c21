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

from . import _device, _sdk
from ._abi import DEFAULT_TIMEOUT
from .errors import ArgumentTypeError, ArgumentValueError, BuildError, NotFoundError
from .library import Library

STAMP_VERSION = 4


def _fingerprint(tool: str, name: str, std: str, options: list[str]) -> str:
    """What a build depends on besides its files: the name, `ntx op build`'s options (the
    flags, the device's compile or not), the ntx and SDK, the working folder."""
    h = hashlib.sha256()
    # The working folder: the author's relative flags (-Iinc) are read there.
    parts = [str(STAMP_VERSION), name, std, json.dumps(options), _sdk.version(tool), str(Path(tool).resolve())]
    parts.append(os.getcwd())
    for p in parts:
        h.update(p.encode() + b"\0")
    sdk = Path(tool).resolve().parent.parent / "lib" / "libneuron_customop_host.a"
    if sdk.exists():
        st = sdk.stat()
        h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def _built_here(name: str) -> bool:
    """Whether `name` is what `load` writes into a build folder (a library, its stamp, its
    dependency list, ntx's temporary copy): left out of a folder's listing, so that building
    one library beside its sources, or another library, does not make it out of date."""
    bare = name[1:] if name.startswith(".") else name
    built = name.endswith((".so", ".so.stamp", ".so.deps", ".so.device")) or ".so.ntx-" in name
    return bare.startswith("lib") and built


def _digest(path: str) -> str | None:
    """A file's hash; a folder's (a path ending in '/') is its sorted listing's, less what
    `load` writes there. None: absent."""
    try:
        if path.endswith("/"):
            names = sorted(n for n in os.listdir(path) if not _built_here(n))
            return hashlib.sha256("\0".join(names).encode(errors="surrogateescape")).hexdigest()
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _stale(stamp: Path, fingerprint: str, sources: list[Path]) -> list[str]:
    """Why the library the stamp describes is out of date (empty: it is up to date): the
    stamp records the fingerprint, a hash of every file the compiler read and of the
    compiler, and the listing of every folder it searched for headers (`ntx op build
    --deps`), so that a header that changes, appears or shadows another rebuilds."""
    try:
        recorded = json.loads(stamp.read_text())
        files: dict[str, str] = recorded["files"]
        if recorded["version"] != STAMP_VERSION or recorded["fingerprint"] != fingerprint:
            return ["the flags, the name or the SDK"]
    except (OSError, ValueError, KeyError, TypeError):
        return ["no stamp of its build"]
    missing = [str(s) for s in sources if str(s) not in files]
    changed = [f for f, digest in sorted(files.items()) if _digest(f) != digest]
    return missing + changed


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
    timeout: float = DEFAULT_TIMEOUT,
    sanitize: bool = False,
    device_parity: bool = True,
    device: bool = False,
    profile: str | os.PathLike[str] | None = None,
) -> Library:
    """Builds lib<name>.so from the sources into `build_directory` (default: the current
    folder) unless it is up to date, and loads it (see `load_library`). The kernels are held
    to the device's own compile (C++14, -Wall -Werror); `device_parity=False` builds what it
    refuses, for exploring, and every call then warns (`device-parity-off`). `device` and
    `profile`: see `load_library`."""
    if not name or name == "builtin" or "/" in name:
        raise ArgumentValueError(f"name={name!r}: a library's name, not empty, not 'builtin', without '/'")
    if isinstance(compute_srcs, (str, os.PathLike)) or isinstance(shape_srcs, (str, os.PathLike)):
        raise ArgumentTypeError("compute_srcs and shape_srcs are lists of source files")
    compute = [Path(s).resolve() for s in compute_srcs]
    shape = [Path(s).resolve() for s in shape_srcs]
    missing = [str(s) for s in compute + shape if not s.is_file()]
    if not compute or not shape or missing:
        raise NotFoundError(f"sources missing: {', '.join(missing) or 'compute_srcs and shape_srcs need one each'}")
    options = [f"--cflag={f}" for f in extra_cflags or []] + ([] if device_parity else ["--no-device-parity"])
    out_dir = Path(build_directory if build_directory is not None else os.getcwd())
    out_dir.mkdir(parents=True, exist_ok=True)
    lib = out_dir / f"lib{name}.so"
    stamp = out_dir / f"lib{name}.so.stamp"
    tool = _sdk.ntx()
    fingerprint = _fingerprint(tool, name, std, options)
    stale = _stale(stamp, fingerprint, compute + shape) if lib.exists() else ["not built"]
    if not stale:
        if verbose:
            print(f"neuron_customop_host: {lib} is up to date", file=sys.stderr)
    else:
        if verbose and lib.exists():
            print(f"neuron_customop_host: {lib} is out of date: {', '.join(stale)}", file=sys.stderr)
        elif verbose:
            print(f"neuron_customop_host: {lib} is not built yet", file=sys.stderr)
        _build(tool, name, std, options, compute, shape, lib, verbose)
        files = _depended_on(lib, compute + shape)
        build = _device.DeviceBuild(
            tool,
            name,
            std,
            tuple(options),
            tuple(map(str, compute)),
            tuple(map(str, shape)),
            os.getcwd(),
            str(out_dir.resolve() / f"lib{name}.so.device"),
        )
        record = {"version": STAMP_VERSION, "fingerprint": fingerprint, "files": files, "build": build.record()}
        stamp.write_text(json.dumps(record, indent=1) + "\n")
    library = load_library(
        lib, multicore=multicore, cores=cores, timeout=timeout, sanitize=sanitize, device=device, profile=profile
    )
    _record_cores(stamp, library.cores)
    return library


def _build(
    tool: str, name: str, std: str, options: list[str], compute: list[Path], shape: list[Path], lib: Path, verbose: bool
) -> None:
    """`ntx op build` of the sources into `lib` with `options`, its dependency list beside it."""
    stamp, deps = lib.with_name(lib.name + ".stamp"), lib.with_name(lib.name + ".deps")
    cmd = [tool, "op", "build", "--name", name, "--std", std, "--out", str(lib), "--deps", str(deps)]
    cmd += [a for s in compute for a in ("--compute", str(s))]
    cmd += [a for s in shape for a in ("--shape", str(s))]
    cmd += options
    if verbose:
        print(f"neuron_customop_host: building {lib}: {' '.join(cmd)}", file=sys.stderr)
    stamp.unlink(missing_ok=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        deps.unlink(missing_ok=True)
        raise BuildError(lib.name, p.stderr.strip())


def _depended_on(lib: Path, sources: list[Path]) -> dict[str, str | None]:
    """Every file the build of `lib` read, with its hash (the list `_build` wrote, taken)."""
    deps = lib.with_name(lib.name + ".deps")
    read = [line for line in deps.read_text().splitlines() if line]
    deps.unlink()
    return {f: _digest(f) for f in sorted(set(read) | {str(s) for s in sources})}


def _record_cores(stamp: Path, cores: int | None) -> None:
    """Records in the stamp the cores the library was loaded with by `load` (as the device
    builds multicore into the library): `load_library` of it uses them."""
    try:
        record = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return
    if record.get("cores") != cores:
        record["cores"] = cores
        stamp.write_text(json.dumps(record, indent=1) + "\n")


def _recorded_cores(path: str | os.PathLike[str]) -> int | None:
    """The cores `load` recorded for the library at `path` (None: no record)."""
    try:
        cores = json.loads(Path(f"{os.fspath(path)}.stamp").read_text()).get("cores")
    except (OSError, ValueError, AttributeError):
        return None
    return cores if isinstance(cores, int) and not isinstance(cores, bool) else None


def load_library(
    path: str | os.PathLike[str],
    multicore: bool | None = None,
    cores: int | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    sanitize: bool = False,
    device: bool = False,
    profile: str | os.PathLike[str] | None = None,
) -> Library:
    """Loads an op library `load` built: its ops as methods, on the cores `load` was given
    (`multicore=True`: all of them; recorded beside the library), unless `multicore` or `cores` here
    say otherwise; each call ended after `timeout` seconds (0: no limit), each op
    registered as torch.ops.<library>.<op> when PyTorch is installed; `sanitize` turns on
    the watch of TCM blocks' bytes nothing wrote (docs/customop-host.md). `device=True` runs
    each call on the emulated Q7, as `ntx op run --device` does, from the sources `load`
    recorded beside the library; `profile=DIR` (with `device`) writes each call's profile
    there (docs/customop-device.md)."""
    if multicore is None and cores is None:
        cores = _recorded_cores(path)
    if profile is not None and not device:
        raise ArgumentValueError(f"profile={os.fspath(profile)!r} counts a run on the emulated Q7: give device=True too")
    build = None
    if device:
        build = _device.recorded(Path(f"{os.fspath(path)}.stamp"), _sdk.ntx())
        if build is None:
            raise ArgumentValueError(
                f"device=True: {os.fspath(path)} has no record of the sources it was built from (its .stamp, which "
                f"custom_op.load writes): build it with custom_op.load, then load it with device=True"
            )
    where = os.fspath(Path(profile).resolve()) if profile is not None else None
    library = Library(
        path, multicore=bool(multicore), cores=cores, timeout=timeout, sanitize=sanitize, device=build, profile=where
    )
    if "torch" in sys.modules or _torch_installed():
        from . import _torch

        _torch.register(library)
    return library


def _torch_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None
