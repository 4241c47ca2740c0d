"""The onnx package's node test cases for the shape and data-movement
converters (Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Concat, Split,
Slice, Gather, Shape, Size, Constant, ConstantOfShape, Identity, Expand,
Range), imported and evaluated by tosaconv and compared with the cases'
expected outputs. Shape operands are frozen into initializers by the
harness; Gather indices stay run-time inputs.
"""
from __future__ import annotations

import pytest

from .harness import node_cases, run_or_refuse

OPS = ["Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Concat", "Split", "Slice", "Gather",
       "Shape", "Size", "Constant", "ConstantOfShape", "Identity", "Expand", "Range"]
CASES = [c for op in OPS for c in node_cases(op)]


def test_every_op_has_cases():
    assert {op for op in OPS if node_cases(op)} == set(OPS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)
