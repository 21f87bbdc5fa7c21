"""Fails when a function in the given Python files is longer than LIMIT lines (from its
`def` to its last line, docstring and comments included): the validator is held to the
length the Rust crates are (clippy.toml).

usage: lengths.py FILE...
"""

from __future__ import annotations

import ast
import sys

LIMIT = 80


def too_long(path: str) -> list[str]:
    """Each function of `path` over LIMIT lines, as `path:line: name is N lines`."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = node.end_lineno - node.lineno + 1
            if n > LIMIT:
                found.append(f"{path}:{node.lineno}: {node.name} is {n} lines (at most {LIMIT})")
    return found


def main():
    found = [line for path in sys.argv[1:] for line in too_long(path)]
    for line in found:
        print(line)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
