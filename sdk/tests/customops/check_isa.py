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
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_device import Built, same_as_host, sdk_variable  # noqa: E402

# Instructions per element more than the addition, at most (docs/q7-isa.md's table).
BOUNDS = {
    "div_i32": 8,
    "rem_u32": 8,
    "clamp_i32": 3,
    "div_f32": 40,
    "sqrt_f32": 40,
    "mulhs_i32": 8,
    "mulhu_u32": 8,
    "mulq16_i32": 8,
}
ELEMENTS = 4096
# The TCM copies' own instructions per element of the addition's loop, at most (docs/q7-isa.md, "DMA").
DMA_COPY_MOST = 6
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
    if op == "sqrt_f32":
        return np.sqrt(a)
    wide = a.astype(np.int64) * b.astype(np.int64)
    if op == "mulhs_i32":
        return (wide >> 32).astype(np.int32)
    if op == "mulhu_u32":
        return (
            ((a.view(np.uint32).astype(np.uint64) * b.view(np.uint32).astype(np.uint64)) >> 32).astype(np.uint32).view(np.int32)
        )
    if op == "mulq16_i32":
        return (wide >> 16).astype(np.uint64).astype(np.uint32).view(np.int32)
    if op == "mulhs_loop_end":
        return ((wide >> 32) * 3).astype(np.int32)
    return a + b


def per_element(built: Built, op: str, a: str, b: str, want: np.ndarray) -> float:
    """The op's device instructions per element, its output `want` on the host and the
    device alike."""
    stats = same_as_host(built, op, op, a, b, want=want)
    return stats["device"]["instructions"] / ELEMENTS


