"""CLAMP (integer, float, NaN modes), ERF, SIGMOID and TANH."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tosaconv.interpreter import KernelError
from tosaconv.ir import attrs as A
from tosaconv.ir.ops import Op

from .helpers import run_op


def test_clamp_int8():
    x = np.array([-128, -10, 0, 10, 127], dtype=np.int8)
    np.testing.assert_array_equal(run_op(Op.CLAMP, [x], A.ClampAttrs(-5, 6)), [-5, -5, 0, 6, 6])


@pytest.mark.parametrize("mode,nan_result", [("PROPAGATE", np.nan), ("IGNORE", -1.0)])
def test_clamp_float_nan_modes(mode, nan_result):
    x = np.array([np.nan, -3.0, 0.5, 9.0, np.inf], dtype=np.float32)
    got = run_op(Op.CLAMP, [x], A.ClampAttrs(-1.0, 2.0, mode))
    np.testing.assert_array_equal(got, [nan_result, -1.0, 0.5, 2.0, 2.0])


def test_clamp_rejects_min_above_max():
    with pytest.raises(KernelError, match="min_val <= max_val"):
        run_op(Op.CLAMP, [np.zeros(2, np.float32)], A.ClampAttrs(1.0, 0.0))


def test_erf_matches_math_erf_to_float32_precision():
    x = np.linspace(-5, 5, 2001).astype(np.float32)
    want = np.array([math.erf(v) for v in x.astype(np.float64)], dtype=np.float32)
    got = run_op(Op.ERF, [x])
    np.testing.assert_array_max_ulp(got, want, maxulp=3)      # float32 math; the spec allows 5
    np.testing.assert_array_equal(run_op(Op.ERF, [np.array([np.nan, 0.0], np.float32)]), [np.nan, 0.0])
    rank0 = run_op(Op.ERF, [np.array(-0.5, np.float32)])            # the official erf_0 tests are rank 0
    assert rank0.shape == () and abs(float(rank0) - math.erf(-0.5)) < 1e-7


def test_sigmoid_and_tanh():
    x = np.array([-100.0, -1.0, 0.0, 2.0, 100.0], dtype=np.float32)
    sig = [1.0 / (1.0 + math.exp(-v)) for v in (-100.0, -1.0, 0.0, 2.0)] + [1.0]
    np.testing.assert_allclose(run_op(Op.SIGMOID, [x]), sig, rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(run_op(Op.TANH, [x]), [math.tanh(v) for v in x.astype(float)], rtol=1e-6)
