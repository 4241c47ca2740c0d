"""The quantization ops' node cases run in test_node_cases.py (most feed uint8, uint16, float8,
4-bit or 2-bit tensors as graph inputs, which TOSA has no tensors for: refused with a clear error).

The four int8 QLinearMatMul cases are checked differently, because their expected outputs
contradict the operator's definition: ONNX specifies ``y = saturate(...)``, but the reference
implementation that wrote the data casts out-of-range results with wrap-around (-236 is stored
as 20). onnxruntime saturates. For those cases tosaconv must equal onnxruntime exactly (and the official
reference model must agree with our numpy run of the emitted program), and must differ from the
expected data only where the exact integer result is outside int8 and the expected value is its
wrap-around.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.emit import read_tosa

from .harness import (SPEC_CONTRADICTED, case_arrays, check_reference_model, convert, freeze_shape_operands, node_cases, run_graph,
                      run_onnxruntime, specialize_and_emit)

WRAPPING_EXPECTATIONS = set(SPEC_CONTRADICTED)
WRAPPING = [c for c in node_cases("QLinearMatMul") if c.name in WRAPPING_EXPECTATIONS]


def test_every_wrapping_case_exists():
    assert len(WRAPPING) == len(WRAPPING_EXPECTATIONS)


def _tosaconv_outputs(case, workdir) -> list:
    """The numpy run of the emitted program, which the official reference model must reproduce exactly."""
    inputs, _ = case_arrays(case)
    feeds = {vi.name: a for vi, a in zip(case.model.graph.input, inputs)}
    model, feeds = freeze_shape_operands(case.model, feeds)
    static, tosa = specialize_and_emit(convert(model), {k: np.shape(v) for k, v in feeds.items()})
    got = run_graph(read_tosa(tosa), feeds)
    check_reference_model(tosa, static, feeds, got, workdir)
    return got


def _exact_qlinear_matmul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) -> np.ndarray:
    """The definition with unbounded integers; the scale factor in the scales' own type, as ONNX's reference."""
    acc = np.matmul(a.astype(np.int64) - a_zp, b.astype(np.int64) - b_zp)
    factor = (a_scale * b_scale / y_scale).astype(np.float64)[0]
    return np.rint(acc * factor + int(y_zp[0]))


@pytest.mark.parametrize("case", WRAPPING, ids=lambda c: c.name)
def test_int8_qlinear_matmul_saturates_like_onnxruntime(case, tmp_path):
    inputs, (expected,) = case_arrays(case)
    (got,) = _tosaconv_outputs(case, tmp_path)
    want = run_onnxruntime(case.model, {vi.name: a for vi, a in zip(case.model.graph.input, inputs)})[0]
    np.testing.assert_array_equal(got, want)
    exact = _exact_qlinear_matmul(*inputs)
    differs = got != expected
    assert differs.any(), "the case no longer needs special treatment"
    assert np.all((exact[differs] < -128) | (exact[differs] > 127))
    np.testing.assert_array_equal(exact[differs].astype(np.int64).astype(np.int8), expected[differs])
    np.testing.assert_array_equal(got[differs], np.clip(exact[differs], -128, 127))
