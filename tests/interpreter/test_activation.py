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


def spec_clamp(v: float, lo: float, hi: float, mode: str) -> float:
    """The spec's apply_clip_s on one float: max is ``a >= b ? a : b``, min ``a < b ? a : b``, NaN per mode."""
    def pick(a, b, keep_a):
        if math.isnan(a) or math.isnan(b):
            return math.nan if mode == "PROPAGATE" else (b if math.isnan(a) else a)
        return a if keep_a(a, b) else b
    return pick(pick(v, lo, lambda a, b: a >= b), hi, lambda a, b: a < b)


@pytest.mark.parametrize("mode", ["PROPAGATE", "IGNORE"])
@pytest.mark.parametrize("lo, hi", [(0.0, 6.0), (-0.0, 6.0), (-3.0, 1e-30), (-math.inf, math.inf), (-3.0, -0.0),
                                    (-0.0, 0.0)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_clamp_float_follows_the_spec_pseudocode(mode, lo, hi, dtype):
    x = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-45, 3.0, -3.0, 6.0, 7.0, 1e-30], dtype)
    got = run_op(Op.CLAMP, [x], A.ClampAttrs(lo, hi, mode))
    want = np.array([spec_clamp(float(v), float(dtype(lo)), float(dtype(hi)), mode) for v in x], dtype)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)          # NaN matches NaN; -0.0 equals 0.0 here
    if dtype(hi) != 0:     # a max_val of zero takes the two-pass path, whose zero signs at a tie are numpy's
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


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


def test_erf_is_the_degree_3_horner_form_around_the_nearest_grid_point_bit_for_bit():
    # erf_f32 gathers a grid point's four coefficients as one record and reads them as strided columns; the
    # result must be the plain float32 Horner form of the module docstring, each step rounded, then x's sign
    from tosaconv.interpreter.activation import _erf_taylor_table, erf_f32
    bits = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), np.array([0.0, -0.0, 4.0, -4.0, np.inf, -np.inf, np.nan], np.float32)])
    with np.errstate(all="ignore"):
        a = np.fmin(np.abs(x), np.float32(4.0))
        grid = ((a * np.float32(128)) + np.float32(0.5)).astype(np.int32)
        h = grid.astype(np.float32) * np.float32(-1.0 / 128) + a
        table = _erf_taylor_table()
        total = table[3][grid]
        for k in (2, 1, 0):
            total = total * h + table[k][grid]
        want = np.where(np.isnan(x), np.float32(np.nan), np.copysign(total, x)).astype(np.float32)
        got = erf_f32(x)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
