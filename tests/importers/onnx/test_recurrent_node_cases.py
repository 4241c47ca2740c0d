"""The onnx package's node test cases for LSTM, GRU and RNN, imported,
specialized and evaluated by tosaconv and compared with the cases' expected
outputs (their W, R, B and initial states are graph inputs, so the unrolled
program computes on runtime weights here).
"""
from __future__ import annotations

import pytest

from .harness import node_cases, run_or_refuse

OPS = ["LSTM", "GRU", "RNN"]
CASES = [c for op in OPS for c in node_cases(op)]


def test_every_op_has_cases():
    assert {op for op in OPS if node_cases(op)} == set(OPS)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)
