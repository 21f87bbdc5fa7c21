"""Every operation of the custom-op SDK in every element type, against NumPy.

Usage: check_ops.py OP_PROGRAM WORK_DIR. OP_PROGRAM is ops.cpp built by `ntx op run`
(its program, called directly). Prints one line per case and "all operations right" at
the end; exits 1 at the first wrong result. Arithmetic and bitwise results must be
bit-exact; sin, cos, tan, log, log2, log10, exp and float pow within 2 ulp of a float64
reference; a refused (operation, type) pair must be refused with operation-error.
"""

import subprocess
import sys
from pathlib import Path

import cases
import numpy as np

# c10::ScalarType codes; bfloat16 travels as its 16-bit patterns ('<u2').
CODES = {
    "uint8": 0,
    "int8": 1,
    "int16": 2,
    "int32": 3,
    "int64": 4,
    "float16": 5,
    "float32": 6,
    "bfloat16": 15,
}
INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "float32", "bfloat16"]
UNARY_FLOAT = ["sin", "cos", "tan", "log", "log2", "log10", "exp"]
# Each operation's case in ops.cpp, by name (ops_cases.h): `pow_ts` is POW_TS.
CASES = cases.read("ops_cases.h")
OPS = [name.lower() for name in CASES]
S, T = 3, 2  # the scalar operand and alpha (clamp: min T, max S)


def bf16_round(x):
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32)


def values(dtype, rng, positive=False):
    """Inputs of one type: a spread of values, extremes among them for integers."""
    if dtype in INTS:
        info = np.iinfo(dtype)
        lo = 1 if positive else max(info.min, -1000)
        v = rng.integers(lo, min(info.max, 1000), size=64, endpoint=True)
        if not positive:
            v[:2] = [info.min, info.max]
        return v.astype(dtype)
    v = rng.uniform(0.1 if positive else -4.0, 4.0, size=64).astype(np.float32)
    return bf16_round(v) if dtype == "bfloat16" else v.astype(dtype)


def result_type(op, dtype):
    """The documented result type (docs/customop-host.md), or None where refused."""
    if op.startswith(("and", "or", "bitwise")):
        return dtype if dtype in INTS else None
    if op in UNARY_FLOAT or op.startswith("div"):
        return "float32" if dtype in INTS else dtype
    return dtype


def wide(dtype, x):
    return x.astype(np.float32) if dtype == "bfloat16" else x


def reference(op, dtype, a, b, out):
    """NumPy's result, computed in int64 (then wrapped) or in the type's precision."""
    if out in INTS:
        a64, b64 = a.astype(np.int64), b.astype(np.int64)
        r = {
            "abs": lambda: np.abs(a64),
            "ceil": lambda: a64,
            "floor": lambda: a64,
            "bitwise_not": lambda: ~a64,
            "pow_ts": lambda: a64**S,
            "pow_st": lambda: np.int64(S) ** a64,
            "pow_tt": lambda: a64**b64,
            "clamp": lambda: np.minimum(np.maximum(a64, T), S),
            "add_tt": lambda: a64 + T * b64,
            "add_ts": lambda: a64 + T * S,
            "sub_tt": lambda: a64 - T * b64,
            "sub_ts": lambda: a64 - T * S,
            "mul_tt": lambda: a64 * b64,
            "mul_ts": lambda: a64 * S,
            "and_tt": lambda: a64 & b64,
            "and_ts": lambda: a64 & S,
            "and_st": lambda: a64 & S,
            "or_tt": lambda: a64 | b64,
            "or_ts": lambda: a64 | S,
            "or_st": lambda: a64 | S,
        }[op]()
        return r.astype(out)
    ft = np.float32 if out in ("float32", "bfloat16") else np.float16
    x = wide(dtype, a).astype(ft) if dtype not in INTS else a.astype(np.float32)
    y = wide(dtype, b).astype(ft) if dtype not in INTS else b.astype(np.float32)
    if op in UNARY_FLOAT or op.startswith("pow"):
        f = {"log": np.log, "log2": np.log2, "log10": np.log10}.get(op, getattr(np, op, None))
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        if op == "pow_ts":
            return x64**S
        if op == "pow_st":
            return np.float64(S) ** x64
        if op == "pow_tt":
            return x64**y64
        return f(x64)
    with np.errstate(all="ignore"):
        r = {
            "abs": lambda: np.abs(x),
            "ceil": lambda: np.ceil(x),
            "floor": lambda: np.floor(x),
            "clamp": lambda: np.minimum(np.maximum(x, ft(T)), ft(S)),
            "add_tt": lambda: x + ft(T) * y,
            "add_ts": lambda: x + ft(T) * ft(S),
            "sub_tt": lambda: x - ft(T) * y,
            "sub_ts": lambda: x - ft(T) * ft(S),
            "mul_tt": lambda: x * y,
            "mul_ts": lambda: x * ft(S),
            "div_tt": lambda: x / y,
            "div_ts": lambda: x / ft(S),
        }[op]()
    return bf16_round(r) if out == "bfloat16" else r.astype(out)


