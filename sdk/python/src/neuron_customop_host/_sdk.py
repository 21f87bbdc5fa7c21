"""Where the installed SDK is: `ntx`, which builds an op as `ntx op run` does (it finds the
SDK's headers and runtime with pkg-config, in its own prefix after PKG_CONFIG_PATH)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .errors import NotFoundError


def ntx() -> str:
    """The `ntx` to build with: $NEURON_CUSTOMOP_HOST_NTX, else `ntx` on PATH, else the one
    in the prefix pkg-config gives for `neuron_customop_host`."""
    given = os.environ.get("NEURON_CUSTOMOP_HOST_NTX")
    if given:
        return given
    found = shutil.which("ntx")
    if found:
        return found
    try:
        prefix = subprocess.run(
            ["pkg-config", "--variable=prefix", "neuron_customop_host"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        prefix = ""
    candidate = Path(prefix) / "bin" / "ntx"
    if prefix and candidate.exists():
        return str(candidate)
    raise NotFoundError(
        "ntx is not found: install the SDK (make install PREFIX=...), then put <prefix>/bin on PATH "
        "or set NEURON_CUSTOMOP_HOST_NTX to its ntx"
    )


def version(tool: str) -> str:
    """`ntx --version`'s line."""
    return subprocess.run([tool, "--version"], capture_output=True, text=True, check=True).stdout.strip()
