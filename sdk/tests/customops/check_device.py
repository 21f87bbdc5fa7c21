"""Our kernels (sdk/tests/customops) on the emulated Q7 by an installed `ntx op run
--device`: the same bytes as the host run (relu through the accessor, TCM, multicore on 1,
2 and 8 cores; the IoU-style boxes kernel with <algorithm> and printf, its text too), the
instructions in --stats=json, and a kernel the device cannot build refused by name with
exit status 1.

Usage: check_device.py NTX SOURCES_DIR WORK_DIR. Prints one line per check and "device
runs right" at the end; exits 1 at the first failure.
"""

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cases  # noqa: E402  (misuse.cpp's cases by name)
import check_ops  # noqa: E402  (its value generators and operation table)
import device_misuse  # noqa: E402  (misuse.cpp's cases on the emulated Q7)
import device_stack  # noqa: E402  (the stack the device runs a kernel on)
from device_build import Built, ntx_device, same_as_host  # noqa: E402


def profiled(built, name, *args, cores=1):
    """--profile DIR: profile.json's lines' and functions' self counts and its stacks each
    sum to --stats's instructions, and so do the author lines' attributed counts with the
    SDK's share; profile.txt and profile.svg written. The profile."""
    out, stats = built.run(*args, "--profile", built.work / "profile", cores=cores)
    p = json.loads((built.work / "profile" / "profile.json").read_text())
    want = stats["device"]["instructions"] if cores > 1 else stats["per_core"][0]["device"]["instructions"]
    sums = {
        "total": p["instructions"],
        "lines": sum(x["self"] for x in p["lines"]),
        "functions": sum(x["self"] for x in p["functions"]),
        "stacks": sum(x["instructions"] for x in p["stacks"]),
        "author lines and the SDK's share": sum(x["attributed"] for x in p["lines"] if x["author"]) + p["sdk"],
    }
    if set(sums.values()) != {want}:
        sys.exit(f"{name} --profile on {cores} cores: {sums}, not --stats's {want}")
    svg = (built.work / "profile" / "profile.svg").read_text()
    if "<svg" not in svg or args[0] not in svg:
        sys.exit(f"{name} --profile: profile.svg is no flame graph naming {args[0]}")
    print(f"ok {name} --profile on {cores} core(s): lines, functions and stacks sum to {want}")
    return p


def copies_at_their_lines(p, kernel, work, calls):
    """On several cores as on one: the lines holding each of `calls`' markers count,
    inclusive, what its function ran, to 1%, beyond their own instructions (the arguments'
    set-up); the SDK under no author line under 5%; profile.svg's total and its SDK frame
    are profile.json's. `calls`: (the markers of one function's call lines, the function)."""
    text = kernel.read_text().splitlines()
    lines = {x["line"]: x for x in p["lines"] if Path(x["file"]) == kernel}
    functions = p["functions"]
    for markers, name in calls:
        at = [1 + next(k for k, t in enumerate(text) if marker in t) for marker in markers]
        ran = next(f["inclusive"] for f in functions if name in f["function"])
        there = sum(lines[line]["inclusive"] - lines[line]["self"] for line in at)
        if abs(there - ran) * 100 > ran:
            sys.exit(f"{kernel.name}:{at} ({markers}) count {there} past their own, where {name} ran {ran}")
    if p["sdk"] * 20 > p["instructions"]:
        sys.exit(f"the SDK under no author line is {p['sdk']} of {p['instructions']}")
    svg = (work / "profile" / "profile.svg").read_text()
    total = re.search(r"<title>all \(([\d,]+) instructions", svg)
    if not total or int(total.group(1).replace(",", "")) != p["instructions"]:
        sys.exit(f"profile.svg's total is not profile.json's {p['instructions']}: {total and total.group(0)}")
    said = (work / "profile" / "profile.txt").read_text().split("\n", 1)[0]
    if f": {p['instructions']} instructions on the emulated Q7" not in said:
        sys.exit(f"profile.txt's total is not profile.json's {p['instructions']}: {said!r}")
    print(
        f"ok {kernel.name}: each copy's function counted at its lines (to 1%); profile.svg's and .txt's total {p['instructions']}"
    )


