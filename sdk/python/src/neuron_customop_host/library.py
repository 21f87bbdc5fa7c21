"""A loaded op library: its ops as methods taking NumPy arrays and numbers, the cores they
run on, and the server that keeps those cores up between calls (started by the first
call, ended by `close()`, the `with` block's end, garbage collection or the interpreter's
exit)."""

from __future__ import annotations

import json
import math
import operator
import os
import struct
import subprocess
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from . import _device
from ._abi import DEFAULT_TIMEOUT, HBM_FULL, DType, ExitStatus, ParamWord, Severity, Tag
from ._server import Held, Server
from .errors import (
    ArgumentRangeError,
    ArgumentTypeError,
    ArgumentValueError,
    HbmFullError,
    KernelCrashError,
    KernelTimeoutError,
    MisuseError,
    NoSuchOpError,
    NotALibraryError,
    NotPicklableError,
    RefusedError,
    ServerGoneError,
    warn,
)

try:  # bfloat16 as NumPy knows it, when ml_dtypes is installed.
    import ml_dtypes

    BFLOAT16: np.dtype | None = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    BFLOAT16 = None


def within_limits(shape: tuple[int, ...], limits: list[list[int]]) -> bool:
    """Whether `shape` keeps to one of a tensor's limits, (most dimensions, largest size)
    each, as the program's `--describe` gives them."""
    return any(len(shape) <= dims and all(d <= most for d in shape) for dims, most in limits)


def limits_text(limits: list[list[int]]) -> str:
    """The limits for people: "8 dimensions of at most 65535, or 4 of at most 4294967295"."""
    each = [f"{dims}{' dimensions' if k == 0 else ''} of at most {most}" for k, (dims, most) in enumerate(limits)]
    return ", or ".join(each)


class TensorSpec(NamedTuple):
    """A tensor argument of `Library.output_spec`: its element type and shape, no data."""

    dtype: np.dtype
    shape: tuple[int, ...]


