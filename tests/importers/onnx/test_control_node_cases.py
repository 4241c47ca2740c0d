"""The onnx package's node test cases for If, Loop and Scan, imported and run
by tosaconv (specialized, emitted and read back) and compared with the cases'
expected outputs. Loop's trip count and initial condition are frozen into
initializers by the harness (they fix the number of iterations, and so the
scan outputs' length). Cases built on sequence or optional values, which TOSA
has no form for, must be refused with a tosaconv error.
"""
from __future__ import annotations

import pytest

from .harness import node_cases, run_or_refuse

OPS = ["If", "Loop", "Scan"]
CASES = [c for op in OPS for c in node_cases(op)]


def test_every_op_has_cases():
    assert {op for op in OPS if node_cases(op)} == set(OPS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)