def special_floats(rng: np.random.Generator) -> np.ndarray:
    """Floats where a division or a square root goes wrong first: zeros, infinities, the
    largest and smallest normals, subnormals, values whose quotient or root overflows or
    underflows, and random bit patterns of every exponent (no NaN: a NaN operand's payload
    is not the point)."""
    edges = np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            1.0,
            -1.0,
            2.0,
            3.0,
            0.5,
            1e-45,
            -1e-45,
            1.1754942e-38,
            1.1754944e-38,
            3.4028235e38,
            -3.4028235e38,
            1e-38,
            1e38,
            7.0,
            0.1,
            1 / 3,
        ],
        np.float32,
    )
    bits = rng.integers(0, 2**32, ELEMENTS - edges.size, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([edges, np.where(np.isnan(bits), np.float32(1.5), bits)]).astype(np.float32)


def fpu_steps_exact(built: Built, work: Path, rng: np.random.Generator) -> None:
    """The device's division and square root (its FPU's steps, sdk/device/fpu.S) give
    NumPy's bits on special and random operands; where the result is a NaN (0/0, inf/inf,
    the root of a negative) both are NaN, the device's 0x7fc00000."""
    a, b = special_floats(rng), special_floats(rng)
    # Every pair of the edge values first.
    a[:400], b[:400] = np.repeat(a[:20], 20), np.tile(a[:20], 20)
    np.save(work / "sa.npy", a)
    np.save(work / "sb.npy", b)
    with np.errstate(all="ignore"):
        wants = {"div_f32": a / b, "sqrt_f32": np.sqrt(a)}
    for op, want in wants.items():
        got, _ = built.run(op, "sa.npy", "sb.npy")
        bits, wanted = got.view(np.uint32), want.view(np.uint32)
        bad = np.flatnonzero(np.where(np.isnan(want), bits != 0x7FC00000, bits != wanted))
        if bad.size:
            k = int(bad[0])
            sys.exit(f"{op} on the device, element {k} ({a[k]!r}, {b[k]!r}): {bits[k]:#x}, NumPy's {wanted[k]:#x}")
        print(f"ok {op}: the FPU's steps give NumPy's bits on {a.size} special and random operands, NaN as 0x7fc00000")


def dma_as_dma(lib: Built) -> None:
    """A TCM copy is a DMA on the device: its data is counted in bytes, not instructions. The
    addition's loop moves 3 x 4 bytes an element (two inputs in, one output out); the
    copies' own instructions (span walk, translates) stay a few per element, where moving
    the words as core instructions cost about 18."""
    _, stats = lib.run("add_i32", "ip.npy", "iq.npy")
    core = stats["per_core"][0]
    moved = core["counts"]["tcm_in_bytes"] + core["counts"]["tcm_out_bytes"]
    copies = core["device"]["copies"] / ELEMENTS
    if moved != 12 * ELEMENTS or copies > DMA_COPY_MOST:
        sys.exit(f"add_i32: {moved} bytes moved, {copies:.2f} copy instructions per element: {core}")
    _, text = lib.run("add_i32", "ip.npy", "iq.npy", "--stats", stats=False)
    if f"which moved {moved} bytes by DMA" not in text:
        sys.exit(f"--stats does not give the DMA's bytes:\n{text}")
    print(f"ok the TCM copies: {moved} bytes by DMA, {copies:.2f} of the core's instructions per element")


def main() -> None:
    ntx, src, work = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ["NT_QEMU_COUNT_PLUGIN"] = sdk_variable(ntx, "count_plugin")
    rng = np.random.default_rng(7)
    ints = {"a": rng.integers(-(2**31), 2**31, ELEMENTS, dtype=np.int32)}
    ints["b"] = rng.integers(1, 2**16, ELEMENTS, dtype=np.int32) * rng.choice(np.array([-1, 1], np.int32), ELEMENTS)
    # Full-range operands for the products, every pair of the edges first.
    edges = np.array([0, 1, -1, 2, -2, 65535, 65536, -65536, 2**31 - 1, -(2**31), 46341, -46341], np.int32)
    ints["p"] = rng.integers(-(2**31), 2**31, ELEMENTS, dtype=np.int32)
    ints["q"] = rng.integers(-(2**31), 2**31, ELEMENTS, dtype=np.int32)
    ints["p"][: edges.size**2], ints["q"][: edges.size**2] = np.repeat(edges, edges.size), np.tile(edges, edges.size)
    floats = {"a": rng.standard_normal(ELEMENTS, dtype=np.float32), "b": rng.standard_normal(ELEMENTS, dtype=np.float32)}
    floats["root"] = np.abs(floats["a"])
    for name, arrays in (("i", ints), ("f", floats)):
        for k, v in arrays.items():
            np.save(work / f"{name}{k}.npy", v)
    built = Built(ntx, src, work, "isa_costs", "isa_costs.cpp", "isa_costs_shape.cpp", "add_i32", "ia.npy", "ib.npy")
    products = Built(ntx, src, work, "isa_products", "isa_products.cpp", "isa_products_shape.cpp", "add_i32", "ip.npy", "iq.npy")
    measured = [(built, op) for op in ("add_i32", "div_i32", "rem_u32", "clamp_i32", "add_f32", "div_f32", "sqrt_f32")]
    measured += [(products, op) for op in ("add_i32", "mulhs_i32", "mulhu_u32", "mulq16_i32")]
    base = {}
    for lib, op in measured:
        kind = "f" if op.endswith("f32") else "i"
        arrays = floats if kind == "f" else ints
        first, second = ("root", "b") if op == "sqrt_f32" else ("p", "q") if lib is products else ("a", "b")
        want = numpy_value(op, arrays[first], arrays[second])
        per = per_element(lib, op, f"{kind}{first}.npy", f"{kind}{second}.npy", want)
        if op.startswith("add"):
            base[kind] = per
            continue
        more = per - base[kind]
        bound = BOUNDS.get(op)
        if bound is not None and more > bound:
            sys.exit(f"{op}: {more:.2f} instructions per element more than the addition, past {bound}")
        said = f"at most {bound}" if bound is not None else "no bound yet (docs/q7-isa.md)"
        print(f"ok {op}: NumPy's bits, {more:.2f} instructions per element more than the addition ({said})")
    # A MULSH that ends a zero-overhead loop: the loop runs on (the runtime completes it).
    same_as_host(
        products, "mulhs_loop_end", "mulhs_loop_end", "ip.npy", "iq.npy", want=numpy_value("mulhs_loop_end", ints["p"], ints["q"])
    )
    print("ok mulhs_loop_end: a MULSH at a zero-overhead loop's end, completed by the runtime, loops on")
    # Any other illegal instruction ends the program as before the handler.
    crashed = [products.outcome("trap_i32", "ip.npy", "iq.npy", device=d) for d in (True, False)]
    p = subprocess.run(
        [products.program, "trap_i32", "ip.npy", "iq.npy", "--device", products.elf, "--translation", products.translation],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    if crashed[0] != crashed[1] or crashed[0][0] == 0 or "kernel-crashed" not in p.stderr:
        sys.exit(f"trap_i32: the device {crashed[0][0]}, the host {crashed[1][0]}, not the same crash:\n{p.stderr}")
    print(f"ok trap_i32: another illegal instruction still ends the program (status {crashed[0][0]}, as the host's)")
    dma_as_dma(products)
    fpu_steps_exact(built, work, rng)
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
