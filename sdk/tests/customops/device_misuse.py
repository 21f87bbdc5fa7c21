"""misuse.cpp's cases on the emulated Q7 (check_device.py builds the program): each
reported as the host run reports it, at the kernel's line where the host names one, or
said unchecked where the emulation does not check it."""

import os
import re
import subprocess
import sys


def check(m, case, work):
    """The cases on `m` (check_device.Built of misuse.cpp); `case`: the cases by name."""
    cmd = [m.program, "misuse", "x.npy", str(case["ACCESSOR_OUTLIVES_TENSOR"]), "--out", work / "misuse-out.npy"]
    cmd += ["--device", m.elf, "--translation", m.translation]
    p = subprocess.run(cmd, cwd=work, capture_output=True, text=True, check=False)
    if p.returncode != 2 or "error[tensor-not-live] op misuse, core 0, tensor" not in p.stderr:
        sys.exit(f"an accessor outliving its tensor on the device: exit {p.returncode}\n{p.stderr}")
    if (work / "misuse-out.npy").exists():
        sys.exit("an accessor outliving its tensor on the device: the output was written")
    print("ok tensor-not-live on the device: an accessor outliving its tensor, exit 2")
    tcm_on_device(cmd, case, work, m.source)
    # A block never freed: named at the kernel's line that allocated it, as on the host; the
    # store watch ran (nothing said unchecked).
    said, p = as_on_host(cmd, case["TCM_LEAK"], work, r"allocated at (.*) was never freed", code=0)
    if "device-tcm-unchecked" in p.stderr:
        sys.exit(f"a TCM block on the device said unchecked under the store watch: {p.stderr!r}")
    print(f"ok tcm-leak on the device at the kernel's line, as on the host: {said}")
    # Counted from qemu's log, without the plugin: no store watch, and the run says so.
    p = on_case(cmd, case["TCM_OVER_BY_1"], work, env={**os.environ, "NT_QEMU_COUNT_PLUGIN": ""})
    if p.returncode != 0 or "warning[device-tcm-unchecked] op misuse, core 0: 1 tcm_malloc block(s)" not in p.stderr:
        sys.exit(f"a TCM block on the device without the plugin: exit {p.returncode}\n{p.stderr}")
    print("ok device-tcm-unchecked: a device run without the store watch says a store past a block went unchecked")
    # An integer division by zero: the device's value is not given, the host's report is.
    p = on_case(cmd, case["DIVIDE_BY_ZERO"], work)
    if p.returncode != 2 or "error[integer-divide-by-zero] op misuse, core 0:" not in p.stderr or "misuse.cpp:" not in p.stderr:
        sys.exit(f"an integer division by zero on the device: exit {p.returncode}\n{p.stderr}")
    print("ok integer-divide-by-zero on the device, at the kernel's line, exit 2")
    # A shift past the width and a float the integer cannot hold: reported as on the host.
    for name in ("SHIFT_PAST_WIDTH", "FLOAT_TO_INT_OVERFLOW"):
        p = on_case(cmd, case[name], work)
        if p.returncode != 2 or "error[undefined-arithmetic] op misuse, core 0:" not in p.stderr or "misuse.cpp:" not in p.stderr:
            sys.exit(f"{name} on the device: exit {p.returncode}\n{p.stderr}")
    print("ok undefined-arithmetic on the device (a shift, a float to int), at the kernel's line, exit 2")
    memory_on_device(cmd, case, work)


def tcm_on_device(cmd, case, work, source):
    """Stores and copies past a tcm_malloc block: the device's store watch stops the core at
    the store's line. Past the block's granule, and a copy past the block, the host's guard
    pages find the same line; inside the granule the host finds the store when the block
    is freed, at the free's line, and the device at the store's."""
    for name in ("TCM_STORE_PAST_END", "TCM_STORE_PAST_GUARD", "TCM_STORE_BEFORE_BLOCK", "TCM_COPY_PAST_BLOCK"):
        said, _ = as_on_host(cmd, case[name], work, r"error\[tcm-out-of-bounds\] op misuse, core 0: .*, at (.*)")
        print(f"ok {name}: the device's store watch at the host's line, {said}")
    lines = source.read_text().splitlines()
    for name, store in (
        ("TCM_OVER_BY_1", "bytes[which == TCM_OVER_BY_1 ? 1000 : 1014] = 1;"),
        ("TCM_OVER_BY_4", "static_cast<volatile float *>(t)[j] = 1.0f;"),
    ):
        line = next(k + 1 for k, text in enumerate(lines) if store in text)
        p = on_case(cmd, case[name], work)
        found = re.search(
            r"error\[tcm-out-of-bounds\] op misuse, core 0: a \d-byte store at .* past the end .*misuse\.cpp:(\d+)\)", p.stderr
        )
        if p.returncode != 2 or not found or int(found.group(1)) != line:
            sys.exit(f"{name} on the device: not stopped at the store's line {line}: exit {p.returncode}\n{p.stderr}")
    print(f"ok a store into a TCM block's granule past its end: the device stops at the store's line ({line})")


