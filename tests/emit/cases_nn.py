"""One-op static graphs with weights or windows: convolutions, pools, resize, rescale.

Same protocol as ``cases.py`` (and registered in the same table). Expected
values come from small plain-numpy loops, written from the spec's
definitions (NHWC input, OHWI conv weights, [KH, KW, C, M] depthwise weights,
``pad = [top, bottom, left, right]``).
"""
from __future__ import annotations

import numpy as np

from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

from .cases import F32, I8, _finish, _graph, _one, _rand, _rng, case


def _windows(x, kh, kw, stride, pad, value=0.0):
    """[N, OH, OW, KH, KW, C] windows of NHWC ``x`` after padding."""
    xp = np.pad(x, ((0, 0), (pad[0], pad[1]), (pad[2], pad[3]), (0, 0)), constant_values=value)
    oh = (xp.shape[1] - kh) // stride[0] + 1
    ow = (xp.shape[2] - kw) // stride[1] + 1
    out = np.empty((x.shape[0], oh, ow, kh, kw, x.shape[3]), dtype=np.float64)
    for i in range(oh):
        for j in range(ow):
            out[:, i, j] = xp[:, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw, :]
    return out


@case
def conv2d():
    x, w, bias = _rand((1, 5, 5, 2)), _rand((3, 3, 3, 2)), _rand((3,))
    g, b, (xv,) = _graph(x=(F32, (1, 5, 5, 2)))
    with b.at(Location("Conv", "conv1", "onnx")):
        wv, bv = b.const(w, name="conv1.weight"), b.const(bias, name="conv1.bias")
        y = b.emit(Op.CONV2D, xv, wv, bv, attrs=A.Conv2dAttrs((1, 1, 1, 1), (1, 1), (1, 1), F32))
    win = _windows(x, 3, 3, (1, 1), (1, 1, 1, 1))
    expected = np.einsum("nijhwc,ohwc->nijo", win, w) + bias
    return _finish(g, b, y, {"x": x}, expected.astype(np.float32), atol=1e-4)


@case
def depthwise_conv2d():
    x, w, bias = _rand((1, 4, 4, 2)), _rand((2, 2, 2, 1)), _rand((2,))
    g, b, (xv,) = _graph(x=(F32, (1, 4, 4, 2)))
    with b.at(Location("Conv", "dw1", "onnx")):
        wv, bv = b.const(w), b.const(bias)
        y = b.emit(Op.DEPTHWISE_CONV2D, xv, wv, bv, attrs=A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), F32))
    win = _windows(x, 2, 2, (1, 1), (0, 0, 0, 0))
    expected = np.einsum("nijhwc,hwc->nijc", win, w[..., 0]) + bias
    return _finish(g, b, y, {"x": x}, expected.astype(np.float32), atol=1e-4)


@case
def avg_pool2d():
    x = _rand((1, 4, 4, 2))
    expected = _windows(x, 2, 2, (2, 2), (0, 0, 0, 0)).mean(axis=(3, 4))
    return _one(Op.AVG_POOL2D, {"x": (F32, (1, 4, 4, 2))}, {"x": x},
                A.AvgPool2dAttrs((2, 2), (2, 2), (0, 0, 0, 0), F32), expected=expected.astype(np.float32))


@case
def max_pool2d():
    x = _rand((1, 5, 5, 2))
    expected = _windows(x, 3, 3, (2, 2), (1, 1, 1, 1), value=-np.inf).max(axis=(3, 4))
    return _one(Op.MAX_POOL2D, {"x": (F32, (1, 5, 5, 2))}, {"x": x},
                A.MaxPool2dAttrs((3, 3), (2, 2), (1, 1, 1, 1)), expected=expected.astype(np.float32))


@case
def resize_nearest():
    x = _rand((1, 2, 3, 1))
    # scale 2/1, offset 0, border 1: output (1, 4, 6, 1). The spec's nearest rule picks source
    # index floor(o / 2), plus one when the remainder is >= scale_n / 2, clamped to the last pixel.
    rows, cols = [0, 1, 1, 1], [0, 1, 1, 2, 2, 2]
    expected = x[:, rows][:, :, cols]
    return _one(Op.RESIZE, {"x": (F32, (1, 2, 3, 1))}, {"x": x},
                A.ResizeAttrs((2, 1, 2, 1), (0, 0), (1, 1), "NEAREST"), expected=expected)


@case
def rescale_int8():
    x = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)
    mult, shift, in_zp, out_zp = 1 << 30, 31, -3, 5  # scale 0.5
    attrs = A.RescaleAttrs((mult,), (shift,), in_zp, out_zp, scale32=True)
    value = x.astype(np.int64) - in_zp
    expected = np.clip(((value * mult + (1 << (shift - 1))) >> shift) + out_zp, -128, 127).astype(np.int8)
    return _one(Op.RESCALE, {"x": (I8, (4, 64))}, {"x": x}, attrs, expected=expected,
                result_type=TensorType(I8, (4, 64)), atol=0)


@case
def rescale_per_channel_int32_to_int8():
    x = _rng().integers(-5000, 5000, (2, 3)).astype(np.int32)
    mults, shifts = (1 << 30, 3 << 28, 1 << 29), (35, 36, 33)
    attrs = A.RescaleAttrs(mults, shifts, 0, -7, scale32=True, per_channel=True)
    value = x.astype(np.int64)
    m, s = np.array(mults, np.int64), np.array(shifts, np.int64)
    expected = np.clip(((value * m + (1 << (s - 1))) >> s) - 7, -128, 127).astype(np.int8)
    return _one(Op.RESCALE, {"x": (DType.INT32, (2, 3))}, {"x": x}, attrs, expected=expected,
                result_type=TensorType(I8, (2, 3)), atol=0)


@case
def conv2d_int8_zero_points():
    rng = _rng()
    x = rng.integers(-128, 128, (1, 4, 4, 2)).astype(np.int8)
    w = rng.integers(-128, 128, (2, 2, 2, 2)).astype(np.int8)
    bias = rng.integers(-1000, 1000, (2,)).astype(np.int32)
    g, b, (xv,) = _graph(x=(I8, (1, 4, 4, 2)))
    with b.at(Location("QLinearConv", "qconv", "onnx")):
        wv, bv = b.const(w), b.const(bias)
        attrs = A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), DType.INT32, input_zp=-3, weight_zp=2)
        y = b.emit(Op.CONV2D, xv, wv, bv, attrs=attrs)
    win = _windows(x.astype(np.float64) + 3, 2, 2, (1, 1), (0, 0, 0, 0))
    expected = np.einsum("nijhwc,ohwc->nijo", win, w.astype(np.float64) - 2) + bias
    return _finish(g, b, y, {"x": x}, expected.astype(np.int32), atol=0)


@case
def negate_int8_zero_points():
    x = np.arange(-128, 128, dtype=np.int8).reshape(4, 64)
    expected = np.clip(-(x.astype(np.int32) - 10) + (-20), -128, 127).astype(np.int8)
    return _one(Op.NEGATE, {"x": (I8, (4, 64))}, {"x": x}, A.NegateAttrs(10, -20), expected=expected, atol=0)


@case
def avg_pool2d_int8_zero_points():
    x = _rng().integers(-128, 128, (1, 4, 4, 1)).astype(np.int8)
    attrs = A.AvgPool2dAttrs((2, 2), (2, 2), (0, 0, 0, 0), DType.INT32, input_zp=-1, output_zp=4)
    return _one(Op.AVG_POOL2D, {"x": (I8, (1, 4, 4, 1))}, {"x": x}, attrs)
