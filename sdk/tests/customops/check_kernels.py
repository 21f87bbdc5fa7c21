"""Our kernels (sdk/tests/customops) built by an installed `ntx op run` and run on NumPy
inputs: outputs against NumPy, each misuse reported by name, bad .npy files refused.

Usage: check_kernels.py NTX SOURCES_DIR WORK_DIR. Prints one line per check and "all
kernels right" at the end; exits 1 at the first failure.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import cases
import numpy as np


class Runner:
    """ntx op run for one library, built once (--build-dir), then its program."""

    def __init__(self, ntx, src, work, name, compute, shape, *extra):
        self.work = work
        self.program = work / name / "op"
        cmd = [ntx, "op", "run", "--compute", src / compute, "--shape", src / shape, *extra]
        cmd += ["--build-dir", work / name, "--cflag=-Wall", "--cflag=-Werror", "none"]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if not self.program.exists():
            sys.exit(f"{name} does not build: {p.stderr}")

    def run(self, *args, cores=1, code=0, stats=False, sanitize=True, env=None):
        cmd = [self.program, *map(str, args), "--cores", str(cores), "--out", "out.npy"]
        cmd += ["--sanitize"] if sanitize else []
        cmd += ["--stats=json"] if stats else []
        (self.work / "out.npy").unlink(missing_ok=True)
        env = {**os.environ, **env} if env else None
        p = subprocess.run(cmd, cwd=self.work, capture_output=True, text=True, check=False, env=env)
        if p.returncode != code:
            sys.exit(f"{args} on {cores} cores: exit {p.returncode}, not {code}\n{p.stderr}")
        return p


def readme_run(relu, work):
    """The README's relu run: its --stats lines, for the test to hold the README to."""
    np.save(work / "readme.npy", np.array([[-1, 2, -3], [4, -5, 6]], np.float32))
    p = subprocess.run(
        [relu.program, "relu_forward", "readme.npy", "--stats"], cwd=work, capture_output=True, text=True, check=True
    )
    print("readme stats:")
    print(p.stdout, end="")


def same(name, got, want):
    if got.dtype != want.dtype or not np.array_equal(got, want):
        sys.exit(f"{name}: got {got} want {want}")
    print(f"ok {name}")


def printf_ring(misc):
    """What the device shows of core 0's printf: nothing while its ring is off (the
    variable unset, as the Neuron runtime's default), all of it in a ring large enough, the
    oldest pieces at risk in one too small."""
    ring = "NEURON_RT_GPSIMD_STDOUT_QUEUE_SIZE_BYTES"
    unset = {k: v for k, v in os.environ.items() if k != ring}
    for value, said in ((None, "is not set"), ("2097152", None), ("256", None), ("1000", "is not a power of two")):
        env = {**unset, ring: value} if value else unset
        p = subprocess.run(
            [misc.program, "hello", "x.npy", "--cores", "8", "--out", "out.npy"],
            cwd=misc.work,
            env=env,
            capture_output=True,
            text=True,
        )
        lost = "warning[printf-lost] op hello, core 0: core 0 printed 38 bytes, which the device does not show"
        if p.returncode != 0 or (said is None) == (lost in p.stderr) or (said and said not in p.stderr):
            sys.exit(f"hello with {ring}={value}: {p.returncode} {p.stderr!r}")
    print("ok printf-lost: the device's ring off unset or wrongly sized, the text shown here")


