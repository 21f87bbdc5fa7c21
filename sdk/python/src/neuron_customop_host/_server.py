"""One op program running as a server (`PROGRAM --serve FD`, sdk/runtime/src/serve.rs):
its socket, its HBM mapped here, requests and answers. The server keeps the model and one
worker per core between calls; it ends, workers and all, when this process closes its end
of the socket, however this process ends (SIGKILL included)."""

from __future__ import annotations

import json
import mmap
import os
import socket
import struct
import subprocess
import weakref
from typing import Any

import numpy as np

Message = dict[str, Any]

# Every server of this process, to close in a child this process forks (so that a
# server still sees its caller's end close when the caller ends).
_LIVE: weakref.WeakSet[Server] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for s in list(_LIVE):
        s.abandon()


os.register_at_fork(after_in_child=_after_fork_in_child)


class ServerGone(RuntimeError):
    """The server ended in the middle of a request."""


class Server:
    """A running op program."""

    def __init__(self, program: str):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        with theirs:
            self.process = subprocess.Popen(
                [program, "--serve", str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL
            )
        self.sock = mine
        self.hbm: mmap.mmap | None = None
        try:
            hello, fds = self._receive_first()
            self.description: Message = hello
            self.hbm = mmap.mmap(fds[0], hello["host_share"], mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            os.close(fds[0])
        except BaseException:
            self.close()
            raise
        self.bytes = np.frombuffer(self.hbm, dtype=np.uint8)
        self.base = self.bytes.__array_interface__["data"][0]
        _LIVE.add(self)

    def _receive_first(self) -> tuple[Message, list[int]]:
        data, fds, _, _ = socket.recv_fds(self.sock, 1 << 16, 1)
        if len(data) < 4 or not fds:
            raise ServerGone(f"the op program did not start (exit status {self.process.wait()})")
        (length,) = struct.unpack("<I", data[:4])
        body = data[4:]
        while len(body) < length:
            more = self.sock.recv(length - len(body))
            if not more:
                raise ServerGone("the op program ended while it described itself")
            body += more
        return json.loads(body), fds

    def _recv_exact(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = self.sock.recv(n)
            if not chunk:
                raise ServerGone("the op program ended")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def request(self, message: Message) -> Message:
        """Sends one request and returns its answer."""
        body = json.dumps(message).encode()
        try:
            self.sock.sendall(struct.pack("<I", len(body)) + body)
            (length,) = struct.unpack("<I", self._recv_exact(4))
            return json.loads(self._recv_exact(length))
        except OSError as e:
            raise ServerGone(f"the op program ended: {e}") from e

    def view(self, offset: int, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """The tensor at `offset` of HBM, in place."""
        count = int(np.prod(shape, dtype=np.int64))
        flat = np.frombuffer(self.hbm, dtype=dtype, count=count, offset=offset)
        return flat.reshape(shape)

    def offset_of(self, a: np.ndarray) -> int | None:
        """Where array `a` starts in HBM, if it lies in this server's HBM."""
        start = a.__array_interface__["data"][0] - self.base
        return start if 0 <= start < len(self.bytes) else None

    def abandon(self) -> None:
        """In a forked child: lets go of the socket without a word (the parent keeps it)."""
        try:
            self.sock.close()
        except OSError:
            pass

    def close(self) -> None:
        """Ends the server (closing the socket ends it and its workers) and waits for it."""
        self.sock.close()
        self.bytes = None
        if self.hbm is not None:
            try:
                self.hbm.close()
            except BufferError:
                # Arrays still view it: the mapping goes when they do.
                pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
