"""What the processes do: misuse errors and warnings, a crash and the call after it, the same
workers across calls, none left after the caller is killed, and the same outputs and
reports as the op's program run the way `ntx op run` runs it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import cases
import numpy as np
import pytest

from neuron_customop_host import KernelCrashError, KernelTimeoutError, MisuseError, NeuronCustomOpWarning

# misuse.cpp's cases by name (conftest.py puts their reader on the path).
MISUSE = cases.read("misuse_cases.h")


def children(pid: int) -> set[int]:
    """The processes `pid` forked (its workers)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(c) for c in (task / "children").read_text().split()}
    return found


def test_misuse_errors_raise_and_warnings_warn(built) -> None:
    x = np.zeros((60, 50), np.float32)
    with built("misuse") as lib:
        with pytest.raises(MisuseError, match="index-out-of-range") as e:
            lib.misuse(x, MISUSE["INDEX_PAST_END"])
        assert [r["kind"] for r in e.value.reports] == ["index-out-of-range"]
        assert isinstance(e.value, RuntimeError)
        with pytest.warns(NeuronCustomOpWarning, match="incoherent-accessors-allowed"):
            lib.misuse(x, MISUSE["INCOHERENT_VERBOSE"])
    with built("misuse", cores=2) as lib, pytest.raises(MisuseError, match="output-unwritten"):
        lib.misuse(x, MISUSE["ONLY_CORE0_WRITES"])


def test_a_crash_raises_and_the_next_call_works(built) -> None:
    x = np.ones((60, 50), np.float32)
    with built("misuse") as lib:
        with pytest.raises(KernelCrashError) as e:
            lib.misuse(x, MISUSE["CRASH"])
        assert (e.value.core, e.value.signal, e.value.phase) == (0, signal.SIGSEGV, "kernel")
        np.testing.assert_array_equal(lib.misuse(x, MISUSE["NOTHING"]), np.zeros_like(x))
    with built("failures") as lib:
        with pytest.raises(KernelCrashError, match="no shape for this input") as e:
            lib.shape_throws(x)
        assert e.value.core is None and e.value.phase == "shape function"
        np.testing.assert_array_equal(lib.passes(x), x)


def test_a_kernel_that_closes_its_stdout_silences_no_later_call(built, capfd) -> None:
    x = np.ones(4, np.float32)
    with built("trust") as lib:
        lib.ends_badly(x, 3.0)
        capfd.readouterr()
        np.testing.assert_array_equal(lib.chatty_scale(x, 2.0), x * 2)
        assert capfd.readouterr().out == '{"factor": 2}\n'


def test_the_same_workers_serve_every_call(built) -> None:
    x = (np.arange(3001, dtype=np.float32) - 1500).reshape(1, 3001)
    with built("relu_tcm", cores=8) as lib:
        lib.relu_multicore(x)
        [server] = lib.server_pids()
        workers = children(server)
        assert len(workers) == 10  # eight cores, the shape function's worker and the watchdog
        for _ in range(3):
            np.testing.assert_array_equal(lib.relu_multicore(x), np.maximum(x, 0))
        assert lib.server_pids() == [server] and children(server) == workers
    assert not Path(f"/proc/{server}").exists() or Path(f"/proc/{server}/stat").read_text().split()[2] == "Z"


def test_no_process_outlives_a_killed_caller(built, build_dir: Path) -> None:
    built("relu_tcm").close()
    script = (
        "import sys, time, numpy as np\n"
        "from neuron_customop_host import load_library\n"
        "lib = load_library(sys.argv[1], cores=8)\n"
        "lib.relu_multicore(np.ones((1, 4096), np.float32))\n"
        "print(lib.server_pids()[0], flush=True)\n"
        "time.sleep(60)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", script, str(build_dir / "librelu_tcm.so")], stdout=subprocess.PIPE, text=True)
    server = int(p.stdout.readline())
    family = {server} | children(server)
    assert len(family) == 11  # the server, its nine workers and its watchdog
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(Path(f"/proc/{q}").exists() for q in family):
        time.sleep(0.05)
    left = [q for q in family if Path(f"/proc/{q}").exists()]
    assert not left, f"left running: {left}"


