"""The memory model of outputs and library arrays: a view keeps its memory, an array is
passed as what it is, a forked child has its own copy, an interrupt cancels only the
request it lands in (docs/customop-python.md, "Outputs, views and memory")."""

from __future__ import annotations

import gc
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from neuron_customop_host import NeuronCustomOpWarning
from neuron_customop_host._server import Server


def test_a_view_of_an_output_keeps_its_memory(built) -> None:
    with built("relu") as lib:
        row = lib.relu_forward(np.ones((4, 4), np.float32))[0]
        column = lib.relu_forward(np.full((4, 4), 2, np.float32)).T[1]
        part = lib.empty((4, 4))[1:3]
        part[...] = 5
        gc.collect()
        for _ in range(3):
            lib.relu_forward(np.full((4, 4), 42, np.float32))
            lib.empty((2, 4))[...] = 9
        np.testing.assert_array_equal(row, np.ones(4, np.float32))
        np.testing.assert_array_equal(column, np.full(4, 2, np.float32))
        np.testing.assert_array_equal(part, np.full((2, 4), 5, np.float32))


def test_memory_is_freed_once_no_array_reaches_it(built) -> None:
    with built("relu") as lib:
        view = lib.relu_forward(np.ones((4, 4), np.float32))[1:]
        server = lib._server
        assert isinstance(server, Server)
        [output] = server.held.values()
        del view
        gc.collect()
        assert server.held == {} and output.handle in server.to_free
        kept = lib.relu_forward(np.ones((4, 4), np.float32))
        assert output.handle not in server.to_free and kept.base is not None


def test_a_reshaped_or_retyped_library_array_is_passed_as_what_it_is(built) -> None:
    with built("relu") as lib:
        e = lib.empty((4, 4))
        e[...] = np.arange(-8, 8, dtype=np.float32).reshape(4, 4)
        out = lib.relu_forward(e.reshape(2, 8))
        assert out.shape == (2, 8)
        np.testing.assert_array_equal(out, np.maximum(e.reshape(2, 8), 0))
        np.testing.assert_array_equal(lib.relu_forward(e[1:]), np.maximum(e[1:], 0))
        np.testing.assert_array_equal(lib.relu_forward(e[::-1]), np.maximum(e[::-1], 0))
    with built("ops") as lib:
        f = lib.empty((2, 3), np.float32)
        f[...] = [[1.5, -2, 3], [4, 5, -6]]
        as_int = f.view(np.int32)
        out = lib.elementwise(as_int, np.ones_like(as_int), 0, 0, 19, 0, 3)  # mul in int32
        assert out.dtype == np.int32
        np.testing.assert_array_equal(out, as_int)


def test_an_exact_library_array_is_not_copied(built) -> None:
    with built("relu") as lib:
        e = lib.empty((4, 4))
        e[...] = 1
        server = lib._server
        assert isinstance(server, Server)
        requests: list[str] = []
        real = server.request
        server.request = lambda m: requests.append(*m) or real(m)  # type: ignore[method-assign]
        np.testing.assert_array_equal(lib.relu_forward(e), e)
        assert requests == ["Call"]  # no Alloc: no copy


@pytest.mark.parametrize("point", ["send", "length", "body"])
def test_an_interrupt_cancels_only_the_request_it_lands_in(built, monkeypatch, point: str) -> None:
    with built("relu") as lib:
        kept = lib.empty((4, 4))
        kept[...] = 3
        server = lib._server
        assert isinstance(server, Server)
        real_sock = server.sock
        calls = {"recv": 0}

        class Sock:
            def __getattr__(self, name: str):
                return getattr(real_sock, name)

            def sendall(self, data: bytes) -> None:
                if point == "send":
                    real_sock.sendall(data[:2])
                    raise KeyboardInterrupt
                real_sock.sendall(data)

            def recv(self, n: int, flags: int = 0) -> bytes:
                calls["recv"] += 1
                if calls["recv"] == 1:
                    if point == "body":
                        real_sock.recv(6)  # the length and part of the answer read
                    raise KeyboardInterrupt
                return real_sock.recv(n, flags)

        monkeypatch.setattr(server, "sock", Sock())
        with pytest.raises(KeyboardInterrupt):
            lib.relu_forward(np.full((4, 4), -1, np.float32))
        monkeypatch.undo()
        for value in (7, 8):
            x = np.full((4, 4), value, np.float32)
            np.testing.assert_array_equal(lib.relu_forward(x), x)
            np.testing.assert_array_equal(lib.empty((2, 2)).shape, (2, 2))
        np.testing.assert_array_equal(kept, np.full((4, 4), 3, np.float32))
        np.testing.assert_array_equal(lib.relu_forward(kept), kept)


def test_an_interrupt_in_empty_leaves_the_next_call_right(built, monkeypatch) -> None:
    with built("relu") as lib:
        lib.empty((1,))
        server = lib._server
        assert isinstance(server, Server)

        def interrupted() -> bytes:
            raise KeyboardInterrupt

        monkeypatch.setattr(server, "_answer", interrupted)
        with pytest.raises(KeyboardInterrupt):
            lib.empty((4, 4))
        monkeypatch.undo()
        x = np.arange(-4, 4, dtype=np.float32).reshape(2, 4)
        np.testing.assert_array_equal(lib.relu_forward(x), np.maximum(x, 0))
        assert lib.empty((3, 5)).shape == (3, 5)


