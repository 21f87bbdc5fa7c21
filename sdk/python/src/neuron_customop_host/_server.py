"""One op program running as a server (`PROGRAM --serve FD`, sdk/runtime/src/edges/serve.rs):
its socket, its HBM mapped here, requests and answers, and the tensors of that HBM that
this process holds. The server keeps the model and one worker per core between calls; it
ends, workers and all, when this process closes its end of the socket, however this
process ends (SIGKILL included).

The memory model (docs/customop-python.md, "Outputs, views and memory"): each tensor this
process holds is owned by one NumPy array over its bytes (its *owner*), which every array
handed to the user, and every view of those, has at the end of its `.base` chain. The
tensor is freed on the server once the owner is gone, that is once no array reaches it.
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import socket
import struct
import subprocess
import time
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._abi import PROTOCOL
from .errors import CallInProgressError, ServerGoneError

Message = dict[str, Any]

# Every server of this process, so that a child this process forks lets go of them.
_LIVE: weakref.WeakSet[Server] = weakref.WeakSet()


@dataclass(frozen=True)
class Held:
    """A tensor of the server's HBM that this process holds: its handle, where it is, and
    what it is (element type code and shape), as the server made it."""

    handle: int
    offset: int
    nbytes: int
    code: int
    shape: tuple[int, ...]


def _after_fork_in_child() -> None:
    for s in list(_LIVE):
        try:
            s.after_fork()
        except Exception:  # an at-fork handler must not stop the others: the child ends
            os._exit(70)


os.register_at_fork(after_in_child=_after_fork_in_child)

_LIBC = ctypes.CDLL(None, use_errno=True)
_LIBC.mmap.restype = ctypes.c_void_p
_LIBC.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_MAP_FIXED, _MAP_ANONYMOUS, _MAP_NORESERVE = 0x10, 0x20, 0x4000

# How long a request waits for its answer by polling the socket before it sleeps in
# `recv`, when the server's last answer came within that time: a short call's answer then
# finds this process running, not asleep on a halted CPU that has to be woken
# (docs/performance.md: a third of a one-element call). A slower op never polls.
SPIN_SECONDS = 0.0005
# The most one read takes (an answer is one message; most fit).
_READ = 1 << 16


def _exit_reason(process: subprocess.Popen[bytes]) -> str:
    """Why the server process ended (or that it still runs)."""
    try:
        code = process.wait(timeout=1)
    except subprocess.TimeoutExpired:
        return "it still runs, but its socket closed"
    if code < 0:
        return f"killed by signal {-code}"
    return f"exit status {code}"


class Server:
    """A running op program."""

    def __init__(self, program: str):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.hbm: mmap.mmap | None = None
        self.broken = False
        # A request waits for its answer (a nested one, from a signal handler, is refused).
        self.in_request = False
        # Whether the last answer came within SPIN_SECONDS.
        self.quick = False
        # Tensors held, by offset; handles to free, sent with the next request.
        self.held: dict[int, Held] = {}
        self.to_free: list[int] = []
        with theirs:
            self.process = subprocess.Popen(
                [program, "--serve", str(theirs.fileno())], pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL
            )
        self.sock = mine
        try:
            hello, fds = self._receive_first()
            if hello.get("protocol") != PROTOCOL:
                raise ServerGoneError(f"{program} speaks protocol {hello.get('protocol')}, this package {PROTOCOL}: rebuild it")
            self.description: Message = hello
            self.hbm = mmap.mmap(fds[0], hello["host_share"], mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            os.close(fds[0])
        except BaseException:
            self.close()
            raise
        self.base = ctypes.addressof(ctypes.c_char.from_buffer(self.hbm))
        _LIVE.add(self)

    def _receive_first(self) -> tuple[Message, list[int]]:
        data, fds, _, _ = socket.recv_fds(self.sock, 1 << 16, 1)
        if len(data) < 4 or not fds:
            raise ServerGoneError(f"the op program did not start ({_exit_reason(self.process)})")
        (length,) = struct.unpack("<I", data[:4])
        body = data[4:]
        while len(body) < length:
            more = self.sock.recv(length - len(body))
            if not more:
                raise ServerGoneError("the op program ended while it described itself")
            body += more
        return json.loads(body), fds

    def _recv_some(self, n: int) -> bytes:
        chunk = self.sock.recv(n)
        if not chunk:
            raise ServerGoneError(f"the op program ended ({_exit_reason(self.process)})")
        return chunk

    def _first_chunk(self) -> bytes:
        """The answer's first bytes: polled for up to SPIN_SECONDS when the last answer
        was quick, else (and after that) waited for."""
        if self.quick:
            end = time.perf_counter() + SPIN_SECONDS
            while time.perf_counter() < end:
                try:
                    chunk = self.sock.recv(_READ, socket.MSG_DONTWAIT)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise ServerGoneError(f"the op program ended ({_exit_reason(self.process)})")
                return chunk
        return self._recv_some(_READ)

    def _answer(self) -> bytes:
        """One answer's body (after its 4-byte length); a short one in one read."""
        started = time.perf_counter()
        data = self._first_chunk()
        while len(data) < 4:
            data += self._recv_some(4 - len(data))
        (length,) = struct.unpack_from("<I", data)
        chunks = [data]
        have = len(data)
        while have < 4 + length:
            chunk = self._recv_some(min(_READ, 4 + length - have))
            chunks.append(chunk)
            have += len(chunk)
        if have != 4 + length:
            raise ServerGoneError(f"the op program answered {have - 4 - length} bytes past its message")
        self.quick = time.perf_counter() - started < SPIN_SECONDS
        return b"".join(chunks)[4:]

    def request(self, message: Message) -> Message:
        """Sends one request and returns its answer. Anything that interrupts the exchange
        (KeyboardInterrupt among them) ends this server, since the next answer on the
        socket could be this one's: the library then starts another for its next call."""
        if self.in_request:
            raise CallInProgressError(
                "a call is in progress on this library, waiting for its answer in this thread: this one "
                "came from a signal handler (or a finalizer) that interrupted it; make it after that call returns"
            )
        body = json.dumps(message, allow_nan=False).encode()
        self.in_request = True
        try:
            self.sock.sendall(struct.pack("<I", len(body)) + body)
            return json.loads(self._answer())
        except OSError as e:
            self.broken = True
            raise ServerGoneError(f"the op program ended: {e} ({_exit_reason(self.process)})") from e
        except BaseException:
            self.broken = True
            self.kill()
            raise
        finally:
            self.in_request = False

    def frees(self) -> list[int]:
        """The handles to free, taken (they ride on the next request)."""
        taken = []
        while self.to_free:
            taken.append(self.to_free.pop())
        return taken

    def _bytes(self, held: Held) -> np.ndarray:
        """The bytes of tensor `held` in place: an array over the mapping."""
        return np.frombuffer(self.hbm, dtype=np.uint8, count=held.nbytes, offset=held.offset)  # type: ignore[arg-type]

    def hold(self, held: Held, dtype: np.dtype) -> np.ndarray:
        """The tensor `held` as an array in place, its owner made (see the module's text)."""
        owner = self._bytes(held)
        self.held[held.offset] = held
        weakref.finalize(owner, Server._let_go, weakref.ref(self), held)
        return owner.view(dtype).reshape(held.shape)

    def fill(self, held: Held, a: np.ndarray) -> None:
        """Copies array `a` into tensor `held` (a tensor of its type and shape)."""
        np.copyto(self._bytes(held).view(a.dtype).reshape(a.shape), a, casting="no")

    @staticmethod
    def _let_go(server_ref: weakref.ref[Server], held: Held) -> None:
        # Called by the garbage collector at any point: only noted, freed with the next request.
        server = server_ref()
        if server is not None and server.held.get(held.offset) is held:
            del server.held[held.offset]
            server.to_free.append(held.handle)

    def holding(self, a: np.ndarray, code: int) -> Held | None:
        """The tensor `a` is, exactly (the same bytes, element type and shape, C order),
        if this server holds one."""
        if not a.flags.c_contiguous or self.hbm is None:
            return None
        held = self.held.get(a.__array_interface__["data"][0] - self.base)
        if held is None or held.code != code or held.shape != a.shape:
            return None
        return held

    def after_fork(self) -> None:
        """In a forked child: lets go of the socket without a word (the parent keeps it),
        and gives the arrays over this HBM private memory with the same bytes, as NumPy's
        own arrays have after a fork (the server's memory is shared with the parent)."""
        self.broken = True
        try:
            self.sock.close()
        except OSError:
            pass
        if self.hbm is None or self.hbm.closed:
            return
        saved = [(h.offset, self.hbm[h.offset : h.offset + h.nbytes]) for h in self.held.values()]
        prot = mmap.PROT_READ | mmap.PROT_WRITE
        flags = mmap.MAP_PRIVATE | _MAP_ANONYMOUS | _MAP_FIXED | _MAP_NORESERVE
        if _LIBC.mmap(self.base, len(self.hbm), prot, flags, -1, 0) != self.base:
            os._exit(70)  # the child's arrays would still be the parent's memory: never that
        for offset, data in saved:
            ctypes.memmove(self.base + offset, data, len(data))
        self.held.clear()
        self.to_free.clear()

    def kill(self) -> None:
        """Ends the server at once (closing the socket ends it and its workers)."""
        self.broken = True
        try:
            self.sock.close()
        finally:
            if self.process.poll() is None:
                self.process.kill()

    def close(self) -> None:
        """Ends the server and waits for it. The mapping stays while arrays view it."""
        self.broken = True
        self.sock.close()
        if self.hbm is not None:
            try:
                self.hbm.close()
            except BufferError:
                pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
