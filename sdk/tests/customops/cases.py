"""A test kernel's cases by name, read from its header (misuse_cases.h, ops_cases.h): each
line `    NAME = NUMBER,` of the header's enum. Tests look a case up by name, so a case added
or renumbered in the header cannot shift another test's expectation."""

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINE = re.compile(r"^\s+([A-Z][A-Z0-9_]*) = (\d+),")


def read(header: str) -> dict[str, int]:
    """Name to number for every enumerator of `header` (a file beside this one)."""
    found: dict[str, int] = {}
    for line in (HERE / header).read_text().splitlines():
        m = LINE.match(line)
        if m:
            name, number = m.group(1), int(m.group(2))
            if name in found or number in found.values():
                raise ValueError(f"{header}: {name} = {number} repeats a name or a number")
            found[name] = number
    if not found:
        raise ValueError(f"{header}: no `NAME = NUMBER,` line")
    return found