def _in_child(work, seconds: float = 20) -> int:
    """Runs `work` in a forked child: its exit status (0 when it returned); a child still
    running after `seconds` is killed and the test fails."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            work()
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child still ran after {seconds} s")


def test_after_a_fork_the_child_has_its_own_copy(built) -> None:
    with built("relu") as lib:
        y = lib.relu_forward(np.ones((4, 4), np.float32))
        e = lib.empty((2, 2))
        e[...] = 6

        def child() -> None:
            assert y[0, 0] == 1 and e[0, 0] == 6
            y[0, 0] = 777
            e[0, 0] = 778
            x = np.full((4, 4), 5, np.float32)
            np.testing.assert_array_equal(lib.relu_forward(x), x)
            assert y[0, 0] == 777 and y[1, 1] == 1 and e[0, 0] == 778

        assert _in_child(child) == 0
        assert y[0, 0] == 1 and e[0, 0] == 6
        y = None  # the parent lets go of its output: its memory may be reused
        gc.collect()
        lib.relu_forward(np.full((4, 4), 9, np.float32))
        assert e[0, 0] == 6


def test_a_fork_while_another_thread_calls_does_not_hang_the_child(built) -> None:
    with built("failures", timeout=2) as lib:
        x = np.ones((8, 8), np.float32)
        lib.passes(x)
        started = threading.Event()

        def long_call() -> None:
            started.set()
            try:
                lib.spin(x)
            except Exception:
                pass

        t = threading.Thread(target=long_call)
        t.start()
        started.wait()
        while lib._lock.acquire(blocking=False):  # until the thread holds the lock, in its call
            lib._lock.release()
            time.sleep(0.01)

        def child() -> None:
            np.testing.assert_array_equal(lib.passes(x), x)

        assert _in_child(child) == 0
        t.join(timeout=30)  # the spinning call ends at its timeout
        assert not t.is_alive()


def test_ops_named_like_library_attributes_warn_and_stay_reachable(built) -> None:
    with pytest.warns(NeuronCustomOpWarning) as caught:
        lib = built("shadowed")
    assert {w.filename for w in caught} == {str(Path(__file__).parent / "conftest.py")}, "at the caller's line"
    messages = sorted(str(w.message) for w in caught)
    assert any("'close'" in m and "lib.ops['close']" in m for m in messages), messages
    assert any("'empty'" in m and "lib.ops['empty']" in m for m in messages), messages
    with lib:
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        np.testing.assert_array_equal(lib.ops["empty"](x), x)
        assert lib.empty((2, 2)).shape == (2, 2)  # the method, as documented
        np.testing.assert_array_equal(lib.passes(x), x)


def test_small_inputs_ride_with_the_call_and_larger_ones_are_copied_first(built, monkeypatch) -> None:
    with built("relu") as lib:
        lib.relu_forward(np.ones((1, 1), np.float32))  # starts the server
        server = lib._server
        assert isinstance(server, Server)
        limit = lib.description["inline_bytes"]
        sent: list[str] = []
        request = server.request

        def counted(message):
            sent.append(next(iter(message)))
            return request(message)

        monkeypatch.setattr(server, "request", counted)
        rng = np.random.default_rng(5)
        for n, want in ((limit // 4, ["Call"]), (limit // 4 + 1, ["Alloc", "Call"])):
            x = rng.standard_normal((1, n)).astype(np.float32)
            sent.clear()
            np.testing.assert_array_equal(lib.relu_forward(x), np.maximum(x, 0))
            assert sent == want, (n, sent)
        # A strided view's elements go in C order, as the copy would hold them.
        y = rng.standard_normal((8, 6)).astype(np.float32)[::2, ::-3]
        np.testing.assert_array_equal(lib.relu_forward(y), np.maximum(y, 0))


def test_the_server_refuses_bytes_that_are_not_the_tensor(built) -> None:
    with built("relu") as lib:
        lib.relu_forward(np.ones((1, 1), np.float32))
        server = lib._server
        assert isinstance(server, Server)
        f32 = lib._dtype(np.dtype(np.float32), 0)
        for shape, hex_, words in (
            ([1, 2], "00000000", "4 bytes for a [1, 2] tensor of 8"),
            ([1, 1], "zz000000", "not hexadecimal"),
            ([1, 2000], "00" * 8000, "8000 bytes sent with the call: at most 4096"),
        ):
            arg = {"Bytes": {"dtype": f32, "shape": shape, "hex": hex_}}
            answer = server.request({"Call": {"op": "relu_forward", "args": [arg], "cores": 1}})
            assert answer["status"] == 1 and words in answer["error"], answer
        np.testing.assert_array_equal(lib.relu_forward(np.full((1, 2), -1, np.float32)), np.zeros((1, 2)))


def test_empty_takes_a_shape_as_numpy_does(built) -> None:
    with built("relu") as lib:
        assert lib.empty(5, np.float32).shape == (5,) == np.empty(5, np.float32).shape
        assert lib.empty(np.int64(3), np.float32).shape == (3,)
        for bad in ((2.5,), 2.5):
            with pytest.raises(TypeError):
                np.empty(bad, np.float32)
            with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
                lib.empty(bad, np.float32)


def test_a_read_only_input_is_never_written(built) -> None:
    """A library array the caller made read-only is passed as a copy: a kernel that writes
    its input through a const_cast cannot change it (a writable one it can: no copy)."""
    with built("failures") as lib:
        kept = lib.empty((4,), np.float32)
        kept[:] = 1
        kept.setflags(write=False)
        lib.scribbles(kept)
        np.testing.assert_array_equal(kept, np.ones(4, np.float32))
        open_ = lib.empty((4,), np.float32)
        open_[:] = 1
        lib.scribbles(open_)
        assert open_[0] == 42
