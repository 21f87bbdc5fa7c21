"""The errors and the warning category a call raises, each with the runner's JSON reports."""

from __future__ import annotations

from typing import Any

Report = dict[str, Any]


def describe(reports: list[Report]) -> str:
    """The reports in one line each: `kind (core N, tensor): detail`."""
    lines = []
    for r in reports:
        where = [f"core {r['core']}"] if r.get("core") is not None else []
        where += [r["tensor"]] if r.get("tensor") else []
        where += [f"index {r['index']}"] if r.get("index") else []
        place = f" ({', '.join(where)})" if where else ""
        lines.append(f"{r['kind']}{place}: {r['detail']}")
    return "\n".join(lines)


class NeuronCustomOpWarning(UserWarning):
    """A misuse the device allows but leaves to chance (docs/customop-host.md's warnings)."""


class MisuseError(RuntimeError):
    """A misuse error stopped the op: `.reports` are the runner's reports (JSON, as dicts)."""

    def __init__(self, op: str, reports: list[Report]):
        self.op = op
        self.reports = reports
        super().__init__(f"op {op}: {describe([r for r in reports if r['severity'] == 'error'])}")


class KernelCrashError(RuntimeError):
    """A kernel or shape function died: `.core` (None for the shape function), `.signal`
    (None when it exited or threw), `.phase`, `.reports`. The next call works."""

    def __init__(self, op: str, reports: list[Report]):
        self.op = op
        self.reports = reports
        crash = next((r for r in reports if r["kind"] == "kernel-crashed"), {"crash": {}})
        info = crash.get("crash") or {}
        self.core: int | None = crash.get("core")
        self.signal: int | None = info.get("signal")
        self.phase: str | None = info.get("phase")
        super().__init__(f"op {op}: {describe([crash]) if crash.get('kind') else 'crashed'}")


class KernelTimeoutError(RuntimeError):
    """A kernel or shape function still ran when the library's `timeout` ran out: every core
    was ended. `.core` (None for the shape function), `.reports` (where each core was). The
    next call works."""

    def __init__(self, op: str, reports: list[Report]):
        self.op = op
        self.reports = reports
        first = next((r for r in reports if r["kind"] == "timeout"), {})
        self.core: int | None = first.get("core")
        super().__init__(f"op {op}: {describe([r for r in reports if r['kind'] == 'timeout'])}")
