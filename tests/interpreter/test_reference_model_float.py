"""Cross-check float kernels (and NaN handling) against the official TOSA reference model.

The spec bounds float error rather than fixing bits, so values compare within
a tolerance far tighter than the spec's bounds; NaN-mode behaviour and
indices compare exactly. Tests fail when tosa-tools (a test extra) is missing.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.ops import Op

from .helpers import run_op
from .reference_model import OneOp

RNG = np.random.default_rng(4321)
OP = OneOp.enum

def _floats(shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _float_zps(one, count):
    for _ in range(count):
        one.const([0.0], one.dtype.FP32, np.float32)


def test_conv2d_float_matches_reference(tmp_path):
    x, w, bias = _floats((1, 8, 7, 3)), _floats((5, 3, 3, 3)), _floats((5,))
    ours = run_op(Op.CONV2D, [x, w, bias], A.Conv2dAttrs((1, 1, 0, 2), (1, 2), (2, 1), DType.FP32))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.FP32).input(w, one.dtype.FP32).input(bias, one.dtype.FP32)
    _float_zps(one, 2)
    attr = one.attribute()
    attr.Conv2dAttribute([1, 1, 0, 2], [1, 2], [2, 1], False, one.dtype.FP32)
    theirs = one.run(OP("Op").CONV2D, ours.shape, one.dtype.FP32, attr)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_transpose_conv2d_float_matches_reference(tmp_path):
    x, w, bias = _floats((1, 3, 4, 2)), _floats((3, 3, 2, 2)), _floats((3,))
    out_pad = (-1, 0, 1, -1)
    ours = run_op(Op.TRANSPOSE_CONV2D, [x, w, bias], A.TransposeConv2dAttrs(out_pad, (2, 2), DType.FP32))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.FP32).input(w, one.dtype.FP32).input(bias, one.dtype.FP32)
    _float_zps(one, 2)
    attr = one.attribute()
    attr.TransposeConv2dAttribute(list(out_pad), [2, 2], False, one.dtype.FP32)
    theirs = one.run(OP("Op").TRANSPOSE_CONV2D, ours.shape, one.dtype.FP32, attr)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_avg_pool2d_float_matches_reference(tmp_path):
    x = _floats((1, 6, 7, 2))
    ours = run_op(Op.AVG_POOL2D, [x], A.AvgPool2dAttrs((3, 2), (1, 1), (1, 1, 1, 0), DType.FP32))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.FP32)
    _float_zps(one, 2)
    attr = one.attribute()
    attr.AvgPool2dAttribute([3, 2], [1, 1], [1, 1, 1, 0], one.dtype.FP32)
    theirs = one.run(OP("Op").AVG_POOL2D, ours.shape, one.dtype.FP32, attr)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_resize_float_bilinear_matches_reference(tmp_path):
    x = _floats((1, 4, 5, 2))
    scale, offset, border = (4, 2, 6, 2), (-1, -2), (1, 2)
    ours = run_op(Op.RESIZE, [x], A.ResizeAttrs(scale, offset, border, "BILINEAR"))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.FP32)
    one.shape(scale).shape(offset).shape(border)
    attr = one.attribute()
    attr.ResizeAttribute(OP("ResizeMode").BILINEAR)
    theirs = one.run(OP("Op").RESIZE, ours.shape, one.dtype.FP32, attr)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["ERF", "SIGMOID", "TANH", "EXP", "LOG", "RSQRT", "RECIPROCAL", "SIN", "COS"])
def test_float_unary_matches_reference(tmp_path, name):
    x = np.abs(_floats((64,))) * 3 + 0.01 if name in ("LOG", "RSQRT") else _floats((64,)) * 3
    ours = run_op(getattr(Op, name), [x])
    one = OneOp(tmp_path)
    one.input(x, one.dtype.FP32)
    attr = one.attribute()
    getattr(attr, name.title().replace("_", "") + "Attribute")()
    theirs = one.run(getattr(OP("Op"), name), x.shape, one.dtype.FP32, attr)
    np.testing.assert_allclose(ours, theirs, rtol=3e-6, atol=1e-7)


@pytest.mark.parametrize("mode", ["PROPAGATE", "IGNORE"])
def test_argmax_nan_modes_match_reference(tmp_path, mode):
    nan, inf = np.nan, np.inf
    x = np.array([[3, nan, 1], [1, 2, nan], [nan, nan, nan], [nan, -inf, -inf], [2, 5, 5]], dtype=np.float32)
    ours = run_op(Op.ARGMAX, [x], A.AxisNanAttrs(1, mode))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.FP32)
    attr = one.attribute()
    attr.ArgMaxAttribute(1, getattr(OP("NanPropagationMode"), mode))
    theirs = one.run(OP("Op").ARGMAX, (5,), one.dtype.INT32, attr)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("mode", ["PROPAGATE", "IGNORE"])
def test_clamp_and_max_pool_nan_modes_match_reference(tmp_path, mode):
    x = np.array([np.nan, -3.0, 0.5, 9.0, np.nan, 1.0], dtype=np.float32).reshape(1, 1, 6, 1)
    nan_mode = getattr(OP("NanPropagationMode"), mode)
    ours = run_op(Op.CLAMP, [x], A.ClampAttrs(-1.0, 2.0, mode))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.FP32)
    attr = one.attribute()
    attr.ClampAttribute(one.ser.builder, list(np.float32(-1.0).tobytes()), list(np.float32(2.0).tobytes()), nan_mode)
    np.testing.assert_array_equal(ours, one.run(OP("Op").CLAMP, x.shape, one.dtype.FP32, attr))
    ours = run_op(Op.MAX_POOL2D, [x], A.MaxPool2dAttrs((1, 2), (1, 2), (0, 0, 0, 0), mode))
    one = OneOp(tmp_path / "pool")
    one.input(x, one.dtype.FP32)
    attr = one.attribute()
    attr.MaxPool2dAttribute([1, 2], [1, 2], [0, 0, 0, 0], nan_mode)
    np.testing.assert_array_equal(ours, one.run(OP("Op").MAX_POOL2D, ours.shape, one.dtype.FP32, attr))