def hottest(p, kernel, marker):
    """The author line of `kernel` that ran the most (inclusive), and the line holding `marker`."""
    line = 1 + next(k for k, t in enumerate(kernel.read_text().splitlines()) if marker in t)
    mine = [x for x in p["lines"] if Path(x["file"]) == kernel and x["line"] > 0 and x["author"]]
    return (max(mine, key=lambda x: x["inclusive"]) if mine else None), line


def profile_checks(relu, tcm, src):
    """The accessor relu's hottest line of relu.cpp, counting what it ran through the SDK's
    inlined accessors and its calls (inclusive), is its loop body, shown in the listing; the
    TCM relu's profile over two cores sums the cores; --profile without --device refused."""
    p = profiled(relu, "relu_forward", "relu_forward", "x.npy")
    kernel = src / "relu.cpp"
    top, body = hottest(p, kernel, "out[r][c] = in[r][c]")
    if not top or top["line"] != body:
        sys.exit(f"relu.cpp's hottest line (inclusive) is not its loop body, line {body}: {top}")
    listing = (relu.work / "profile" / "profile.txt").read_text()
    if not any(f" {body}  " in t and "out[r][c]" in t and t.split()[0].isdigit() for t in listing.splitlines()):
        sys.exit("profile.txt does not show relu.cpp's loop body with its count")
    top = listing.split("The author's lines that ran the most (inclusive, at most 10):\n", 1)[-1].splitlines()[0]
    if f"relu.cpp:{body}  out[r][c] = in[r][c]" not in top:
        sys.exit(f"profile.txt does not open with relu.cpp's loop body as its top line: {top!r}")
    if not any(s["stack"].endswith("relu_forward(at::Tensor const&)") for s in p["stacks"]):
        sys.exit(f"no stack ends in the kernel: {p['stacks'][:5]}")
    print(f"ok the accessor relu's hottest line of relu.cpp is in its inner loop (lines {body - 1}, {body})")
    multi = profiled(tcm, "relu_multicore", "relu_multicore", "odd.npy", cores=8)
    calls = [(["src.tensor_to_tcm"], "::tensor_to_tcm<"), (["dst.tcm_to_tensor"], "::tcm_to_tensor<")]
    copies_at_their_lines(multi, src / "relu_tcm.cpp", tcm.work, [*calls, (["relu_range(input, out, first"], "relu_range(")])
    cmd = [relu.program, "relu_forward", "x.npy", "--profile", relu.work / "nowhere"]
    r = subprocess.run(cmd, cwd=relu.work, capture_output=True, text=True, check=False)
    if r.returncode != 1 or "give --device too" not in r.stderr:
        sys.exit(f"--profile without --device: exit {r.returncode}: {r.stderr!r}")
    print("ok --profile without --device refused")


def translate_costs(relu, work, stats, budget_file):
    """What a hit in window 0 and in window 1 cost on the device, from two runs of the
    accessor relu: nt-bench's counts for those paths (bench/budget.toml, which holds them)."""
    np.save(work / "small.npy", (np.arange(16, dtype=np.float32) - 7.5).reshape(4, 4))
    _, small_stats = relu.run("relu_forward", "small.npy")
    big, small = stats["per_core"][0], small_stats["per_core"][0]
    budget = tomllib.loads(budget_file.read_text())
    if big["refills"] != small["refills"] or any(c["hits"][2:] != [0, 0, 0] for c in (big, small)):
        sys.exit(f"relu's translate calls were not hits in windows 0 and 1 besides the same refills: {big}, {small}")
    hits = [big["hits"][k] - small["hits"][k] for k in (0, 1)]
    cost = [budget[f"translate-hit-{k}.low"] for k in (0, 1)]
    grew = big["device"]["translation"] - small["device"]["translation"]
    if grew != hits[0] * cost[0] + hits[1] * cost[1]:
        sys.exit(
            f"{hits[0]} more hits in window 0 and {hits[1]} in window 1 cost {grew} instructions on the device, "
            f"not {cost} each as nt-bench counts them (bench/budget.toml holds its counts: lower it if they fell)"
        )
    print(f"ok a translate hit in window 0 costs {cost[0]} instructions, in window 1 {cost[1]}: nt-bench's counts")