def kernels(ntx, src, work):
    x = (np.arange(3000, dtype=np.float32) - 1493.5).reshape(60, 50)
    g = np.linspace(-1, 1, 3000, dtype=np.float32).reshape(60, 50)
    np.save(work / "x.npy", x)
    # 4 MiB: a core's copies fill their window views' page tables on its filler thread.
    np.save(work / "big.npy", np.linspace(-1, 1, 1 << 20, dtype=np.float32).reshape(1024, 1024))
    np.save(work / "g.npy", g)
    relu = Runner(ntx, src, work, "relu", "relu.cpp", "relu_shape.cpp")
    readme_run(relu, work)
    p = relu.run("relu_forward", "x.npy")
    same("relu_forward accessor", np.load(work / "out.npy"), np.maximum(x, 0))
    if p.stderr:
        sys.exit(f"a clean kernel's run said: {p.stderr!r}")
    relu.run("relu_backward", "g.npy", "x.npy")
    same("relu_backward accessor", np.load(work / "out.npy"), np.where(x > 0, g, 0).astype(np.float32))
    tcm = Runner(ntx, src, work, "relu_tcm", "relu_tcm.cpp", "relu_tcm_shape.cpp")
    tcm.run("relu_tcm", "x.npy")
    same("relu through TCM", np.load(work / "out.npy"), np.maximum(x, 0))
    odd = (np.arange(3001, dtype=np.float32) - 1500).reshape(1, 3001)
    np.save(work / "odd.npy", odd)
    for cores in (2, 8):
        p = tcm.run("relu_multicore", "odd.npy", cores=cores)
        same(f"relu_multicore on {cores} cores", np.load(work / "out.npy"), np.maximum(odd, 0))
        if ("warning[device-cores] op relu_multicore: 2 cores run here" in p.stderr) != (cores == 2):
            sys.exit(f"relu_multicore on {cores} cores said {p.stderr!r}")
    print("ok device-cores warned on 2 cores, not on 8")
    # On one core get_cpu_count() is 8, as the device's library says: the kernel writes an
    # eighth, and the rest is reported, as on the device.
    p = tcm.run("relu_multicore", "odd.npy", cores=1, code=2)
    if "error[output-unwritten] op relu_multicore, core 0, output, index 375..3001" not in p.stderr:
        sys.exit(f"relu_multicore on 1 core: {p.stderr!r}")
    print("ok relu_multicore on 1 cores: get_cpu_count() is 8, elements 375..3001 unwritten")
    misc = Runner(ntx, src, work, "misc", "misc.cpp", "misc_shape.cpp")
    misc.run("scale", 60, 50, "x.npy", 0.5)
    same("scale (int, float)", np.load(work / "out.npy"), (x * 0.5).astype(np.float32))
    a = np.arange(-5000, 5000, dtype=np.int32).reshape(100, 100)
    np.save(work / "a.npy", a)
    misc.run("stream_add", "a.npy", "a.npy")
    same("stream_add", np.load(work / "out.npy"), a + a)
    misc.run("negate", "x.npy")
    same("negate through TCM", np.load(work / "out.npy"), -x)
    p = misc.run("hello", "x.npy", cores=4)
    same("hello's output", np.load(work / "out.npy"), x)
    if p.stdout != "hello from core 0 of 4, 3000 elements\n" or p.stderr.count("printf-off-core-0") != 3:
        sys.exit(f"printf: {p.stdout!r} {p.stderr!r}")
    print("ok printf: core 0 prints, cores 1-3 reported")
    printf_ring(misc)
    p = misc.run("factories", "x.npy")
    want = np.array([[0] * 4, [1] * 4, [7] * 4, [0, 1, 0, 0], [3] * 4], dtype=np.int64)
    same("factories", np.load(work / "out.npy"), want)
    if p.stderr.count("warning[int64-tensor] op factories, core 0: a tensor of int64 elements (torch::kLong)") != 1:
        sys.exit(f"factories of kLong: {p.stderr!r}")
    print("ok int64-tensor warned once")
    p = misc.run("window_move", "x.npy", stats=True)
    same("an accessor across moved windows", np.load(work / "out.npy"), np.arange(1, 6, dtype=np.float32)[None])
    refills = json.loads(p.stdout)["per_core"][0]["refills"]
    if sum(refills[:3]) < 6:
        sys.exit(f"window_move refilled {refills}: the windows did not move")
    print(f"ok windows moved under an open accessor (refills {refills})")


# misuse.cpp's cases by name (misuse_cases.h)
MISUSE = cases.read("misuse_cases.h")

