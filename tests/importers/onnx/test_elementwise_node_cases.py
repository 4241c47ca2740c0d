"""The onnx package's node test cases for the elementwise converters
(arithmetic, math, activations, comparisons, logic, Where, Cast, Round, Sign,
Mod and the variadic Sum and Mean),
imported and evaluated by tosaconv and compared with the cases' expected
outputs. Cases whose data TOSA has no type for must be refused with a clear tosaconv
error (or computed correctly); wrong numbers or a crash fail the test.
"""
from __future__ import annotations

import pytest

from .harness import node_cases, run_or_refuse

OPS = ["Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal", "Exp", "Log", "Neg", "Abs", "Relu",
       "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Clip", "Min", "Max", "Where", "Equal", "Less", "Greater",
       "Not", "Cast", "Round", "Sign", "Mod", "Sum", "Mean"]
CASES = [c for op in OPS for c in node_cases(op)]


def test_every_op_has_cases():
    assert {op for op in OPS if node_cases(op)} == set(OPS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)