def boxes(ntx, src, work):
    """The IoU-style kernel (<algorithm>, TCM, printf): NumPy's areas, the host's text."""
    rng = np.random.default_rng(7)
    lo = rng.uniform(0, 10, (300, 2)).astype(np.float32)
    a = np.concatenate([lo, lo + rng.uniform(0, 4, (300, 2)).astype(np.float32)], axis=1)
    lo = rng.uniform(0, 10, (300, 2)).astype(np.float32)
    b = np.concatenate([lo, lo + rng.uniform(0, 4, (300, 2)).astype(np.float32)], axis=1)
    np.save(work / "a.npy", a)
    np.save(work / "b.npy", b)
    built = Built(ntx, src, work, "boxes", "boxes.cpp", "boxes_shape.cpp", "box_overlap", "a.npy", "b.npy")
    zero = np.float32(0)
    w = np.maximum(zero, np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]))
    h = np.maximum(zero, np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]))
    host, host_text = built.run("box_overlap", "a.npy", "b.npy", device=False, stats=False)
    got, text = built.run("box_overlap", "a.npy", "b.npy", stats=False)
    if got.tobytes() != host.tobytes() or not np.array_equal(got, w * h):
        sys.exit(f"box_overlap: the device gave {got[:8]}, the host {host[:8]}, NumPy {(w * h)[:8]}")
    if text != host_text or not text.startswith("boxes 300, overlapping "):
        sys.exit(f"box_overlap printed {text!r} on the device, {host_text!r} on the host")
    # Under --stats=json the text goes to stderr and is checked as the host's is (the
    # device ring's warning): the device's printf reaches the runner through the core. Its
    # TCM blocks are watched as on the host: nothing said unchecked.
    kinds = [sorted(r["kind"] for r in built.run("box_overlap", "a.npy", "b.npy", device=d)[1]["reports"]) for d in (False, True)]
    if kinds[0] != kinds[1] or not any(k.startswith("printf") for k in kinds[1]):
        sys.exit(f"box_overlap's reports under --stats=json: host {kinds[0]}, device {kinds[1]}")
    print(f"ok box_overlap (<algorithm>, TCM, printf): NumPy's areas, the host's text {text.strip()!r}")


def giou(ntx, src, work):
    """The generalized IoU loss on 8 cores through TCM (giou.cpp): NumPy's bytes, the host's;
    its profile charges both boxes' copies and the output's to their lines."""
    rng = np.random.default_rng(11)
    pairs = []
    for _ in range(2):
        lo = rng.uniform(0, 10, (4100, 2)).astype(np.float32)
        pairs.append(np.concatenate([lo, lo + rng.uniform(0.5, 4, (4100, 2)).astype(np.float32)], axis=1))
    a, b = pairs
    np.save(work / "ga.npy", a)
    np.save(work / "gb.npy", b)
    iw = np.maximum(np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0]), np.float32(0))
    ih = np.maximum(np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1]), np.float32(0))
    inter = iw * ih
    uni = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    hull = (np.maximum(a[:, 2], b[:, 2]) - np.minimum(a[:, 0], b[:, 0])) * (
        np.maximum(a[:, 3], b[:, 3]) - np.minimum(a[:, 1], b[:, 1])
    )
    want = np.float32(1) - (inter / uni - (hull - uni) / hull)
    built = Built(ntx, src, work, "giou", "giou.cpp", "giou_shape.cpp", "giou_multicore", "ga.npy", "gb.npy", "--cores", "8")
    same_as_host(built, "giou_multicore", "giou_multicore", "ga.npy", "gb.npy", cores=8, want=want)
    p = profiled(built, "giou_multicore", "giou_multicore", "ga.npy", "gb.npy", cores=8)
    calls = [(["sa.tensor_to_tcm", "sb.tensor_to_tcm"], "::tensor_to_tcm<"), (["so.tcm_to_tensor"], "::tcm_to_tensor<")]
    copies_at_their_lines(p, src / "giou.cpp", work, calls)


