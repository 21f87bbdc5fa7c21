"""How a request reads its answer (neuron_customop_host/_server.py): a message in one read or
in pieces, nothing past it, and the short poll before sleeping only after a quick answer."""

from __future__ import annotations

import socket
import struct
import subprocess
import sys

import numpy as np
import pytest

from neuron_customop_host import ServerGoneError, _server
from neuron_customop_host._server import Server


class Pieces:
    """A socket that gives an answer in the pieces given (a read takes at most what it
    asks), and records each read's flags; `busy` non-blocking reads find nothing first."""

    def __init__(self, pieces: list[bytes], busy: int = 0):
        self.pieces = list(pieces)
        self.busy = busy
        self.flags: list[int] = []

    def recv(self, n: int, flags: int = 0) -> bytes:
        self.flags.append(flags)
        if flags & socket.MSG_DONTWAIT and self.busy:
            self.busy -= 1
            raise BlockingIOError
        piece = self.pieces.pop(0) if self.pieces else b""
        if len(piece) > n:
            self.pieces.insert(0, piece[n:])
        return piece[:n]


def _server_over(sock: Pieces) -> Server:
    s = Server.__new__(Server)
    s.sock = sock  # type: ignore[assignment]
    s.quick = False
    s.process = subprocess.Popen([sys.executable, "-c", "pass"])
    s.process.wait()
    return s


def _message(body: bytes) -> bytes:
    return struct.pack("<I", len(body)) + body


def test_an_answer_in_pieces_is_put_together() -> None:
    whole = _message(b'{"status": 0}')
    s = _server_over(Pieces([whole[:2], whole[2:6], whole[6:]]))
    assert s._answer() == b'{"status": 0}'


def test_an_answer_in_one_read_takes_one_read() -> None:
    sock = Pieces([_message(b"{}")])
    s = _server_over(sock)
    assert s._answer() == b"{}"
    assert len(sock.flags) == 1


def test_bytes_past_the_message_end_the_server_with_the_reason() -> None:
    s = _server_over(Pieces([_message(b"{}") + b"xy"]))
    with pytest.raises(ServerGoneError, match="2 bytes past its message"):
        s._answer()


def test_a_server_that_ends_mid_answer_is_said_to_have_ended() -> None:
    s = _server_over(Pieces([_message(b"{}")[:3]]))
    with pytest.raises(ServerGoneError, match="ended"):
        s._answer()


def test_a_quick_server_is_polled_and_a_slow_one_waited_for(monkeypatch) -> None:
    # Polled: after a quick answer, the next read does not block until it finds something.
    monkeypatch.setattr(_server, "SPIN_SECONDS", 60.0)
    sock = Pieces([_message(b"{}")], busy=3)
    s = _server_over(sock)
    s.quick = True
    assert s._answer() == b"{}"
    assert sock.flags == [socket.MSG_DONTWAIT] * 4
    assert s.quick, "an answer within the time keeps the poll"
    # Waited for: with no time to poll, an answer is slow, and the next read blocks.
    monkeypatch.setattr(_server, "SPIN_SECONDS", 0.0)
    sock = Pieces([_message(b"{}")])
    s = _server_over(sock)
    s.quick = True
    assert s._answer() == b"{}"
    assert sock.flags == [0]
    assert not s.quick


def test_calls_after_a_slow_answer_and_after_quick_ones_give_the_values(built, monkeypatch) -> None:
    with built("relu") as lib:
        x = np.arange(-8, 8, dtype=np.float32).reshape(4, 4)
        for spin in (0.0, 60.0, 0.0):
            monkeypatch.setattr(_server, "SPIN_SECONDS", spin)
            for _ in range(3):
                np.testing.assert_array_equal(lib.relu_forward(x), np.maximum(x, 0))
            assert lib._server.quick is (spin > 0)
