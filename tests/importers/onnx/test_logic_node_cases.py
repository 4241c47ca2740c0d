"""The onnx package's node test cases for the logic, bitwise and
classification converters (And, Or, Xor, BitwiseAnd/Or/Xor/Not,
GreaterOrEqual, LessOrEqual, IsNaN, IsInf), imported and evaluated by
tosaconv and compared with the cases' expected outputs. Unsigned cases must
be refused with a clear tosaconv error (or computed correctly).
"""
from __future__ import annotations

import pytest

from .harness import node_cases, run_or_refuse

OPS = ["And", "Or", "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "GreaterOrEqual",
       "LessOrEqual", "IsNaN", "IsInf"]
CASES = [c for op in OPS for c in node_cases(op)]


def test_every_op_has_cases():
    assert {op for op in OPS if node_cases(op)} == set(OPS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)
