"""The errors and the warning category the package raises. Every error derives from
`NeuronCustomOpError`, and from the built-in class a Python user expects of it (an
argument of the wrong type is a `TypeError` too, a failed build a `RuntimeError`), so
`except NeuronCustomOpError` catches them all and older `except` clauses still do; the
ones from a run carry the runner's JSON reports."""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any

from ._abi import Kind, Severity

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


def warn(message: str) -> None:
    """Warns `message` (a NeuronCustomOpWarning) at the caller's line: the first frame
    outside this package and PyTorch's dispatch, however deep the call came through them."""
    skipped = [os.path.dirname(__file__)]
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    if isinstance(torch_file, str):
        skipped.append(os.path.dirname(torch_file))
    level, frame = 1, sys._getframe(1)
    while any(frame.f_code.co_filename.startswith(d + os.sep) for d in skipped):
        if frame.f_back is None:
            break
        level, frame = level + 1, frame.f_back
    warnings.warn(message, NeuronCustomOpWarning, stacklevel=level + 1)


class NeuronCustomOpError(Exception):
    """The base of every error the package raises once a call's arguments were accepted:
    `except NeuronCustomOpError` catches them all."""


class ArgumentTypeError(NeuronCustomOpError, TypeError):
    """An argument of a type the call does not take (a float where an op takes an integer,
    a masked array, an element type the API lacks): nothing ran."""


class ArgumentValueError(NeuronCustomOpError, ValueError):
    """An argument of the right type and a value the call does not take (cores, a timeout,
    a shape past a tensor's limits, a library's name): nothing ran."""


class ArgumentRangeError(NeuronCustomOpError, OverflowError):
    """A number past what the kernel's parameter holds (an int64_t, a double): nothing ran."""


class NotPicklableError(NeuronCustomOpError, TypeError):
    """A library (or one of its ops) was pickled: it holds a running op program and its
    memory, which no pickle carries. Send its path; load_library it again there."""


class NotFoundError(NeuronCustomOpError, FileNotFoundError):
    """A source file, or the SDK's own `ntx`, is not where the call says or looks."""


class NoSuchOpError(NeuronCustomOpError, AttributeError):
    """The library registers no op of that name (an `AttributeError`, so `hasattr` works)."""


class NotALibraryError(NeuronCustomOpError, ValueError):
    """The file is not an op library `custom_op.load` built, or it registers more than one."""


class BuildError(NeuronCustomOpError, RuntimeError):
    """`custom_op.load` could not build the library: `.stderr` is the compiler's (or the
    device's refusal), which the message carries too."""

    def __init__(self, library: str, stderr: str):
        self.library = library
        self.stderr = stderr
        super().__init__(f"building {library} failed:\n{stderr}")


class CallInProgressError(NeuronCustomOpError, RuntimeError):
    """A call was made on a library while another call on it was waiting for its answer, in
    the same thread: from a signal handler (or a finalizer) that ran in the middle of that
    call. It gets no answer (the other call's would be the only one on the way); make it
    after that call returns. Calls from other threads wait their turn instead."""


class ServerGoneError(NeuronCustomOpError, RuntimeError):
    """The op program ended in the middle of a request: the message says why (a signal, an
    exit status). The library starts it again for the next call."""


class RefusedError(NeuronCustomOpError, ValueError):
    """The op program refused the call before anything ran (the runner's exit status 1)."""


class ShapeRelationError(NeuronCustomOpError, RuntimeError):
    """A call's output has another shape than the relation between sizes that a graph
    compiled with dynamic shapes assumed for inputs like these (`torch.compile`: the fake
    implementation found it by running the shape function at other sizes). The shape
    function is not the affine function of the sizes it seemed; compile without dynamic
    sizes for this op (`torch._dynamo.mark_static`, or `dynamic=False`)."""


class HbmFullError(NeuronCustomOpError, MemoryError):
    """A tensor does not fit in the simulated HBM that is left: nothing ran; the library,
    its server and its arrays go on."""


class MisuseError(NeuronCustomOpError, RuntimeError):
    """A misuse error stopped the op: `.reports` are the runner's reports (JSON, as dicts)."""

    def __init__(self, op: str, reports: list[Report]):
        self.op = op
        self.reports = reports
        super().__init__(f"op {op}: {describe([r for r in reports if r['severity'] == Severity.ERROR])}")


class KernelCrashError(NeuronCustomOpError, RuntimeError):
    """A kernel or shape function died: `.core` (None for the shape function), `.signal`
    (None when it exited or threw), `.phase`, `.reports`. The next call works."""

    def __init__(self, op: str, reports: list[Report]):
        self.op = op
        self.reports = reports
        crash: Report = next((r for r in reports if r["kind"] == Kind.KERNEL_CRASHED), {"crash": {}})
        info: dict[str, Any] = crash.get("crash") or {}
        self.core: int | None = crash.get("core")
        self.signal: int | None = info.get("signal")
        self.phase: str | None = info.get("phase")
        super().__init__(f"op {op}: {describe([crash]) if crash.get('kind') else 'crashed'}")


class KernelTimeoutError(NeuronCustomOpError, RuntimeError):
    """A kernel or shape function still ran when the library's `timeout` ran out: every core
    was ended. `.core` (None for the shape function), `.reports` (where each core was). The
    next call works."""

    def __init__(self, op: str, reports: list[Report]):
        self.op = op
        self.reports = reports
        first = next((r for r in reports if r["kind"] == Kind.TIMEOUT), {})
        self.core: int | None = first.get("core")
        super().__init__(f"op {op}: {describe([r for r in reports if r['kind'] == Kind.TIMEOUT])}")
