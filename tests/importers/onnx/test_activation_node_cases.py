"""The onnx package's node test cases for the activations (Elu, Selu, Celu,
HardSigmoid, HardSwish, PRelu, Softplus, Softsign, ThresholdedRelu, Shrink,
Gelu, Mish) and Dropout, imported and evaluated by tosaconv and compared with
the cases' expected outputs. Dropout in training mode is random and out of
scope by design: the training cases feed ``training_mode`` as a graph input,
and tosaconv must refuse them with an error that says so.
"""
from __future__ import annotations

import pytest

from tosaconv.diagnostics import ConversionError

from .harness import convert, node_cases, run_or_refuse

OPS = ["Elu", "Selu", "Celu", "HardSigmoid", "HardSwish", "PRelu", "Softplus", "Softsign", "ThresholdedRelu",
       "Shrink", "Gelu", "Mish", "Dropout"]
CASES = [c for op in OPS for c in node_cases(op)]


def _training(case) -> bool:
    return case.name.startswith("test_training_dropout")


def test_every_op_has_cases():
    assert {op for op in OPS if node_cases(op)} == set(OPS)


@pytest.mark.parametrize("case", [c for c in CASES if not _training(c)], ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)


@pytest.mark.parametrize("case", [c for c in CASES if _training(c)], ids=lambda c: c.name)
def test_training_mode_case_is_rejected(case):
    with pytest.raises(ConversionError, match="training_mode input 't' is only known at run time"):
        convert(case.model)
