"""misuse.cpp's cases on the emulated Q7 (check_device.py builds the program): each
reported as the host run reports it, at the kernel's line where the host names one, or
said unchecked where the emulation does not check it."""

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
    # A store past a tcm_malloc block's end, inside its granule: found when it is freed, at
    # the free's line, as on the host.
    for name in ("TCM_OVER_BY_1", "TCM_OVER_BY_4"):
        said, _ = as_on_host(cmd, case[name], work, r"error\[tcm-out-of-bounds\] op misuse, core 0: (.*)")
    print(f"ok a store past a TCM block's end found on the device as on the host: {said}")
    # A block never freed: named at the kernel's line that allocated it, as on the host; the
    # device run says what it does not check.
    said, p = as_on_host(cmd, case["TCM_LEAK"], work, r"allocated at (.*) was never freed", code=0)
    print(f"ok tcm-leak on the device at the kernel's line, as on the host: {said}")
    if "warning[device-tcm-unchecked] op misuse, core 0: 1 tcm_malloc block(s)" not in p.stderr:
        sys.exit(f"a TCM block on the device, not said what is unchecked: {p.stderr!r}")
    print("ok device-tcm-unchecked: what the emulated Q7 does not check of a TCM block, said")
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


def on_case(cmd, number, work, *extra):
    """`cmd` (a misuse run) on case `number`."""
    cmd[3] = str(number)
    return subprocess.run([*cmd, *extra], cwd=work, capture_output=True, text=True, check=False)


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
