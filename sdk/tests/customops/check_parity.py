"""Device parity (docs/customop-api.md, "Device parity"): a kernel builds here exactly when
the device's own build builds it. parity.cpp's cases, one build each (-DCASE=NAME): what the
device's compile refuses is refused, saying so, with one line on the element proxy where
the compiler's words are about it; what it builds runs, with the proxy's reads and writes
seen by the runtime without --sanitize; --no-device-parity builds and warns on every run.

Usage: check_parity.py NTX SOURCES_DIR WORK_DIR. Prints one line per check and "parity
right" at the end; exits 1 at the first failure.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np

# The line ntx adds to a refusal about the element proxy (tools/ntx/src/parity.rs).
PROXY_HINT = "note: on the device an accessor's element is a proxy (at::TensorElementReference)"
REFUSED = (
    "does not compile as the device's build compiles it (-std=c++14 -Wall -Werror -Wno-c99-designator): the device refuses it."
)

# Case, the compiler's words on it, whether ntx adds the proxy's line.
REFUSALS = [
    ("REFUSED_INCREMENT", "cannot increment value of type 'TensorElementReference<float, false>'", True),
    ("REFUSED_COMPOUND", "no viable overloaded '+='", True),
    ("REFUSED_MAX", "no matching function for call to 'max'", True),
    ("REFUSED_REFERENCE", "non-const lvalue reference to type 'float' cannot bind", True),
    ("REFUSED_ADDRESS", "taking the address of a temporary object", True),
    ("REFUSED_PRINTF", "format specifies type 'double' but the argument has type", True),
    ("REFUSED_COPY", "copy assignment operator is implicitly deleted", True),
    ("REFUSED_TEMPORARY", "call to deleted member function 'accessor'", False),
    ("REFUSED_WARNING", "unused variable 'unused' [-Werror,-Wunused-variable]", False),
]


def build(ntx, src, work, case, *extra):
    """ntx op build of parity.cpp with CASE=case: the completed process and the program."""
    program = work / f"parity-{case}"
    program.unlink(missing_ok=True)
    cmd = [ntx, "op", "build", "--compute", src / "parity.cpp", "--shape", src / "parity_shape.cpp"]
    cmd += [f"--cflag=-DCASE={case}", "--out", program, *extra]
    return subprocess.run(cmd, capture_output=True, text=True, check=False), program


def run(program, work, code, *extra):
    """The program's parity op on v.npy: the completed process, its exit status checked."""
    out = work / "out.npy"
    out.unlink(missing_ok=True)
    p = subprocess.run([program, "parity", "v.npy", "--out", out, *extra], cwd=work, capture_output=True, text=True)
    if p.returncode != code:
        sys.exit(f"{program.name}: exit {p.returncode}, not {code}\n{p.stderr}")
    return p


def refusals(ntx, src, work):
    for case, words, hint in REFUSALS:
        p, program = build(ntx, src, work, case)
        said = p.stderr
        if p.returncode != 1 or REFUSED not in said or words not in said or "parity.cpp:" not in said:
            sys.exit(f"{case}: exit {p.returncode}\n{said}")
        if (PROXY_HINT in said) != hint or program.exists():
            sys.exit(f"{case}: the proxy's line {'missing' if hint else 'added'}, or a program written\n{said}")
        print(f"ok {case} refused: {words}")
    p, _ = build(ntx, src, work, "BUILT_PROXY_IDIOMS", "--std=c++17")
    if p.returncode != 1 or "--std=c++17: the device compiles kernels as c++14" not in p.stderr:
        sys.exit(f"--std=c++17: exit {p.returncode}\n{p.stderr}")
    print("ok --std=c++17 refused: the device compiles C++14")


def built(ntx, src, work):
    x = np.load(work / "v.npy")
    for case, want in (("BUILT_NEWER_WARNINGS", x * 2), ("BUILT_PROXY_IDIOMS", np.maximum(x, 0) + 1)):
        p, program = build(ntx, src, work, case)
        if p.returncode != 0:
            sys.exit(f"{case}: not built\n{p.stderr}")
        got = run(program, work, 0)
        if not np.array_equal(np.load(work / "out.npy"), want.astype(np.float32)):
            sys.exit(f"{case}: {np.load(work / 'out.npy')}, not {want}")
        print(f"ok {case} built and right")
    if "parity: -1.000000" not in got.stdout + got.stderr:
        sys.exit(f"BUILT_PROXY_IDIOMS printed {got.stdout!r}")
    # The proxy tells the runtime of each write and read: no --sanitize needed.
    for case, kind in (("BUILT_PARTLY_WRITTEN", "output-unwritten"), ("BUILT_READ_UNWRITTEN", "uninitialized-read")):
        _, program = build(ntx, src, work, case)
        p = run(program, work, 2)
        if f"error[{kind}] op parity, core 0" not in p.stderr or "index 3..4" not in p.stderr:
            sys.exit(f"{case}: {p.stderr}")
        print(f"ok {case}: {kind} without --sanitize")