def hbm_calls(ntx, src, work):
    """The calls on HBM beyond the guide (hbm_calls.cpp): neuron_memcpy through a block of
    neuron_hbm_allocate's gives NumPy's 2x; the heap gives 31 blocks beside the kernel's
    output tensor (its 32 descriptors), and one more once one is given back; a copy past the
    tensor and a block freed twice are reported at the same line; the host and the device alike."""
    x = np.arange(-300, 300, dtype=np.float32) / np.float32(8)
    np.save(work / "line.npy", x)
    built = Built(ntx, src, work, "hbm_calls", "hbm_calls.cpp", "hbm_calls_shape.cpp", "doubled_through_hbm", "line.npy", 0)
    for device in (False, True):
        got, _ = built.run("doubled_through_hbm", "line.npy", 0, device=device, stats=False)
        blocks, _ = built.run("hbm_blocks", "line.npy", device=device, stats=False)
        if got.tobytes() != (x * np.float32(2)).tobytes() or blocks.tolist() != [31.0, 1.0]:
            sys.exit(f"hbm_calls (device {device}): {got[:6]} against {x[:6] * 2}, blocks {blocks}")
        heap, _ = built.run("heap_reused", "line.npy", device=device, stats=False)
        total = np.float32(0)
        for v in x:
            total = np.float32(total + v)
        if heap.tolist() != [10.0, float(total)]:
            sys.exit(f"heap_reused (device {device}): {heap}, not 10 buffers and {total}")
    print("ok neuron_hbm_allocate, neuron_memcpy, q7_data_ptr: NumPy's values, 31 blocks beside the output, on both")
    print("ok malloc's buffers given back and taken again, ten of 6 KiB in a 10 KiB heap, on both")
    for which, kind in ((1, "hbm-copy-out-of-bounds"), (2, "hbm-free-foreign")):
        said = []
        for device in ([], ["--device", built.elf, "--translation", built.translation]):
            cmd = [built.program, "doubled_through_hbm", "line.npy", str(which), *device]
            p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
            m = re.search(rf"error\[{kind}\] op doubled_through_hbm, core 0: .*, at (.*)", p.stderr)
            if p.returncode != 2 or not m or "hbm_calls.cpp:" not in m.group(1):
                sys.exit(f"{kind} {device}: exit {p.returncode}\n{p.stderr}")
            said.append(m.group(1))
        if said[0] != said[1]:
            sys.exit(f"{kind}: the host said {said[0]!r}, the device {said[1]!r}")
        print(f"ok {kind} on the host and the device, at {said[0]}")