# (case, cores, exit status, the kind reported)
MISUSES = [
    ("STANDARD_ACCESSOR_MULTICORE", 8, 2, "accessor-multicore"),
    ("INDEX_PAST_END", 1, 2, "index-out-of-range"),
    ("ACCESSOR_WRONG_TYPE", 1, 2, "accessor-type"),
    ("INCOHERENT_ACCESSORS", 1, 2, "incoherent-accessors"),
    ("INCOHERENT_VERBOSE", 1, 0, "incoherent-accessors-allowed"),
    ("STREAM_PAST_END", 1, 2, "stream-past-end"),
    ("STREAM_AFTER_CLOSE", 1, 2, "stream-after-close"),
    ("FIVE_STREAMS", 1, 0, "slow-stream"),
    ("TCM_COPY_PAST_END", 1, 2, "tcm-copy-past-end"),
    ("TCM_FREE_FOREIGN", 1, 2, "tcm-free-foreign"),
    ("SHAPE_READS_DATA", 1, 2, "shape-function-data-read"),
    ("RETURNED_OTHER_TENSOR", 1, 2, "returned-tensor-mismatch"),
    ("MULTICORE_NO_DST", 8, 2, "multicore-no-dst-tensor"),
    ("CORES_WRITE_SAME", 2, 2, "cores-write-same-element"),
    ("CORE_READS_OTHER", 2, 0, "core-reads-other-core-write"),
    ("ONLY_CORE0_WRITES", 2, 2, "output-unwritten"),
    ("ONLY_CORE0_WRITES", 1, 2, "output-unwritten"),
    ("SIZE_PAST_DIMS", 1, 2, "index-out-of-range"),
    ("OPERATION_ERROR", 1, 2, "operation-error"),
    ("CRASH", 1, 3, "kernel-crashed"),
    ("TCM_LEAK", 1, 0, "tcm-leak"),
    ("TCM_STORE_PAST_END", 1, 2, "tcm-out-of-bounds"),
    ("TCM_LOAD_FREED", 2, 2, "tcm-out-of-bounds"),
    ("EMPTY_READ_UNWRITTEN", 1, 2, "uninitialized-read"),
    ("OUTPUT_READ_UNWRITTEN", 1, 2, "uninitialized-read"),
    ("TCM_STORE_PAST_GUARD", 1, 2, "tcm-out-of-bounds"),
    ("TCM_STORE_BEFORE_BLOCK", 1, 2, "tcm-out-of-bounds"),
    ("ACCESSOR_OUTLIVES_TENSOR", 1, 2, "tensor-not-live"),
    ("TCM_COPY_PAST_BLOCK", 1, 2, "tcm-out-of-bounds"),
    ("TCM_OVER_BY_1", 1, 2, "tcm-out-of-bounds"),
    ("TCM_OVER_BY_4", 1, 2, "tcm-out-of-bounds"),
    ("TCM_OVER_BY_15", 1, 2, "tcm-out-of-bounds"),
    ("DIVIDE_BY_ZERO", 1, 2, "integer-divide-by-zero"),
    ("SIGNED_OVERFLOW", 1, 2, "undefined-arithmetic"),
    ("SHIFT_PAST_WIDTH", 1, 2, "undefined-arithmetic"),
    ("FLOAT_TO_INT_OVERFLOW", 1, 2, "undefined-arithmetic"),
    ("MIN_DIVIDED_BY_MINUS_ONE", 1, 2, "undefined-arithmetic"),
    ("HBM_HEAP_33_LIVE", 1, 2, "hbm-heap-exhausted"),
    ("TCM_COPY_STATIC", 1, 2, "tcm-copy-not-dataram"),
    ("C_HEAP_MALLOC_NULL", 1, 0, "malloc-null"),
    ("C_HEAP_NEW_PAST", 1, 2, "c-heap-exhausted"),
]

# Findings every core makes alike (run on 8 cores), or between pairs of cores, reported once.
ONCE_ACROSS_CORES = {"STANDARD_ACCESSOR_MULTICORE", "CORES_WRITE_SAME", "MULTICORE_NO_DST"}
# Findings across cores placed where the first core made the copy: the function named.
# An unwritten output is placed where the kernel called get_dst_tensor().
PLACED_ACROSS_CORES = {
    "CORES_WRITE_SAME": ", at copy_half(",
    "CORE_READS_OTHER": ", at multicore(",
    "ONLY_CORE0_WRITES": "the output is what get_dst_tensor() gave, at multicore(",
}
# Cases whose report names the input: by position, the kernel's parameter name, the file.
NAMES_THE_INPUT = {"STANDARD_ACCESSOR_MULTICORE"}

# The words a stray TCM access's report gives, by case: the block nearest the address.
TCM_STRAYS = {
    "TCM_STORE_PAST_GUARD": "5000 bytes past the end of a block of 64 bytes (pool offset 0)",
    "TCM_STORE_BEFORE_BLOCK": "4 bytes before the start of a block of 4096 bytes (pool offset 0)",
    "TCM_COPY_PAST_BLOCK": "past the end of a block of 1000 bytes (pool offset 0), at misuse(at::Tensor const&, int) (",
    # Inside the block's 64-byte granule: found when the block is freed, at that line.
    "TCM_OVER_BY_1": "past the end of a block of 1000 bytes (pool offset 0): bytes 1000..1001 of its 64-byte granule",
    "TCM_OVER_BY_4": "past the end of a block of 1000 bytes (pool offset 0): bytes 1000..1004 of its 64-byte granule",
    "TCM_OVER_BY_15": "past the end of a block of 1000 bytes (pool offset 0): bytes 1014..1015 of its 64-byte granule",
    "DIVIDE_BY_ZERO": "by zero (undefined in C++), at misuse(at::Tensor const&, int) (",
    "SIGNED_OVERFLOW": "a signed integer overflow (undefined in C++",
    "SHIFT_PAST_WIDTH": "a shift by a negative amount or past its operand's width (undefined in C++",
    "FLOAT_TO_INT_OVERFLOW": "a floating-point value converted to an integer type that cannot hold it",
    "MIN_DIVIDED_BY_MINUS_ONE": "a signed integer overflow (undefined in C++",
}