def tcm_locals(ntx, src, work):
    """A TCM copy's local buffer must be dataram on the device: a static array is refused at
    the copy's line; a stack array is dataram unless -DSTACK_SIZE may move the stack to HBM."""
    _, program = build(ntx, src, work, "BUILT_TCM_STATIC")
    p = run(program, work, 2)
    line = 1 + (src / "parity.cpp").read_text().splitlines().index("    x.tcm_accessor().tensor_to_tcm<float>(staged, 0, 4);")
    if "error[tcm-copy-not-dataram] op parity, core 0" not in p.stderr or f"parity.cpp:{line}" not in p.stderr:
        sys.exit(f"a TCM copy into a static array: {p.stderr!r}")
    print("ok tcm-copy-not-dataram: a TCM copy into a static array, at its line")
    for extra, warned in (((), False), (("--cflag=-DSTACK_SIZE=65536",), True)):
        _, program = build(ntx, src, work, "BUILT_TCM_STACK", *extra)
        p = run(program, work, 0)
        if ("warning[tcm-copy-stack-switched] op parity, core 0" in p.stderr) != warned:
            sys.exit(f"a TCM copy into a stack array {extra}: {p.stderr!r}")
    print("ok tcm-copy-stack-switched: a stack array warned of with -DSTACK_SIZE=65536 only")


def op_names(ntx, src, work):
    """A kernel function name (m.def's third argument) of 32 characters or more is refused
    when the library is built, whatever the op's name; 31 builds, and so does an op name of
    40 characters over a short kernel name."""
    for op, kernel, code in (("g", "k" * 32, 1), ("g", "k" * 31, 0), ("parity_" + "n" * 33, "k", 0)):
        compute, shape = work / f"kernel_{len(kernel)}.cpp", work / f"named_{len(op)}_{len(kernel)}.cpp"
        compute.write_text(f"#include <torch/torch.h>\ntorch::Tensor {kernel}(const torch::Tensor &x) {{ return x; }}\n")
        shape.write_text(
            '#include <torch/torch.h>\n#include "torchneuron/register.h"\n'
            "torch::Tensor shape(torch::Tensor x) { return torch::zeros({x.size(0)}, torch::kFloat); }\n"
            f'NEURON_LIBRARY(named, m) {{ m.def("{op}", &shape, "{kernel}"); }}\n'
        )
        out = work / f"named-{len(op)}-{len(kernel)}"
        cmd = [ntx, "op", "build", "--compute", compute, "--shape", shape, "--out", out]
        p = subprocess.run(cmd, capture_output=True, text=True, check=False)
        said = f"op 'g' has a kernel function named '{kernel}', of 32 characters: the device's build refuses"
        if p.returncode != code or (code == 1) != (said in p.stderr):
            sys.exit(f"op {op!r} with kernel {kernel!r}: exit {p.returncode}\n{p.stderr}")
    print("ok a kernel function name of 32 characters refused, of 31 built; an op name of 40 built")
    # Names a schema does not take: one clear refusal when the library is built.
    for name in ("a b", "1abc", "a-b", "a.b", "a::b", "r\u00e9lu", ""):
        shape = work / "badly_named.cpp"
        shape.write_text(
            '#include <torch/torch.h>\n#include "torchneuron/register.h"\n'
            "torch::Tensor shape(torch::Tensor x) { return torch::zeros({x.size(0)}, torch::kFloat); }\n"
            f'NEURON_LIBRARY(named, m) {{ m.def("{name}", &shape, "parity"); }}\n'
        )
        cmd = [ntx, "op", "build", "--compute", src / "parity.cpp", "--shape", shape, "--out", work / "badly-named"]
        p = subprocess.run([*cmd, "--cflag=-DCASE=BUILT_PROXY_IDIOMS"], capture_output=True, text=True, check=False)
        if p.returncode != 1 or "is not a name an op schema takes" not in p.stderr:
            sys.exit(f"op name {name!r}: exit {p.returncode}\n{p.stderr}")
    print("ok op names a schema does not take refused when the library is built")


