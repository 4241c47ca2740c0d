"""The onnx package's node test cases, for every op tosaconv claims, in one place.

Each case runs the way a user's model goes (import, bindings from its input
shapes, specialization, TOSA 1.0 emission, read-back, numpy run) and must
match its expected outputs (``harness.run_node_case``). A case whose data
TOSA has no type for may instead be refused with a clear tosaconv error
(``run_or_refuse``). The claim is narrowed, on purpose and in writing, for the
cases in ``NARROWED``: each must be refused with the message given here, which
is also what docs/onnx-support.md lists. Nothing else may be refused.
"""
from __future__ import annotations

import pytest

from tosaconv.cli.info import supported_ops
from tosaconv.diagnostics import TosaconvError

from .harness import SPEC_CONTRADICTED, node_cases, run_node_case, run_or_refuse

CLAIMED = sorted({r["op_type"] for r in supported_ops() if r["domain"] == "ai.onnx"})
_TRAINING = "training mode|training_mode input"
_DATA_SIZE = "the count of non-zeros .* is only known when the model runs"
NARROWED = {
    "test_batchnorm_example_training_mode": _TRAINING,
    "test_batchnorm_epsilon_training_mode": _TRAINING,
    **{f"test_training_dropout{s}": _TRAINING
       for s in ("", "_mask", "_default", "_default_mask", "_zero_ratio", "_zero_ratio_mask")},
    "test_einsum_batch_diagonal": r"repeats index 'i': attribute equation = an index repeated within one operand",
    "test_nonzero_example": _DATA_SIZE,
}
CASES = [c for op in CLAIMED for c in node_cases(op)]


def test_every_claimed_op_has_node_cases():
    assert [op for op in CLAIMED if not node_cases(op)] == []


def test_every_narrowed_or_contradicted_case_exists():
    names = {c.name for c in CASES}
    assert set(NARROWED) <= names and set(SPEC_CONTRADICTED) <= names


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in NARROWED], ids=lambda c: c.name)
def test_node_case(case):
    run_or_refuse(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.name in NARROWED], ids=lambda c: c.name)
def test_narrowed_case_is_refused_saying_why(case):
    with pytest.raises(TosaconvError, match=NARROWED[case.name]):
        run_node_case(case)
