"""Which dynamic models IREE 3.13 takes symbolically: prints the Markdown table the README carries.

For every dynamic sample model and every kept dynamic real model, the
symbolic ``.mlir`` (``convert --keep-symbols -o X.mlir``) is compiled once
with ``iree-compile`` and, where it compiles, run by ``iree-run-module`` at the
two input shapes the symbolic tests use and compared with our numpy run of
the static conversion (see tests/iree_symbolic.py).

    python scripts/iree_symbolic.py [--samples | --real] [NAME-SUBSTRING ...]
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tests.iree_symbolic import classify, real_cases, sample_cases  # noqa: E402


def _cases(argv: list) -> list:
    flags = {a for a in argv if a.startswith("--")}
    words = [a for a in argv if not a.startswith("--")]
    cases = ([] if "--real" in flags else sample_cases()) + ([] if "--samples" in flags else real_cases())
    return [c for c in cases if not words or any(w in c.name for w in words)]


def main(argv: list) -> int:
    print("| model | compiles | runs and matches at both shapes | IREE's first error / mismatch |")
    print("|---|---|---|---|")
    for case in _cases(argv):
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            out = classify(case, Path(tmp))
        yes = {True: "yes", False: "no"}
        matched = yes[out.matched] if out.compiled else "-"
        print(f"| {out.name} | {yes[out.compiled]} | {matched} | {out.error.replace('|', '/')} |", flush=True)
        print(f"  {case.name}: {time.perf_counter() - start:.1f}s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
