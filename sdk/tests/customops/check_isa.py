"""What an operation costs per element on the emulated Q7 (isa_costs.cpp by an installed
`ntx op run --device`): the same TCM loop with only the operation changed, each op's
instructions per element less its addition's. The Q7's own options (docs/q7-isa.md)
make an int32 division or remainder one instruction (QUOS, REMU) and a clamp two (MIN,
MAX); each figure is held to the bound docs/q7-isa.md gives, and every output is NumPy's
bit for bit (and the host run's).

Usage: check_isa.py NTX SOURCES_DIR WORK_DIR. Prints one line per check and "isa costs
right" at the end; exits 1 at the first failure.
"""

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_device import Built, same_as_host, sdk_variable  # noqa: E402

# Instructions per element more than the addition, at most (docs/q7-isa.md's table).
BOUNDS = {"div_i32": 8, "rem_u32": 8, "clamp_i32": 3}
ELEMENTS = 4096
# What --stats and --profile say their counts are (the runtime's COUNTS_ARE).
LABEL = "instructions retired on the Q7's scalar ISA"


def numpy_value(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """What the op computes, in NumPy: C's division truncates toward zero."""
    if op == "div_i32":
        return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(np.int32)
    if op == "rem_u32":
        return (a.view(np.uint32) % b.view(np.uint32)).view(np.int32)
    if op == "clamp_i32":
        return np.minimum(np.maximum(a, -b), b)
    if op == "div_f32":
        return a / b
    return a + b


def per_element(built: Built, op: str, a: str, b: str, want: np.ndarray) -> float:
    """The op's device instructions per element, its output `want` on the host and the
    device alike."""
    stats = same_as_host(built, op, op, a, b, want=want)
    return stats["device"]["instructions"] / ELEMENTS


def main() -> None:
    ntx, src, work = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ["NT_QEMU_COUNT_PLUGIN"] = sdk_variable(ntx, "count_plugin")
    rng = np.random.default_rng(7)
    ints = {"a": rng.integers(-(2**31), 2**31, ELEMENTS, dtype=np.int32)}
    ints["b"] = rng.integers(1, 2**16, ELEMENTS, dtype=np.int32) * rng.choice(np.array([-1, 1], np.int32), ELEMENTS)
    floats = {"a": rng.standard_normal(ELEMENTS, dtype=np.float32), "b": rng.standard_normal(ELEMENTS, dtype=np.float32)}
    for name, arrays in (("i", ints), ("f", floats)):
        for k, v in arrays.items():
            np.save(work / f"{name}{k}.npy", v)
    built = Built(ntx, src, work, "isa_costs", "isa_costs.cpp", "isa_costs_shape.cpp", "add_i32", "ia.npy", "ib.npy")
    base = {}
    for op in ("add_i32", "div_i32", "rem_u32", "clamp_i32", "add_f32", "div_f32"):
        kind = "f" if op.endswith("f32") else "i"
        arrays = floats if kind == "f" else ints
        per = per_element(built, op, f"{kind}a.npy", f"{kind}b.npy", numpy_value(op, arrays["a"], arrays["b"]))
        if op.startswith("add"):
            base[kind] = per
            continue
        more = per - base[kind]
        bound = BOUNDS.get(op)
        if bound is not None and more > bound:
            sys.exit(f"{op}: {more:.2f} instructions per element more than the addition, past {bound}")
        said = f"at most {bound}" if bound is not None else "no bound yet (docs/q7-isa.md)"
        print(f"ok {op}: NumPy's bits, {more:.2f} instructions per element more than the addition ({said})")
    # What the counts are, said under them in --stats and in --profile's listing.
    _, text = built.run("add_i32", "ia.npy", "ib.npy", "--stats", "--profile", work / "profile", stats=False)
    listing = (work / "profile" / "profile.txt").read_text()
    for where, said in (("--stats", text), ("--profile", listing)):
        if LABEL not in said:
            sys.exit(f"{where} does not say what its counts are:\n{said}")
    print("ok --stats and --profile say the counts are instructions on the scalar ISA, not cycles")
    print("isa costs right")


if __name__ == "__main__":
    main()
