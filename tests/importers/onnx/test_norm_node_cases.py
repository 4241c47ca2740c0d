"""The onnx package's node test cases for Softmax, LogSoftmax, Hardmax,
LayerNormalization, BatchNormalization, InstanceNormalization,
GroupNormalization, LpNormalization and MeanVarianceNormalization,
imported and evaluated by tosaconv and compared with the cases' expected
outputs. BatchNormalization in training mode is out of scope by design:
those cases must be rejected with a conversion error that says so.
"""
from __future__ import annotations

import pytest

from tosaconv.diagnostics import ConversionError

from .harness import convert, node_cases, run_or_refuse

OPS = ["Softmax", "LogSoftmax", "LayerNormalization", "BatchNormalization", "InstanceNormalization",
       "GroupNormalization", "LpNormalization", "MeanVarianceNormalization", "Hardmax"]
CASES = [c for op in OPS for c in node_cases(op)]


def _training(case) -> bool:
    return case.name.endswith("_training_mode")


def test_every_op_has_cases():
    assert {op for op in OPS if node_cases(op)} == set(OPS)


@pytest.mark.parametrize("case", [c for c in CASES if not _training(c)], ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)


@pytest.mark.parametrize("case", [c for c in CASES if _training(c)], ids=lambda c: c.name)
def test_training_mode_case_is_rejected(case):
    with pytest.raises(ConversionError, match="training mode"):
        convert(case.model)