def on_case(cmd, number, work, *extra, env=None):
    """`cmd` (a misuse run) on case `number`, in `env` if given."""
    cmd[3] = str(number)
    return subprocess.run([*cmd, *extra], cwd=work, capture_output=True, text=True, check=False, env=env)


def as_on_host(cmd, number, work, pattern, *extra, code=2):
    """Case `number` on the device and on the host: what `pattern` finds in each one's
    report, the same, naming misuse.cpp, exit status `code` on the device. That, and the
    device's run."""
    p = on_case(cmd, number, work, *extra)
    host = subprocess.run([*cmd[:6], *extra], cwd=work, capture_output=True, text=True, check=False)
    said = [re.search(pattern, q.stderr) for q in (p, host)]
    if p.returncode != code or not all(said) or said[0].group(1) != said[1].group(1) or "misuse.cpp:" not in said[0].group(1):
        sys.exit(f"case {number} on the device not as on the host ({pattern}): {p.stderr!r} / {host.stderr!r}")
    return said[0].group(1), p


def memory_on_device(cmd, case, work):
    """The device's heaps and memories: a kernel's 33rd live tensor has no block in the HBM
    heap (32 live, and temporaries given back, run); a TCM copy into a static array is not
    dataram; two cores writing the same elements, and an output only core 0 writes half of;
    each at the host's line."""
    said, _ = as_on_host(cmd, case["HBM_HEAP_33_LIVE"], work, r"error\[hbm-heap-exhausted\] op misuse, core 0: .*, at (.*)")
    for name in ("HBM_HEAP_32_LIVE", "HBM_HEAP_REUSED"):
        p = on_case(cmd, case[name], work)
        if p.returncode != 0 or p.stderr:
            sys.exit(f"{name} on the device: exit {p.returncode}\n{p.stderr}")
    print(f"ok hbm-heap-exhausted on the device at the kernel's line, as on the host: {said}")
    said, _ = as_on_host(cmd, case["TCM_COPY_STATIC"], work, r"error\[tcm-copy-not-dataram\] op misuse, core 0: .*, at (.*)")
    print(f"ok tcm-copy-not-dataram on the device at the copy's line, as on the host: {said}")
    said, _ = as_on_host(cmd, case["C_HEAP_NEW_PAST"], work, r"error\[c-heap-exhausted\] op misuse, core 0: .*, at (.*)")
    print(f"ok c-heap-exhausted on the device at the kernel's line, as on the host: {said}")
    said, _ = as_on_host(cmd, case["C_HEAP_MALLOC_NULL"], work, r"warning\[malloc-null\] op misuse, core 0: .*, at (.*)", code=0)
    p = on_case(cmd, case["C_HEAP_WITHIN"], work)
    if p.returncode != 0 or p.stderr:
        sys.exit(f"C_HEAP_WITHIN on the device: exit {p.returncode}\n{p.stderr}")
    print(f"ok malloc-null on the device at the kernel's line, as on the host, and vectors within the heap: {said}")
    for name, kind, where in (
        ("CORES_WRITE_SAME", "cores-write-same-element", "copy_half("),
        ("ONLY_CORE0_WRITES", "output-unwritten", "multicore("),
    ):
        said, _ = as_on_host(cmd, case[name], work, rf"error\[{kind}\] op misuse, .*, at (.*)", "--cores", "2")
        if where not in said:
            sys.exit(f"{kind} on the device not in {where}: {said}")
        print(f"ok {kind} on the device at the kernel's line, as on the host: {said}")