class Op:
    """One op of a library: call it with its arguments, in order."""

    def __init__(self, library: Library, spec: dict[str, Any]):
        self.library = library
        self.name: str = spec["name"]
        self.params: list[str] = spec["params"]
        # The kernel's parameter names, where the program's debug information has them.
        self.names: list[str] | None = spec.get("names")
        # What PyTorch sees: `name(Tensor input) -> Tensor` (the runtime names the arguments).
        self.schema: str = spec["schema"]
        self.__doc__ = f"{self.name}({self._signature()}) -> numpy.ndarray"

    def _signature(self) -> str:
        if self.names is None:
            return ", ".join(self.params)
        return ", ".join(f"{n}: {p}" for n, p in zip(self.names, self.params, strict=True))

    def __call__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        return self.library.call(self.name, self.params, self._bound(args, kwargs))

    def _bound(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """The arguments in order, keywords by the kernel's parameter names (as torch.ops
        takes them)."""
        if not kwargs:
            return args
        if self.names is None:
            raise ArgumentTypeError(f"{self.name}: its parameters have no names (built without -g?): pass them by position")
        unknown = sorted(set(kwargs) - set(self.names))
        if unknown:
            raise ArgumentTypeError(f"{self.name}() has no parameter {unknown[0]!r} (its parameters: {', '.join(self.names)})")
        given = list(args)
        for k, n in enumerate(self.names[len(args) :], start=len(args)):
            if n not in kwargs:
                raise ArgumentTypeError(f"{self.name}() is missing argument {k} ({n!r})")
            given.append(kwargs.pop(n))
        if kwargs:
            raise ArgumentTypeError(f"{self.name}() got {sorted(kwargs)[0]!r} by position and by keyword")
        return tuple(given)

    def __reduce__(self) -> Any:
        raise NotPicklableError(
            f"op {self.name} of {self.library.path} cannot be pickled: pickle its library's path and load_library it again"
        )

    def __repr__(self) -> str:
        return f"<op {self.library.name}.{self.name}({self._signature()})>"


def cores_of(multicore: bool | None, cores: int | None, most: int) -> int | None:
    """The cores `multicore` and `cores` ask for: `cores` if given, else all `most` for
    `multicore=True` and 1 for `False` (None: neither says)."""
    if cores is not None:
        return cores
    return None if multicore is None else (most if multicore else 1)


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _double_bits(value: float) -> int:
    """A double as its IEEE-754 bit pattern: NaN, infinities and -0.0 travel exactly."""
    return int.from_bytes(struct.pack("<d", value), "little")


def _int64(k: int, value: int) -> int:
    if not INT64_MIN <= value <= INT64_MAX:
        raise ArgumentRangeError(f"argument {k}: {value} does not fit the kernel's int64_t")
    return value


def _number(param: str, k: int, value: Any) -> dict[str, Any]:
    """A number argument as the server takes it."""
    is_int = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    is_float = isinstance(value, (float, np.floating))
    if param == ParamWord.INT and is_int:
        return {Tag.INT: _int64(k, int(value))}
    if param == ParamWord.DOUBLE and is_float:
        return {Tag.DOUBLE: _double_bits(float(value))}
    if param == ParamWord.DOUBLE and is_int:
        try:
            return {Tag.DOUBLE: _double_bits(float(value))}
        except OverflowError:
            raise ArgumentRangeError(f"argument {k}: {value} is past a double's range") from None
    if param == ParamWord.SCALAR and is_int:
        return {Tag.SCALAR_INT: _int64(k, int(value))}
    if param == ParamWord.SCALAR and is_float:
        return {Tag.SCALAR_FLOAT: _double_bits(float(value))}
    want = {ParamWord.INT: "an int", ParamWord.DOUBLE: "a float", ParamWord.SCALAR: "an int or a float"}[param]
    raise ArgumentTypeError(f"argument {k} takes {want} (the kernel's {param}), not {type(value).__name__}")


# Every library of this process, so that a child this process forks starts afresh.
_LIBRARIES: weakref.WeakSet[Library] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for lib in list(_LIBRARIES):
        lib._forked()


os.register_at_fork(after_in_child=_after_fork_in_child)


class Library:
    """The ops of one op program (what `custom_op.load` built as lib<name>.so)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        multicore: bool = False,
        cores: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        sanitize: bool = False,
        device: _device.DeviceBuild | None = None,
        profile: str | None = None,
    ):
        self.path = str(Path(path).resolve())
        self.sanitize = bool(sanitize)
        # On the emulated Q7 (custom_op's device=True): each call through ntx op run --device.
        self.device = device
        self.profile = profile
        try:
            out = subprocess.run([self.path, "--describe"], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise NotALibraryError(f"{path} is not an op library custom_op.load built: {e}") from e
        self.description: dict[str, Any] = json.loads(out)
        most = self.description["max_cores"]
        n = cores_of(multicore, cores, most)
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= most:
            raise ArgumentValueError(f"cores={cores!r}: give a number from 1 to {most}")
        self.cores = n
        libraries = self.description["libraries"]
        if len(libraries) != 1:
            raise NotALibraryError(f"{path} registers {len(libraries)} libraries ({', '.join(libraries)}): it must register one")
        self.name: str = libraries[0]
        self.timeout = _timeout(timeout, self.description["max_timeout"])
        self.ops: dict[str, Op] = {spec["name"]: Op(self, spec) for spec in self.description["ops"]}
        self._dtypes = {d["code"]: d for d in self.description["dtypes"]}
        # Each element type's NumPy dtype (little-endian or of one byte) to its code: a
        # call's lookup (an equal dtype hashes equal, native order included).
        self._codes: dict[np.dtype, int] = {}
        for code, d in self._dtypes.items():
            self._codes.setdefault(np.dtype(d["descr"]), code)
        self.last_stats: dict[str, Any] | None = None
        self._server: Server | None = None
        self._lock = threading.RLock()
        self._finalizer = weakref.finalize(self, Library._end, [None])
        _LIBRARIES.add(self)
        shadowed = [name for name in self.ops if hasattr(Library, name) or name in self.__dict__]
        for name in shadowed:
            warn(f"library {self.name}: op {name!r} has the name of a Library attribute: call it as lib.ops[{name!r}]")

    def __reduce__(self) -> Any:
        raise NotPicklableError(
            f"a Library ({self.path}) cannot be pickled: it holds a running op program and its memory; "
            "pickle its path and call load_library(path) again"
        )

    def __getattr__(self, name: str) -> Op:
        ops = self.__dict__.get("ops", {})
        if name in ops:
            return ops[name]
        raise NoSuchOpError(f"library {self.__dict__.get('name')} has no op {name!r} (ops: {', '.join(ops)})")

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self.ops]

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _end(holder: list[Server | None]) -> None:
        if holder[0] is not None:
            holder[0].close()
            holder[0] = None

    def _forked(self) -> None:
        """In a forked child: a lock of its own (another thread of the parent may have held
        this one) and no server (the parent's stays the parent's; the first call starts one)."""
        self._lock = threading.RLock()
        self._server = None
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, Library._end, [None])

    def close(self) -> None:
        """Ends the server and its core processes (a later call starts them again). Arrays
        the library returned stay valid: their memory lives as long as they do."""
        with self._lock:
            if self._server is not None:
                self._server.close()
            self._server = None
            self._finalizer.detach()
            self._finalizer = weakref.finalize(self, Library._end, [None])

    def server_pids(self) -> list[int]:
        """The server's process id, if it runs (its workers are its children)."""
        return [self._server.process.pid] if self._server is not None else []

    def _serve(self) -> Server:
        if self._server is None or self._server.broken or self._server.process.poll() is not None:
            if self._server is not None:
                self._server.close()
            self._server = None
            self._server = Server(self.path)
            self._finalizer.detach()
            self._finalizer = weakref.finalize(self, Library._end, [self._server])
        return self._server

    def _dtype(self, dtype: np.dtype, k: int) -> int:
        """The element type code of NumPy dtype `dtype` (argument `k`'s)."""
        if BFLOAT16 is not None and dtype == BFLOAT16:
            return DType.BFLOAT16
        if dtype.byteorder in "<=|" and dtype in self._codes:
            return self._codes[dtype]
        names = ", ".join(sorted(str(d) for d in self._codes))
        raise ArgumentTypeError(f"argument {k}: arrays of {dtype} are not an API type ({names}; uint16 means bfloat16 bits)")

    def _numpy_dtype(self, code: int) -> np.dtype:
        if code == DType.BFLOAT16 and BFLOAT16 is not None:
            return BFLOAT16
        return np.dtype(self._dtypes[code]["descr"])

    def _alloc(self, server: Server, code: int, shape: tuple[int, ...]) -> Held:
        """A new tensor in the server's HBM."""
        answer = server.request({Tag.ALLOC: {"dtype": code, "shape": shape, "free": server.frees()}})
        if "error" in answer:
            cls = HbmFullError if answer.get("kind") == HBM_FULL else RefusedError
            raise cls(answer["error"])
        return self._held(answer, code, shape)

    def _held(self, answer: dict[str, Any], code: int, shape: tuple[int, ...]) -> Held:
        nbytes = math.prod(shape) * self._numpy_dtype(code).itemsize
        return Held(answer["handle"], answer["offset"], nbytes, code, tuple(shape))

    def empty(self, shape: int | Sequence[int], dtype: Any = np.float32) -> np.ndarray:
        """An array in the op library's memory: passed to an op as it is (this shape, this
        element type, C order), it is not copied. The shape as `np.empty` takes it: an
        integer or a sequence of integers (a float is a `TypeError`, not truncated)."""
        dims = shape if isinstance(shape, (Sequence, np.ndarray)) else (shape,)
        shape = tuple(operator.index(s) for s in dims)
        probe = np.empty(0, dtype=dtype)
        code = self._dtype(probe.dtype, 0)
        with self._lock:
            server = self._serve()
            return server.hold(self._alloc(server, code, shape), probe.dtype)

    def call(self, op: str, params: list[str], args: Sequence[Any]) -> np.ndarray:
        """Op `op` on `args`: its output. See the package's documentation for the errors."""
        self._check_count(op, params, args)
        prepared = [self._prepare(p, k, a) for k, (p, a) in enumerate(zip(params, args, strict=True))]
        if self.device is not None:
            settings = _device.Settings(self.cores, self.timeout, self.sanitize, self.profile)
            answer, result = _device.call(self.device, op, prepared, settings)
            self.last_stats = answer.get("stats")
            return self._conclude(op, answer, result)
        with self._lock:
            return self._call_locked(op, prepared)

    def _check_count(self, op: str, params: list[str], args: Sequence[Any]) -> None:
        if len(args) != len(params):
            raise ArgumentTypeError(f"{self.name}.{op} takes {len(params)} arguments ({', '.join(params)}); {len(args)} given")

    def output_spec(self, op: str, args: Sequence[Any]) -> tuple[np.dtype, tuple[int, ...]]:
        """What op `op` would return for `args`, from its shape function alone (on data-less
        tensors: each tensor argument needs only `.dtype` and `.shape`, an array or a
        `TensorSpec`): the element type and the shape. PyTorch's fake implementation."""
        params = self.ops[op].params
        self._check_count(op, params, args)
        prepared = []
        for k, (p, a) in enumerate(zip(params, args, strict=True)):
            if p != ParamWord.TENSOR:
                prepared.append(_number(p, k, a))
                continue
            shape = tuple(int(d) for d in a.shape)
            code = self._tensor_code(k, np.dtype(a.dtype), shape)
            prepared.append({Tag.META: {"dtype": code, "shape": shape}})
        with self._lock:
            answer = self._serve().request({Tag.SHAPE: {"op": op, "args": prepared, "timeout": self.timeout}})
        if answer.get("status") == ExitStatus.RAN:
            return self._numpy_dtype(answer["dtype"]), tuple(answer["shape"])
        self.last_stats = answer.get("stats")
        self._conclude(op, answer, None)  # raises: the status is not 0
        raise RefusedError(f"{self.name}.{op}: the shape function gave no shape")

    def _prepare(self, param: str, k: int, value: Any) -> Any:
        if param != ParamWord.TENSOR:
            return _number(param, k, value)
        if not isinstance(value, np.ndarray):
            raise ArgumentTypeError(f"argument {k} is a tensor: give a NumPy array, not {type(value).__name__}")
        if isinstance(value, np.ma.MaskedArray):
            # Its bytes would be read two ways (the fill value in the masked places, or the raw
            # data, by size): the caller says which.
            raise ArgumentTypeError(f"argument {k} is a masked array: a kernel has no mask; pass a.filled(value) or a.data")
        return (self._tensor_code(k, value.dtype, value.shape), value)

    def _tensor_code(self, k: int, dtype: np.dtype, shape: tuple[int, ...]) -> int:
        """The element type code of tensor argument `k`, its shape checked against the limits."""
        limits = self.description["shape_limits"]
        if not within_limits(shape, limits):
            raise ArgumentValueError(f"argument {k}: shape {shape} is past a tensor's limits ({limits_text(limits)})")
        return self._dtype(np.dtype(dtype), k)

    def _place(self, server: Server, code: int, a: np.ndarray, held: list[int]) -> dict[str, Any]:
        """Tensor `a` as a call's argument: the tensor this library holds if `a` is exactly
        one and writable (a read-only one is passed as a copy, so that no kernel's write can
        reach it); a small one's bytes, sent with the call (no round trip of its own); else a
        new tensor holding a copy."""
        exact = server.holding(a, code)
        if exact is not None and a.flags.writeable:
            return {Tag.TENSOR: exact.handle}
        if a.nbytes <= self.description["inline_bytes"]:
            return {Tag.BYTES: {"dtype": code, "shape": a.shape, "hex": a.tobytes().hex()}}
        new = self._alloc(server, code, a.shape)
        held.append(new.handle)
        server.fill(new, a)
        return {Tag.TENSOR: new.handle}

    def _call_locked(self, op: str, prepared: list[Any]) -> np.ndarray:
        server = self._serve()
        held: list[int] = []
        try:
            args = [self._place(server, p[0], p[1], held) if isinstance(p, tuple) else p for p in prepared]
            call = {"op": op, "args": args, "cores": self.cores, "timeout": self.timeout, "free": server.frees()}
            call["sanitize"] = self.sanitize
            answer = server.request({Tag.CALL: call})
        finally:
            # The inputs' copies go with the next request.
            server.to_free.extend(held)
        self.last_stats = answer.get("stats")
        out = answer.get("output")
        result = None
        if out is not None:
            # The output stays where the op wrote it (no copy), freed when no array reaches it.
            code, shape = out["dtype"], tuple(out["shape"])
            result = server.hold(self._held(out, code, shape), self._numpy_dtype(code))
        return self._conclude(op, answer, result)

    def _conclude(self, op: str, answer: dict[str, Any], result: np.ndarray | None) -> np.ndarray:
        reports = (self.last_stats or {}).get("reports", [])
        for r in reports:
            if r["severity"] == Severity.WARNING:
                warn(f"op {op}: {r['kind']}: {r['detail']}")
        status = answer.get("status")
        if status == ExitStatus.RAN and result is not None:
            return result
        if status == ExitStatus.TIMEOUT:
            raise KernelTimeoutError(op, reports)
        if status == ExitStatus.CRASHED:
            raise KernelCrashError(op, reports)
        if status == ExitStatus.MISUSE:
            raise MisuseError(op, reports)
        if status is None:
            raise ServerGoneError(f"{self.name}.{op}: the op program answered without a status: {answer}")
        if answer.get("kind") == HBM_FULL:
            raise HbmFullError(f"{self.name}.{op}: {answer.get('error')}")
        raise RefusedError(f"{self.name}.{op}: {answer.get('error') or 'refused'}")


def _timeout(timeout: Any, most: float) -> float:
    """`timeout` in seconds, checked: 0 for no limit, else at most `most` (the program's
    own limit, as its `--timeout` takes)."""
    ok = isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
    if not ok or not 0 <= timeout <= most:
        raise ArgumentValueError(f"timeout={timeout!r}: give seconds from 0 (no limit) to {most:g}")
    return float(timeout)
