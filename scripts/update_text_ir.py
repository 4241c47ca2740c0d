"""Rewrite the expected program (``// CHECK:``) of text-IR pass tests from what the passes now produce.

    python scripts/update_text_ir.py                      # every case in tests/passes/text/
    python scripts/update_text_ir.py specialize_dyn_pad   # only the cases named (file stems)

Use it after an intended change to a pass, then read ``git diff tests/passes/text`` line by line: the
diff is the change in behaviour, and each case's expected program must still be what the pass's
contract says (the cases were written by hand from that contract). Prints each file it changed.
A new case may end in an empty ``// CHECK:``; the script fills it in, to be read before it is committed.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.passes.text_cases import CASES, all_cases, apply, canonical, load  # noqa: E402
from tosaconv.ir.lexer import ParseError  # noqa: E402
from tosaconv.ir.printer import print_graph  # noqa: E402


def update(path: Path) -> bool:
    case = load(path)
    actual = print_graph(apply(case))
    if _same(actual, case.expected):
        return False
    path.write_text(case.source + "// CHECK:\n" + actual)
    return True


def _same(actual: str, expected: str) -> bool:
    """Whether the programs agree; an expected part that does not parse (e.g. a new case's empty one) does not."""
    try:
        return canonical(actual) == canonical(expected)
    except ParseError:
        return False


def main(argv: list) -> int:
    paths = [CASES / f"{name}.tosair" for name in argv] if argv else all_cases()
    for path in paths:
        if update(path):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
