"""The warnings ntx turns off in the device's compile (tools/ntx/src/parity.rs,
SINCE_CLANG10) against clang 10's own front end: each snippet under since_clang10/ (its
first line names the warning) draws that warning from clang 22 under -Wall, and none from
clang 10's (libclang 10.0.1 from PyPI) with the vendor's flags. `make clang10-check`.

Usage: check_clang10.py CLANGXX. Prints one line per snippet and "clang 10 agrees".
"""

import subprocess
import sys
from pathlib import Path

import clang.cindex as ci

HERE = Path(__file__).resolve().parent
VENDOR = ["-std=c++14", "-Wall", "-Wno-c99-designator"]


def main() -> None:
    clangxx = sys.argv[1]
    index = ci.Index.create()
    snippets = sorted((HERE / "since_clang10").glob("*.cpp"))
    if not snippets:
        sys.exit("no snippet")
    for src in snippets:
        warning = src.read_text().splitlines()[0].removeprefix("// ")
        new = subprocess.run([clangxx, "-fsyntax-only", *VENDOR, str(src)], capture_output=True, text=True)
        if f"[{warning}]" not in new.stderr:
            sys.exit(f"{src.name}: clang 22 does not give {warning}:\n{new.stderr}")
        said = [d for d in index.parse(str(src), args=VENDOR).diagnostics if d.severity >= ci.Diagnostic.Warning]
        if said:
            sys.exit(f"{src.name}: clang 10 says {[(d.spelling, d.option) for d in said]}")
        print(f"ok {src.name}: {warning} from clang 22, nothing from clang 10")
    print("clang 10 agrees")


if __name__ == "__main__":
    main()