SCALED_SHAPE = """#include <torch/torch.h>
#include "torchneuron/register.h"
torch::Tensor scaled_shape(torch::Tensor x, double f, int64_t n) { return torch::zeros({x.size(0)}, torch::kFloat); }
NEURON_LIBRARY(scaled, m) { m.def("scaled", &scaled_shape, "scaled"); }
"""
SCALED = """#include <torch/torch.h>
// x * f + n, in float arithmetic.
torch::Tensor scaled(PARAMS)
{
    torch::Tensor out = torch::zeros({x.size(0)}, torch::kFloat);
    auto in = x.accessor<float, 1>();
    auto o = out.accessor<float, 1>();
    for (int64_t i = 0; i < x.size(0); i++)
        o[i] = static_cast<float>(in[i] * f + static_cast<float>(n));
    return out;
}
"""


def declarations(ntx, src, work):
    """The device's build declares the kernel from the op's schema (const at::Tensor&,
    float, int): a kernel defined otherwise is refused, naming both; float and int kernels
    run, a double argument arriving as a float and an int past 32 bits refused."""
    (work / "scaled_shape.cpp").write_text(SCALED_SHAPE)
    for params, code in (
        ("const torch::Tensor &x, double f, int64_t n", 1),
        ("torch::Tensor x, float f, int n", 1),
        ("const torch::Tensor &x, float f, int n", 0),
    ):
        (work / "scaled.cpp").write_text(SCALED.replace("PARAMS", params))
        cmd = [ntx, "op", "build", "--compute", work / "scaled.cpp", "--shape", work / "scaled_shape.cpp"]
        p = subprocess.run([*cmd, "--out", work / "scaled"], capture_output=True, text=True, check=False)
        want = (
            "the declaration the device's build makes from the op's schema, "
            "at::Tensor scaled(const at::Tensor&, float, int): on the device it would not link"
        )
        if p.returncode != code or (code == 1) != (want in p.stderr):
            sys.exit(f"scaled({params}): exit {p.returncode}\n{p.stderr}")
    print("ok a kernel taking double, int64_t or a Tensor by value refused, naming the declaration")
    x = np.array([1, 2, 3], np.float32)
    np.save(work / "three.npy", x)
    out = work / "scaled-out.npy"
    p = subprocess.run([work / "scaled", "scaled", "three.npy", "0.1", "7", "--out", out], cwd=work, capture_output=True)
    if p.returncode != 0 or not np.array_equal(np.load(out), x * np.float32(0.1) + np.float32(7)):
        sys.exit(f"scaled(x, 0.1, 7): {p.returncode} {p.stderr!r}")
    print("ok a float parameter gets float32(0.1), an int 7")
    p = subprocess.run(
        [work / "scaled", "scaled", "three.npy", "1", str(2**31), "--out", out], cwd=work, capture_output=True, text=True
    )
    if p.returncode != 1 or "argument 2 is 2147483648: the kernel takes an int (32 bits" not in p.stderr:
        sys.exit(f"scaled(x, 1, 2**31): {p.returncode} {p.stderr!r}")
    print("ok an int past 32 bits refused")


def opted_out(ntx, src, work):
    """--no-device-parity builds what the device refuses; each run warns."""
    p, program = build(ntx, src, work, "REFUSED_WARNING", "--no-device-parity")
    if p.returncode != 0:
        sys.exit(f"--no-device-parity: not built\n{p.stderr}")
    for _ in range(2):
        r = run(program, work, 0)
        if "warning[device-parity-off] op parity: built with --no-device-parity" not in r.stderr:
            sys.exit(f"--no-device-parity: no warning\n{r.stderr}")
    print("ok device-parity-off: --no-device-parity builds, every run warns")


def main():
    ntx, src, work = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    np.save(work / "v.npy", np.array([-1, 2, -3, 4], np.float32))
    refusals(ntx, src, work)
    built(ntx, src, work)
    tcm_locals(ntx, src, work)
    op_names(ntx, src, work)
    declarations(ntx, src, work)
    opted_out(ntx, src, work)
    print("parity right")


if __name__ == "__main__":
    main()
