"""Every failure in its documented form: numbers the JSON protocol lacks reach the kernel,
numbers past the kernel's types are refused before anything runs, a tensor past the
simulated HBM is a MemoryError the library survives, and every error the package raises
after the arguments were accepted shares one base class."""

from __future__ import annotations

import math
import os
import pickle
import signal
import threading
import time

import numpy as np
import pytest

import neuron_customop_host as nch
from neuron_customop_host import (
    HbmFullError,
    KernelCrashError,
    KernelTimeoutError,
    MisuseError,
    NeuronCustomOpError,
    RefusedError,
    ServerGoneError,
)


@pytest.mark.parametrize("factor", [math.nan, math.inf, -math.inf, -0.0, 5e-324])
def test_doubles_json_lacks_reach_the_kernel_as_ieee_values(built, factor: float) -> None:
    x = np.array([[1, -2], [0, 3]], np.float32)
    with built("misc") as lib:
        out = lib.scale(2, 2, x, factor)
    with np.errstate(invalid="ignore"):
        want = (x.astype(np.float64) * factor).astype(np.float32)
    np.testing.assert_array_equal(out, want)
    assert np.array_equal(np.signbit(out), np.signbit(want))


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, np.uint64(2**64 - 1)])
def test_ints_past_int64_are_refused_before_anything_runs(built, value) -> None:
    with built("misc") as lib:
        with pytest.raises(OverflowError, match="int64_t"):
            lib.scale(value, 2, np.ones((2, 2), np.float32), 1.0)
        assert lib.server_pids() == []


@pytest.mark.parametrize("n", [1024, 1025])
def test_a_masked_array_is_refused_at_every_size(built, n) -> None:
    # 1024 floats ride inside the call, 1025 are copied: one rule for both.
    x = np.ma.masked_less(np.arange(n, dtype=np.float32).reshape(1, n) - 10, 0)
    with built("relu") as lib, pytest.raises(TypeError, match="argument 0 is a masked array"):
        lib.relu_forward(x)
    with built("relu") as lib:
        np.testing.assert_array_equal(lib.relu_forward(x.filled(0)), np.maximum(x.filled(0), 0))


def test_an_int_past_32_bits_is_refused_as_the_kernel_takes_an_int(built) -> None:
    # The device's build declares the kernel's int as a C++ int (32 bits).
    with built("misc") as lib, pytest.raises(RefusedError, match="the kernel takes an int \\(32 bits"):
        lib.scale(2**31, 2, np.ones((2, 2), np.float32), 1.0)


def test_an_int_past_a_double_is_refused(built) -> None:
    with built("misc") as lib, pytest.raises(OverflowError, match="double"):
        lib.scale(2, 2, np.ones((2, 2), np.float32), 10**400)


def test_tensors_past_the_simulated_hbm_are_memory_errors_the_library_survives(built) -> None:
    with built("misc") as lib:
        kept = lib.empty((2, 2))
        kept[...] = 2
        [pid] = lib.server_pids()
        huge = np.broadcast_to(np.int64(1), (65535, 65535))  # 34 GB, past the 16 GiB
        with pytest.raises(HbmFullError, match=r"tensor of \[65535, 65535\] int64 elements needs 34358689800 bytes") as e:
            lib.scale(2, 2, huge, 1.0)
        assert isinstance(e.value, MemoryError)
        with pytest.raises(HbmFullError, match="free in one piece"):
            lib.empty((65535, 65535, 2))
        # Most of the HBM held (never touched, so it costs no memory), then an output past the rest.
        most = lib.empty((40000, 65535), np.float32)
        with pytest.raises(HbmFullError, match=r"the output: a tensor of \[40000, 65535\] float32 elements"):
            lib.scale(40000, 65535, kept, 1.0)
        del most
        assert lib.server_pids() == [pid]
        np.testing.assert_array_equal(lib.scale(2, 2, kept, 1.5), np.full((2, 2), 3, np.float32))


def test_every_error_shares_one_exported_base() -> None:
    errors = [c for c in vars(nch.errors).values() if isinstance(c, type) and issubclass(c, Exception)]
    errors = [c for c in errors if not issubclass(c, Warning)]
    assert len(errors) == 17
    for cls in errors:
        assert issubclass(cls, NeuronCustomOpError)
        assert cls.__name__ in nch.__all__
    assert issubclass(RefusedError, ValueError) and issubclass(MisuseError, RuntimeError)
    assert issubclass(nch.ArgumentTypeError, TypeError) and issubclass(nch.NoSuchOpError, AttributeError)


