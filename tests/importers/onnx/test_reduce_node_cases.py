"""The onnx package's node test cases for ReduceSum, ReduceMean, ReduceMax,
ReduceMin, ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp,
ReduceSumSquare, ArgMax, ArgMin and GlobalMaxPool, imported and evaluated
by tosaconv and compared with the cases' expected outputs. Their axes
inputs are frozen into initializers by the harness (tosaconv needs axes at
import time).
"""
from __future__ import annotations

import pytest

from .harness import node_cases, run_or_refuse

OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
       "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "GlobalMaxPool"]
CASES = [c for op in OPS for c in node_cases(op)]


def test_every_op_has_cases():
    assert {op for op in OPS if node_cases(op)} == set(OPS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)
