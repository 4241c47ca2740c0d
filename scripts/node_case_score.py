"""Score tosaconv on the onnx package's own node test cases, per supported op.

For every node test case (``onnx.backend.test.case.node``) whose single op
tosaconv has a converter for, import it, evaluate it with the numpy
interpreter, and compare with the case's expected outputs (the same harness
the test suite uses). Each case ends as ``pass``, ``refused`` (a clear
tosaconv error: the case needs a type or feature TOSA does not have, or one
not supported yet) or ``FAIL`` (a wrong answer or an unexpected exception:
a bug). Prints a Markdown table for the README.

    python scripts/node_case_score.py
"""
from __future__ import annotations

import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from tests.importers.onnx.harness import node_cases, run_node_case  # noqa: E402
from tosaconv.diagnostics import TosaconvError  # noqa: E402
from tosaconv.importers.onnx.registry import supported_ops  # noqa: E402
from tosaconv.interpreter import InputError  # noqa: E402


def score(op: str) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    for case in node_cases(op):
        try:
            run_node_case(case)
            counts["pass"] += 1
        except (TosaconvError, InputError):
            counts["refused"] += 1
        except Exception:  # a wrong answer (AssertionError) or a crash: both are bugs
            counts["FAIL"] += 1
    return counts


def main():
    ops = sorted({op for domain, op, _ in supported_ops() if domain == ""})
    total: collections.Counter = collections.Counter()
    print("| op | cases | pass | refused | FAIL |\n|---|---|---|---|---|")
    for op in ops:
        c = score(op)
        total.update(c)
        n = sum(c.values())
        print(f"| {op} | {n} | {c['pass']} | {c['refused']} | {c['FAIL']} |")
    n = sum(total.values())
    print(f"| **all** | {n} | {total['pass']} | {total['refused']} | {total['FAIL']} |")


if __name__ == "__main__":
    main()