def test_a_refused_argument_is_the_packages_error_and_pythons(built) -> None:
    with built("relu") as lib:
        for bad, cls in (("x", TypeError), (np.ma.masked_array([1.0], np.float32), TypeError)):
            with pytest.raises(cls) as e:
                lib.relu_forward(bad)
            assert isinstance(e.value, NeuronCustomOpError)
        with pytest.raises(nch.NoSuchOpError):
            lib.no_such_op  # noqa: B018
        assert not hasattr(lib, "no_such_op")


def test_the_server_ending_mid_call_says_why(built) -> None:
    x = np.ones((4, 4), np.float32)
    with built("failures", timeout=30) as lib:
        lib.passes(x)
        [pid] = lib.server_pids()
        threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
        started = time.monotonic()
        with pytest.raises(ServerGoneError, match="killed by signal 9"):
            lib.spin(x)
        assert time.monotonic() - started < 20
        np.testing.assert_array_equal(lib.passes(x), x)


def test_a_refused_call_is_a_refused_error(built) -> None:
    with built("misc") as lib, pytest.raises(RefusedError, match="no op 'no_such_op'") as e:
        lib.call("no_such_op", [], [])
    assert isinstance(e.value, NeuronCustomOpError)


def test_timeouts_past_the_limit_are_refused(built) -> None:
    for bad in (1e30, math.inf, math.nan, -1, 18446744073709551616):
        with pytest.raises(ValueError, match="timeout"):
            built("relu", timeout=bad)
    built("relu", timeout=365 * 24 * 3600).close()


def test_int64_tensors_warn_that_the_guide_dropped_them(built) -> None:
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    with built("ops") as lib, pytest.warns(nch.NeuronCustomOpWarning, match="int64-tensor: .*torch::kLong") as w:
        out = lib.elementwise(a, np.ones_like(a), 0, 0, 19, 0, 4)
    np.testing.assert_array_equal(out, a)
    line = test_int64_tensors_warn_that_the_guide_dropped_them.__code__.co_firstlineno + 3
    assert (w[0].filename, w[0].lineno) == (__file__, line), "the warning is at the caller's line"


def test_the_shape_function_alone_gives_the_output_spec(built) -> None:
    with built("misc") as lib:
        spec = nch.TensorSpec(np.dtype(np.float32), (60, 50))
        assert lib.output_spec("scale", [4, 5, spec, 1.0]) == (np.dtype(np.float32), (4, 5))
        assert lib.output_spec("negate", [np.zeros((3, 2), np.float16)]) == (np.dtype(np.float32), (3, 2))
    with built("failures") as lib, pytest.raises(KernelCrashError, match="no shape for this input"):
        lib.output_spec("shape_throws", [nch.TensorSpec(np.dtype(np.float32), (2, 2))])


def test_a_call_nested_from_a_signal_handler_is_refused_not_answered(built) -> None:
    """A handler's call while a call waits on the same library gets a clear refusal, never
    the other call's answer; the interrupted call still gets its own."""
    x = np.ones((4, 4), np.float32)
    with built("failures", timeout=1) as lib:
        seen: list[str] = []

        def handler(sig: int, frame: object) -> None:
            try:
                seen.append(repr(lib.passes(x)))
            except nch.CallInProgressError as e:
                seen.append(str(e))

        old = signal.signal(signal.SIGALRM, handler)
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.2)
            with pytest.raises(KernelTimeoutError):
                lib.spin(x)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        assert len(seen) == 1 and "a call is in progress on this library" in seen[0], seen
        np.testing.assert_array_equal(lib.passes(x), x)


def test_keywords_name_the_kernels_parameters_and_a_library_is_not_pickled(built) -> None:
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    g = np.ones((3, 4), np.float32)
    with built("relu") as lib:
        np.testing.assert_array_equal(lib.ops["relu_backward"](input=x, grad=g), lib.relu_backward(g, x))
        np.testing.assert_array_equal(lib.relu_backward(g, input=x), np.where(x > 0, g, 0))
        for bad, said in (({"grad": g, "nope": x}, "no parameter 'nope'"), ({"input": x}, "missing argument 0")):
            with pytest.raises(TypeError, match=said):
                lib.relu_backward(**bad)
        for thing in (lib, lib.relu_forward):
            with pytest.raises(nch.NotPicklableError, match="cannot be pickled"):
                pickle.dumps(thing)