# Cases whose finding is made in the kernel's call into the SDK: named at the kernel's line,
# a `case NAME:` line of misuse.cpp or one of the six after it.
AT_THE_LINE = [
    "STANDARD_ACCESSOR_MULTICORE",
    "INDEX_PAST_END",
    "ACCESSOR_WRONG_TYPE",
    "INCOHERENT_ACCESSORS",
    "STREAM_PAST_END",
    "STREAM_AFTER_CLOSE",
    "TCM_COPY_PAST_END",
    "TCM_FREE_FOREIGN",
    "HBM_HEAP_33_LIVE",
    "TCM_COPY_STATIC",
    "C_HEAP_MALLOC_NULL",
    "C_HEAP_NEW_PAST",
]


def at_the_line(case, said, source):
    """Whether `said` (a report's words) names the line of misuse.cpp that made `case`."""
    labels = [k + 1 for k, t in enumerate(source.splitlines()) if f"case {case}:" in t]
    found = re.search(r", at [^\n]* \([^)\n]*misuse\.cpp:(\d+)\)", said)
    return bool(found) and any(k <= int(found.group(1)) <= k + 6 for k in labels)


def idioms(ntx, src, work):
    """Kernels in ATen's idioms (idioms.cpp) against NumPy, and what they print."""
    x = np.load(work / "x.npy")[:7, :9] * np.float32(0.25)
    x[3] = -np.abs(x[3])
    np.save(work / "small.npy", x)
    k = Runner(ntx, src, work, "idioms", "idioms.cpp", "idioms_shape.cpp")
    p = k.run("row_stats", "small.npy")
    mean = np.zeros(7, np.float32)
    for c in range(9):
        mean += x[:, c] / np.float32(9)
    best = x.max(axis=1)
    want = np.stack([best, (x > 0).sum(1), (x <= 0).sum(1), mean, (best > np.abs(mean))], axis=1).astype(np.float32)
    same("row_stats (references, std::max, ++, +=, float&, float*, float division)", np.load(work / "out.npy"), want)
    if p.stdout != f"row 0: max {best[0]:f}, {int(want[0, 1])} positive\n":
        sys.exit(f"printf of accessor elements: {p.stdout!r}")
    a = np.arange(-6, 6, dtype=np.int32)
    np.save(work / "ints.npy", a)
    p = k.run("bits", "ints.npy")
    same("bits (<<=, |=, int32_t&, a vector of sizes)", np.load(work / "out.npy"), ((a << 1) | 1) ^ 2)
    if p.stdout != f"bits[0] = {((a[0] << 1) | 1) ^ 2}\n":
        sys.exit(f"printf of an int element: {p.stdout!r}")
    print("ok printf of accessor elements")


def each_misuse(m, work, src):
    """Every case of MISUSES: its kind reported, once across cores where it should be, at
    its line where it has one, the output written only when the run succeeded."""
    source = (src / "misuse.cpp").read_text()
    for case, cores, code, kind in MISUSES:
        p = m.run("misuse", "x.npy", MISUSE[case], cores=cores, code=code)
        if f"[{kind}] op misuse" not in p.stderr:
            sys.exit(f"case {case}: no {kind} report in {p.stderr!r}")
        if case in ONCE_ACROSS_CORES and p.stderr.count(f"[{kind}] op misuse") != 1:
            sys.exit(f"case {case}: the {kind} of several cores is not one report: {p.stderr!r}")
        if case in TCM_STRAYS and (TCM_STRAYS[case] not in p.stderr or "misuse.cpp:" not in p.stderr):
            sys.exit(f"case {case}: {TCM_STRAYS[case]!r} and the line not in {p.stderr!r}")
        if kind == "tensor-not-live" and "at misuse(at::Tensor const&, int) (" not in p.stderr:
            sys.exit(f"case {case}: the kernel's line not in {p.stderr!r}")
        if case in PLACED_ACROSS_CORES and (PLACED_ACROSS_CORES[case] not in p.stderr or "misuse.cpp:" not in p.stderr):
            sys.exit(f"case {case}: the copy's line not in {p.stderr!r}")
        if case in AT_THE_LINE and not at_the_line(case, p.stderr, source):
            sys.exit(f"case {case}: the kernel's line not in {p.stderr!r}")
        if case in NAMES_THE_INPUT and f"[{kind}] op misuse, cores 0 to 7, input 0 `x` (x.npy)" not in p.stderr:
            sys.exit(f"case {case}: the input not named by its parameter and file: {p.stderr!r}")
        wrote = (work / "out.npy").exists()
        if wrote != (code == 0):
            sys.exit(f"case {case}: output written: {wrote}")
        print(f"ok {kind} reported (exit {code})")


