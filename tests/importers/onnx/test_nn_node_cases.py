"""The onnx package's node test cases for Conv, ConvTranspose, MaxPool,
AveragePool, LpPool, GlobalAveragePool, MatMul, Gemm, Resize and Upsample
(opset 9, upgraded to Resize), each imported, specialized, emitted as TOSA
1.0, read back and run, and compared with the cases' expected outputs. The
harness freezes Resize's roi/scales/sizes and Upsample's scales into
initializers with the case's own values (tosaconv needs them at import). A
case whose data TOSA has no type for (uint8) may instead be refused with a
tosaconv error. Nothing else is refused: 3-D convolutions and pools, pool
dilations, MaxPool's Indices, ConvTranspose groups and dilations, cubic,
antialiased and tf_crop_and_resize Resize all run.
"""
from __future__ import annotations

import pytest

from .harness import no_tosa_equivalent, node_cases, run_or_refuse

OPS = ["Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "MatMul", "Gemm",
       "Resize", "Upsample"]
CASES = [c for op in OPS for c in node_cases(op)]


def test_every_op_has_cases():
    assert {op for op in OPS if node_cases(op)} == set(OPS)


def test_only_cases_without_a_tosa_type_may_be_refused():
    assert [c.name for c in CASES if no_tosa_equivalent(c)] == ["test_maxpool_2d_uint8"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)