def as_values(out, arr):
    return arr.view(np.uint16).astype(np.uint32).__lshift__(16).view(np.float32) if out == "bfloat16" else arr


def close_enough(out, got, ref):
    """Within 2 ulp of a float64 reference, in the result's own type."""
    got = as_values(out, got).astype(np.float64)
    spacing = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23}[out]
    ulp = np.maximum(np.abs(ref), np.finfo(np.float16).tiny if out == "float16" else 1e-30)
    ulp = 2.0 ** np.floor(np.log2(ulp)) * spacing
    both_nan = np.isnan(got) & np.isnan(ref)
    with np.errstate(over="ignore"):
        in_type = ref.astype(np.float16 if out == "float16" else np.float32).astype(np.float64)
    same_inf = np.isinf(in_type) & (got == in_type)
    return bool(np.all(both_nan | same_inf | (np.abs(got - ref) <= 2 * ulp)))


def save(path, dtype, v):
    """bfloat16 values (float32 holding them) as their 16-bit patterns."""
    bits = (v.view(np.uint32) >> 16).astype(np.uint16) if dtype == "bfloat16" else v
    np.save(path, bits)


def run_case(program, work, op, dtype, form):
    rng = np.random.default_rng(CODES[dtype] * 100 + CASES[op.upper()])
    positive = op in ("log", "log2", "log10", "pow_tt", "pow_st", "div_tt") or op == "pow_ts"
    a, b = values(dtype, rng, positive), values(dtype, rng, True)
    if dtype in INTS and op in ("pow_tt", "pow_st"):
        a = (a % 5).astype(dtype)
        b = (b % 5).astype(dtype)
    save(work / "a.npy", dtype, a)
    save(work / "b.npy", dtype, b)
    out = result_type(op, dtype)
    claim = CODES[out or dtype]
    args = [program, "elementwise", "a.npy", "b.npy", str(S), str(T)]
    args += [str(CASES[op.upper()]), str(form), str(claim), "--out", "r.npy"]
    p = subprocess.run(args, cwd=work, capture_output=True, text=True, check=False)
    name = f"{op} {dtype} {'out' if form else 'new'}"
    if out is None:
        if p.returncode != 2 or "operation-error" not in p.stderr:
            sys.exit(f"{name}: expected a refusal, got {p.returncode}: {p.stderr}")
        return f"refused {name}"
    if p.returncode != 0:
        sys.exit(f"{name}: exit {p.returncode}: {p.stderr}")
    got = np.load(work / "r.npy")
    ref = reference(op, dtype, a, b, out)
    if op in UNARY_FLOAT or (op.startswith("pow") and out not in INTS):
        ok = close_enough(out, got, np.asarray(ref, dtype=np.float64))
    else:
        want = (ref.view(np.uint32) >> 16).astype(np.uint16) if out == "bfloat16" else ref
        ok = got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))
    if not ok:
        sys.exit(f"{name}: wrong\n a={a}\n b={b}\n got={got}\n want={ref}")
    return f"ok {name}"


def main():
    program, work = Path(sys.argv[1]).resolve(), Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    for op in OPS:
        for dtype in INTS + FLOATS:
            for form in (0, 1):
                print(run_case(program, work, op, dtype, form))
    print("all operations right")


if __name__ == "__main__":
    main()