def sdk_variable(ntx, name):
    """A variable of the device SDK's pkg-config file (the installed tree's)."""
    out = subprocess.run(
        ["pkg-config", f"--variable={name}", "neuron_customop_device"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PKG_CONFIG_PATH": str(Path(ntx).resolve().parent.parent / "lib" / "pkgconfig")},
    )
    return out.stdout.strip()


def original_shaped(ntx, src, work, relu):
    """--translation with an object of the contract's functions only (no neuron_translate_span,
    as the original's): the device runtime's span by lookup; the host's bytes. An object
    lacking neuron_translate is refused, naming the object."""
    tool = sdk_variable(ntx, "llvm_objcopy")
    four = work / "four-functions.o"
    subprocess.run([tool, "--localize-symbol=neuron_translate_span", relu.translation, four], check=True)
    for name, compute, shape, op, arg in (
        ("relu-four", "relu.cpp", "relu_shape.cpp", "relu_forward", "x.npy"),
        ("tcm-four", "relu_tcm.cpp", "relu_tcm_shape.cpp", "relu_tcm", "odd.npy"),
    ):
        built = Built(ntx, src, work, name, compute, shape, "--translation", four, op, arg, "--out", "four.npy")
        want, _ = built.run(op, arg, device=False)
        if np.load(work / "four.npy").tobytes() != want.tobytes():
            sys.exit(f"{op} with the contract's functions only: not the host's bytes")
        print(f"ok {op} with a translation object of the contract's functions only: the host's bytes")
    bare = work / "no-translate.o"
    subprocess.run([tool, "--localize-symbol=_Z16neuron_translatePvy", four, bare], check=True)
    p = ntx_device(
        ntx, src, work, "relu-bare", "relu.cpp", "relu_shape.cpp", "--translation", bare, "relu_forward", "x.npy", code=1
    )
    if f"--translation {bare}: does not define neuron_translate" not in p.stderr:
        sys.exit(f"a translation object without neuron_translate: {p.stderr!r}")
    print("ok a translation object without neuron_translate is refused, naming it")


def soft_float(ntx, src, work):
    """Float division, int64-to-float conversion and double arithmetic on the device
    (compiler_builtins' routines in the device runtime): the host's bits."""
    x = np.load(work / "x.npy")[:7, :9] * np.float32(0.25)
    x[3] = -np.abs(x[3])
    np.save(work / "small.npy", x)
    np.save(work / "ints.npy", np.arange(-6, 6, dtype=np.int32))
    idioms = Built(ntx, src, work, "idioms", "idioms.cpp", "idioms_shape.cpp", "bits", "ints.npy")
    same_as_host(idioms, "row_stats (ATen idioms, float division)", "row_stats", "small.npy")
    # Its divisions are the division's line's: __divsf3's instructions counted there.
    p = profiled(idioms, "row_stats", "row_stats", "small.npy")
    top, division = hottest(p, src / "idioms.cpp", "v / static_cast<float>(cols)")
    divsf3 = sum(f["self"] for f in p["functions"] if "divsf3" in f["function"])
    if not top or top["line"] != division or divsf3 == 0 or top["inclusive"] < divsf3:
        sys.exit(f"row_stats: the division's line {division} is not the hottest with __divsf3's {divsf3}: {top}")
    print(f"ok row_stats' hottest line is its division, {top['inclusive']} instructions with __divsf3's {divsf3}")
    same_as_host(idioms, "bits (ATen idioms, a vector of sizes)", "bits", "ints.npy")
    misc = Built(ntx, src, work, "misc", "misc.cpp", "misc_shape.cpp", "negate", "x.npy")
    same_as_host(misc, "scale (double arithmetic)", "scale", 20, 30, "x.npy", 0.3)
    for op in ("negate", "factories", "window_move"):
        same_as_host(misc, op, op, "x.npy")
    np.save(work / "pair.npy", np.arange(-300, 300, dtype=np.int32).reshape(20, 30))
    same_as_host(misc, "stream_add (stream accessors)", "stream_add", "pair.npy", "pair.npy")


def ops_on_device(ntx, src, work):
    """Every operation of ops.cpp on float32 (the kernel converts Scalars through doubles):
    the host's bytes, or the same refusal."""
    built = Built(ntx, src, work, "ops", "ops.cpp", "ops_shape.cpp", "none", code=1)
    for op in check_ops.OPS:
        k = check_ops.CASES[op.upper()]
        rng = np.random.default_rng(k)
        a, b = check_ops.values("float32", rng, True), check_ops.values("float32", rng, True)
        np.save(work / "a.npy", a)
        np.save(work / "b.npy", b)
        claim = check_ops.CODES[check_ops.result_type(op, "float32") or "float32"]
        args = ["elementwise", "a.npy", "b.npy", check_ops.S, check_ops.T, k, 0, claim]
        host = built.outcome(*args, device=False)
        got = built.outcome(*args)
        if got != host:
            sys.exit(f"{op} float32: the device gave {got[0]} {got[1][:64]!r}, the host {host[0]} {host[1][:64]!r}")
    print(f"ok every operation of ops.cpp on float32 ({len(check_ops.OPS)}): the host's bytes or refusals")


def refusals(ntx, src, work):
    """What the emulated device cannot build is refused, naming the construct and the line:
    a throw (the device's compile accepts it, the emulation has no unwinder: said so) and
    _Float16 (the device's compile refuses it). The throw runs on the host, with a
    device-lacks warning for the C++ ABI's exception entry points."""
    throws = "the device's compile accepts (its flags have no -fno-exceptions"
    for name, body, words in (
        ("throws", '    if (x.numel() == 0)\n        throw std::runtime_error("empty");\n', throws),
        ("half", "    _Float16 h = 1;\n    (void)h;\n", "_Float16 is not supported on this target"),
    ):
        kernel = work / f"{name}.cpp"
        kernel.write_text(
            "#include <stdexcept>\n#include <torch/torch.h>\n"
            f"torch::Tensor passes(const torch::Tensor &x)\n{{\n{body}    return x;\n}}\n"
        )
        p = ntx_device(ntx, src, work, name, kernel, "failures_shape.cpp", "passes", "x.npy", code=1)
        if f"{name}.cpp:" not in p.stderr or words not in p.stderr:
            sys.exit(f"{name}: {p.stderr!r}")
        print(f"ok {words!r} refused with its line")
    cmd = [ntx, "op", "run", "--compute", work / "throws.cpp", "--shape", src / "failures_shape.cpp", "passes", "x.npy"]
    p = subprocess.run(
        [*map(str, cmd), "--build-dir", str(work / "throws_host")], cwd=work, capture_output=True, text=True, check=False
    )
    if p.returncode != 0 or "warning[device-lacks]" not in p.stderr or "__cxa_throw" not in p.stderr:
        sys.exit(f"a throw on the host run: exit {p.returncode}\n{p.stderr}")
    print("ok a kernel that can throw runs on the host, warned that the device runtime lacks __cxa_throw")


def misuse_on_device(ntx, src, work):
    """A misuse on the emulated Q7 is the host's report: an accessor read after its tensor is gone."""
    case = cases.read("misuse_cases.h")
    m = Built(ntx, src, work, "misuse", "misuse.cpp", "misuse_shape.cpp", "misuse", "x.npy", case["NOTHING"])
    device_misuse.check(m, case, work)


def overloads(ntx, src, work):
    """A helper named like its kernel and a kernel overloaded on its scalar: the host run
    and the device call the overload the schema declares (scale's float one), the same
    bytes; the assembly's raw debug bytes (not UTF-8) pass through the device's build."""
    x = (np.arange(12, dtype=np.float32) * 40 - 220).reshape(3, 4)
    np.save(work / "wide.npy", x)
    built = Built(ntx, src, work, "overloads", "overloads.cpp", "overloads_shape.cpp", "relu", "wide.npy")
    want = {"relu": np.where(x > 100, x, np.where(x < -100, -1, np.maximum(x, 0))), "scale": x * np.float32(2.5)}
    for op, args in (("relu", ["wide.npy"]), ("scale", ["wide.npy", "2.5"])):
        host, _ = built.run(op, *args, device=False)
        got, _ = built.run(op, *args)
        if host.tobytes() != want[op].astype(np.float32).tobytes() or got.tobytes() != host.tobytes():
            sys.exit(f"overloads {op}: host {host.ravel()}, device {got.ravel()}, want {want[op].ravel()}")
    print("ok overloaded kernel names: the schema's overload on the host and the device, the same bytes")


def device_model(ntx, src, work):
    """device_model.cpp: a call's arguments in the device's order, the device's unsigned
    char, and code clang accepts (a designated array initializer, __builtin_assume, a
    vector type, an in-class explicit specialization): the device's values on the host run
    and on --device alike."""
    np.save(work / "model.npy", np.array([10, 1, 200, 3, 4], np.float32))
    built = Built(ntx, src, work, "device_model", "device_model.cpp", "device_model_shape.cpp", "device_model", "model.npy")
    want = np.array([9, 200, 5, 8, 10, 2], np.float32)
    host, _ = built.run("device_model", "model.npy", device=False)
    got, _ = built.run("device_model", "model.npy")
    if host.tobytes() != want.tobytes() or got.tobytes() != want.tobytes():
        sys.exit(f"device_model: host {host}, device {got}, the device's values {want}")
    print("ok the device's argument order, char and front end on the host run and --device")
    # The data model: an FNV hash over unsigned long, the widths of long, size_t, pointers
    # and long double, a struct's double and long long at 8 bytes, a long double sum at
    # double's precision, float without excess precision, an unsigned long product that
    # wraps at 32 bits, long long's alignment. x86-64 gives 918, 8, 8, 8, 16, 16, 8, 10, 1,
    # 10000000, 8.
    np.save(work / "data_model.npy", np.array([100000, 1, 1e30], np.float32))
    want = np.array([222, 4, 4, 4, 8, 16, 8, 0, 1, 1410065, 8], np.int32)
    host, _ = built.run("data_model", "data_model.npy", device=False)
    got, _ = built.run("data_model", "data_model.npy")
    if host.tobytes() != want.tobytes() or got.tobytes() != want.tobytes():
        sys.exit(f"data_model: host {host}, device {got}, the device's values {want}")
    print("ok the device's data model (ILP32, long double as double, 8-byte double) on the host run and --device")
    host, stats = built.run("invalid_nan", "data_model.npy", device=False)
    got, _ = built.run("invalid_nan", "data_model.npy")
    bits = [hex(int(b)) for b in (*host.view(np.uint32), *got.view(np.uint32))]
    said = [r for r in stats["reports"] if r["kind"] == "x86-default-nan"]
    if bits != ["0x3f800000", "0xffc00000", "0x3f800000", "0x7fc00000"] or len(said) != 1 or said[0]["index"] != "1":
        sys.exit(f"invalid_nan: host and device bits {bits}, the host's reports {stats['reports']}")
    print("ok x86-default-nan: an invalid operation's NaN is 0x7fc00000 on --device, 0xffc00000 on the host, reported")


def main():
    ntx, src, work = sys.argv[1], Path(sys.argv[2]).resolve(), Path(sys.argv[3]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    # The op programs run here count by the SDK's qemu plugin, as ntx runs them.
    os.environ["NT_QEMU_COUNT_PLUGIN"] = sdk_variable(ntx, "count_plugin")
    x = (np.arange(600, dtype=np.float32) - 301.5).reshape(20, 30)
    np.save(work / "x.npy", x)
    np.save(work / "g.npy", np.linspace(-1, 1, 600, dtype=np.float32).reshape(20, 30))
    odd = (np.arange(3001, dtype=np.float32) - 1500).reshape(1, 3001)
    np.save(work / "odd.npy", odd)
    relu = Built(ntx, src, work, "relu", "relu.cpp", "relu_shape.cpp", "relu_forward", "x.npy")
    stats = same_as_host(relu, "relu_forward (accessor)", "relu_forward", "x.npy")
    if stats["per_core"][0]["hits"] == [0, 0, 0, 0, 0]:
        sys.exit("the device's translate calls were not counted by window")
    translate_costs(relu, work, stats, src.parents[2] / "bench" / "budget.toml")
    same_as_host(relu, "relu_backward (accessor)", "relu_backward", "g.npy", "x.npy")
    tcm = Built(ntx, src, work, "tcm", "relu_tcm.cpp", "relu_tcm_shape.cpp", "relu_tcm", "odd.npy")
    same_as_host(tcm, "relu_tcm", "relu_tcm", "odd.npy")
    for cores in (2, 8):
        same_as_host(tcm, "relu_multicore", "relu_multicore", "odd.npy", cores=cores)
    # One core: get_cpu_count() is 8 on the device as here, the same refusal on both.
    got = [tcm.outcome("relu_multicore", "odd.npy", device=d) for d in (True, False)]
    if got[0] != got[1] or got[0][0] != 2:
        sys.exit(f"relu_multicore on 1 core: the device {got[0][0]}, the host {got[1][0]}, not 2 on both")
    p = subprocess.run([tcm.program, "relu_multicore", "odd.npy"], cwd=work, capture_output=True, text=True, check=False)
    if "output-unwritten" not in p.stderr or "it asked get_cpu_count(), which says 8 on one core" not in p.stderr:
        sys.exit(f"relu_multicore on 1 core does not say why its output is partly unwritten: {p.stderr!r}")
    print("ok relu_multicore on 1 core: get_cpu_count() is 8 on the device and the host, exit 2 on both, said")
    profile_checks(relu, tcm, src)
    boxes(ntx, src, work)
    giou(ntx, src, work)
    hbm_calls(ntx, src, work)
    original_shaped(ntx, src, work, relu)
    select = Built(ntx, src, work, "select", "float_select.cpp", "float_select_shape.cpp", "above_first", "x.npy")
    same_as_host(select, "above_first (a select of two float constants, references)", "above_first", "x.npy")
    refusals(ntx, src, work)
    device_stack.check(ntx, src, work)
    misuse_on_device(ntx, src, work)
    overloads(ntx, src, work)
    device_model(ntx, src, work)
    soft_float(ntx, src, work)
    ops_on_device(ntx, src, work)
    lacks = work / "lacks.cpp"
    lacks.write_text(
        "#include <stdio.h>\n#include <torch/torch.h>\ntorch::Tensor passes(const torch::Tensor &x)\n"
        '{\n    FILE *f = fopen("x.npy", "rb");\n    if (f)\n        fclose(f);\n    return x;\n}\n'
    )
    p = ntx_device(ntx, src, work, "lacks", lacks, "failures_shape.cpp", "passes", "x.npy", code=1)
    if "cannot build this kernel" not in p.stderr or "fopen: not in the device runtime" not in p.stderr:
        sys.exit(f"a kernel calling fopen(): {p.stderr!r}")
    print("ok a kernel the device cannot build is refused, the symbols named (exit 1)")
    spins, spins_shape = work / "spins.cpp", work / "spins_shape.cpp"
    spins.write_text(
        "#include <torch/torch.h>\ntorch::Tensor spins(const torch::Tensor &x)\n"
        "{\n    volatile unsigned n = 0;\n    for (;;)\n        n = n + 1;\n    return x;\n}\n"
    )
    spins_shape.write_text(
        '#include <torch/torch.h>\n#include "torchneuron/register.h"\n'
        "torch::Tensor like(const torch::Tensor &x) { return torch::zeros(x.sizes(), torch::kFloat); }\n"
        'NEURON_LIBRARY(spin_ops, m) { m.def("spins", &like, "spins"); }\n'
    )
    p = ntx_device(ntx, src, work, "spins", spins, spins_shape, "spins", "x.npy", "--timeout", "1", code=4)
    if "error[timeout] op spins, core 0: the kernel on core 0 still ran on the emulated Q7 after 1 s" not in p.stderr:
        sys.exit(f"a kernel spinning on the device past --timeout: {p.stderr!r}")
    print("ok a timeout on the device says the kernel ran on the emulated Q7, not the runner's place (exit 4)")
    missing = work / "no-such.o"
    p = ntx_device(
        ntx, src, work, "relu", "relu.cpp", "relu_shape.cpp", "--translation", missing, "relu_forward", "x.npy", code=1
    )
    if "no such file" not in p.stderr:
        sys.exit(f"--translation of a missing file: {p.stderr!r}")
    print("ok --translation of a missing file refused")
    print("device runs right")


if __name__ == "__main__":
    os.environ.pop("PKG_CONFIG_PATH", None)
    main()