# (library, op, arguments (arrays by name, numbers as they are), cores)
SAME = [
    ("relu", "relu_forward", ["x"], 1),
    ("relu", "relu_backward", ["g", "x"], 1),
    ("relu_tcm", "relu_tcm", ["x"], 1),
    ("relu_tcm", "relu_multicore", ["x"], 2),
    ("misc", "scale", [60, 50, "x", 0.5], 1),
    ("misc", "stream_add", ["i", "i"], 1),
    ("misc", "negate", ["x"], 1),
    ("misc", "factories", ["x"], 1),
    ("misc", "window_move", ["x"], 1),
    ("misuse", "misuse", ["x", MISUSE["INDEX_PAST_END"]], 1),
    ("misuse", "misuse", ["x", MISUSE["INCOHERENT_VERBOSE"]], 1),
    ("misuse", "misuse", ["x", MISUSE["CORES_WRITE_SAME"]], 2),
    ("failures", "kernel_throws", ["x"], 1),
]


@pytest.mark.filterwarnings("ignore::neuron_customop_host.NeuronCustomOpWarning")
@pytest.mark.parametrize(("name", "op", "args", "cores"), SAME)
def test_outputs_and_reports_are_the_runners(built, build_dir: Path, tmp_path: Path, name, op, args, cores) -> None:
    arrays = {
        "x": (np.arange(3000, dtype=np.float32) - 1493.5).reshape(60, 50),
        "g": np.linspace(-1, 1, 3000, dtype=np.float32).reshape(60, 50),
        "i": np.arange(-5000, 5000, dtype=np.int32).reshape(100, 100),
    }
    for k, a in arrays.items():
        np.save(tmp_path / f"{k}.npy", a)
    built(name).close()
    program = [str(build_dir / f"lib{name}.so"), op, *[f"{a}.npy" if isinstance(a, str) else str(a) for a in args]]
    ran = subprocess.run(
        [*program, "--cores", str(cores), "--out", "y.npy", "--stats=json"], cwd=tmp_path, capture_output=True, text=True
    )
    # The runner names an input by its file too ("input 0 `x` (x.npy)"); a call has no file.
    text = re.sub(r"(input \d+(?: `[^`]*`)?) \([^)]*\.npy\)", r"\1", ran.stdout[ran.stdout.index("{") :])
    want = json.loads(text)
    with built(name, cores=cores) as lib:
        try:
            got = lib.ops[op](*[arrays[a] if isinstance(a, str) else a for a in args])
            status = 0
        except MisuseError:
            got, status = None, 2
        except KernelCrashError:
            got, status = None, 3
        assert status == ran.returncode, ran.stderr
        assert lib.last_stats == want
    if status == 0:
        y = np.load(tmp_path / "y.npy")
        assert got.dtype == y.dtype and got.tobytes() == y.tobytes()


def test_a_kernel_past_the_timeout_raises_and_the_next_call_works(built) -> None:
    x = np.ones((2, 4), np.float32)
    with built("failures", timeout=0.5) as lib:
        started = time.monotonic()
        with pytest.raises(KernelTimeoutError, match="still ran after 0.5 s, at spin") as e:
            lib.spin(x)
        assert time.monotonic() - started < 10 and e.value.core == 0
        assert [r["core"] for r in e.value.reports if r["kind"] == "timeout"] == [0]
        np.testing.assert_array_equal(lib.passes(x), x)


def test_an_output_is_poisoned_when_a_kernel_asks_for_it_after_returning_its_own(built) -> None:
    # NOTHING returns a tensor of its own (the output is then not poisoned up front);
    # ONLY_CORE0_WRITES on one core writes half of get_dst_tensor(): the other half must
    # read as poison, as in a run of its own.
    x = np.ones((60, 50), np.float32)
    with built("misuse") as lib:
        for _ in range(2):
            np.testing.assert_array_equal(lib.misuse(x, MISUSE["NOTHING"]), np.zeros_like(x))
        half = lib.misuse(x, MISUSE["ONLY_CORE0_WRITES"])
    assert half.tobytes()[: half.nbytes // 2] == x.tobytes()[: x.nbytes // 2]
    assert half.tobytes()[half.nbytes // 2 :] == b"\xff" * (half.nbytes // 2)


def test_standard_accessor_reads_are_checked_with_or_without_sanitize(built) -> None:
    # The accessor's elements are the device's proxies, which tell the runtime of each read.
    x = np.ones((60, 50), np.float32)
    for sanitize in (True, False):
        with built("misuse", sanitize=sanitize) as lib, pytest.raises(MisuseError, match="uninitialized-read") as e:
            lib.misuse(x, MISUSE["STANDARD_READ_UNWRITTEN"])
        assert e.value.reports[0]["index"] == "6..7"