def hbm_heap_fits(m):
    """32 of a kernel's tensors live at once, temporaries given back one by one, and vectors
    of 8000 bytes made and let go: the device's HBM and C heaps have blocks for them, and
    nothing is reported."""
    for case in ("HBM_HEAP_32_LIVE", "HBM_HEAP_REUSED", "C_HEAP_WITHIN"):
        p = m.run("misuse", "x.npy", MISUSE[case])
        if p.stderr:
            sys.exit(f"{case}: the device's heaps have blocks for these: {p.stderr!r}")
    print("ok 32 of a kernel's tensors live, temporaries and vectors given back: the device's heaps have blocks")


def misuses(ntx, src, work):
    m = Runner(ntx, src, work, "misuse", "misuse.cpp", "misuse_shape.cpp")
    each_misuse(m, work, src)
    p = m.run("misuse", "x.npy", MISUSE["INDEX_PAST_END"], code=2, stats=True)
    (r,) = json.loads(p.stdout)["reports"]
    if not at_the_line("INDEX_PAST_END", r["detail"], (src / "misuse.cpp").read_text()):
        sys.exit(f"--stats=json: index-out-of-range not at the kernel's line: {r}")
    if not r["stack"] or "misuse.cpp:" not in r["stack"][-1]:
        sys.exit(f"--stats=json: the stack does not end at the kernel's outermost line: {r['stack']}")
    print("ok the kernel's line in the report's words, in text and JSON, its stack up to the kernel")
    # A standard accessor's elements are proxies that tell the runtime of each read and
    # write (as the device's are proxies): no --sanitize needed.
    for sanitize in (True, False):
        p = m.run("misuse", "x.npy", MISUSE["STANDARD_READ_UNWRITTEN"], code=2, sanitize=sanitize)
        if "error[uninitialized-read] op misuse, core 0, tensor" not in p.stderr or "index 6..7" not in p.stderr:
            sys.exit(f"sanitize={sanitize}: {p.stderr!r}")
        p = m.run("misuse", "x.npy", MISUSE["FIRST_ROW_ONLY"], code=2, sanitize=sanitize)
        if "error[output-unwritten] op misuse, core 0, output, index 50..3000" not in p.stderr:
            sys.exit(f"one core, a standard accessor, sanitize={sanitize}: {p.stderr!r}")
    print("ok uninitialized-read and output-unwritten through a standard accessor, with or without --sanitize")
    for case, what in (
        ("TCM_COPY_UNWRITTEN", "tcm_to_tensor of 64 bytes reads bytes 0..64"),
        ("TCM_LOAD_UNWRITTEN", "a load at"),
    ):
        p = m.run("misuse", "x.npy", MISUSE[case], code=2)
        if f"error[uninitialized-read] op misuse, core 0: {what}" not in p.stderr or "misuse.cpp:" not in p.stderr:
            sys.exit(f"case {case}: TCM bytes nothing wrote: {p.stderr!r}")
        if m.run("misuse", "x.npy", MISUSE[case], sanitize=False).stderr:
            sys.exit(f"case {case}: TCM bytes were watched without --sanitize")
    print("ok uninitialized-read of TCM bytes under --sanitize, with the kernel's line")
    if m.run("misuse", "x.npy", MISUSE["TCM_READ_WRITTEN"]).stderr:
        sys.exit("TCM bytes read where written were reported")
    p = m.run("misuse", "x.npy", MISUSE["EMPTY_READ_WRITTEN"])
    if p.stderr:
        sys.exit(f"elements read where written were reported: {p.stderr!r}")
    print("ok elements read where written: nothing reported")
    p = m.run("misuse", "x.npy", MISUSE["INCOHERENT_QUIET"])
    if "incoherent" in p.stderr or m.run("misuse", "x.npy", MISUSE["NOTHING"]).stderr:
        sys.exit(f"INCOHERENT_QUIET reported: {p.stderr!r}")
    print("ok INCOHERENT_QUIET allows it silently")
    hbm_heap_fits(m)
    # failures.cpp throws and exits, which the device runtime lacks: built for the host only.
    spin = Runner(ntx, src, work, "failures", "failures.cpp", "failures_shape.cpp", "--no-device-parity")
    p = spin.run("spin", "x.npy", "--timeout", "1", cores=2, code=4)
    if "error[timeout] op spin, core 1:" not in p.stderr or (work / "out.npy").exists():
        sys.exit(f"spin past --timeout: {p.stderr!r}")
    print("ok timeout reported (exit 4)")
    p = spin.run("passes", "x.npy")
    lacks = "warning[device-lacks] op passes: the kernels call __cxa_throw, exit, which the device runtime does not have"
    if lacks not in p.stderr:
        sys.exit(f"a kernel calling exit() and throwing: {p.stderr!r}")
    print("ok device-lacks warned on the host")
    eleven = Runner(ntx, src, work, "eleven", "misc.cpp", "eleven_shape.cpp")
    p = eleven.run("scale", 1, 1, "x.npy", 1.0, code=1)
    if "at most 10" not in p.stderr:
        sys.exit(f"eleven ops: {p.stderr!r}")
    print("ok a library of eleven ops refused")
    cmd = [ntx, "op", "run", "--name", "builtin", "--compute", src / "misc.cpp", "--shape", src / "misc_shape.cpp"]
    p = subprocess.run([*cmd, "hello", "x.npy"], cwd=work, capture_output=True, text=True, check=False)
    if p.returncode != 1 or "builtin" not in p.stderr:
        sys.exit(f"a library named builtin: {p.returncode} {p.stderr!r}")
    print("ok a library named builtin refused")
    tcm = Runner(ntx, src, work, "relu_tcm", "relu_tcm.cpp", "relu_tcm_shape.cpp")
    header = b"\x93NUMPY\x01\x00"
    np.save(work / "fortran.npy", np.asfortranarray(np.zeros((3, 2), np.float32)))
    np.save(work / "big-endian.npy", np.zeros(4, ">f4"))
    np.save(work / "float64.npy", np.zeros(4, np.float64))
    np.save(work / "truncated.npy", np.zeros(4, np.float32))
    np.save(work / "limits.npy", np.zeros((65536, 1, 1, 1, 1), np.float32))
    data = (work / "truncated.npy").read_bytes()
    (work / "truncated.npy").write_bytes(data[:-3])
    (work / "garbage.npy").write_bytes(header + b"\xff")
    for name in ["truncated", "fortran", "big-endian", "float64", "garbage", "limits"]:
        p = tcm.run("relu_tcm", f"{name}.npy", code=1)
        if "error: argument 0" not in p.stderr or (work / "out.npy").exists():
            sys.exit(f"{name}.npy: {p.stderr!r}")
        print(f"ok {name}.npy refused: {p.stderr.strip()}")


def schema(ntx, src, work):
    """`ntx op schema` of the sources, and of the program the runner built: PyTorch's view."""
    want = "relu_ops::relu_forward(Tensor input) -> Tensor\nrelu_ops::relu_backward(Tensor grad, Tensor input) -> Tensor\n"
    args = ["--compute", src / "relu.cpp", "--shape", src / "relu_shape.cpp"]
    built = work / "librelu_schema.so"
    subprocess.run([ntx, "op", "build", *args, "--out", built], check=True, capture_output=True)
    # A bare name is the program in the working folder, not one on PATH.
    for how in (args, ["--library", built], ["--library", built.name]):
        p = subprocess.run([ntx, "op", "schema", *how], cwd=work, capture_output=True, text=True, check=False)
        if p.returncode != 0 or p.stdout != want:
            sys.exit(f"ntx op schema {how}: exit {p.returncode}, {p.stdout!r} {p.stderr!r}")
    print("ok ntx op schema: the relu ops' schemas, from the sources and from the program")


def main():
    ntx, src, work = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    schema(ntx, src, work)
    kernels(ntx, src, work)
    idioms(ntx, src, work)
    misuses(ntx, src, work)
    print("all kernels right")


if __name__ == "__main__":
    main()
