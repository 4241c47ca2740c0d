"""More one-op graphs, so every attribute codec is exercised at least once.

ARGMAX, the NaN-mode ops, ARITHMETIC_RIGHT_SHIFT, TRANSPOSE_CONV2D, REVERSE,
SCATTER, bilinear RESIZE, a 16-bit-multiplier RESCALE and a few plain
elementwise ops. Same protocol as ``cases.py``; expectations where trivial.
"""
from __future__ import annotations

import numpy as np

from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.location import Location
from tosaconv.ir.ops import Op
from tosaconv.ir.types import TensorType

from .cases import BOOL, F32, I8, I32, _finish, _graph, _one, _rand, _rng, case


@case
def argmax():
    x = _rand((2, 5))
    return _one(Op.ARGMAX, {"x": (F32, (2, 5))}, {"x": x}, A.AxisNanAttrs(1, "IGNORE"),
                expected=x.argmax(axis=1).astype(np.int32), atol=0)


@case
def reduce_max():
    x = _rand((3, 4))
    return _one(Op.REDUCE_MAX, {"x": (F32, (3, 4))}, {"x": x}, A.AxisNanAttrs(0),
                expected=x.max(axis=0, keepdims=True))


@case
def maximum_ignore_nan():
    x, z = _rand((2, 3)), _rand((2, 3))
    return _one(Op.MAXIMUM, {"x": (F32, (2, 3)), "z": (F32, (2, 3))}, {"x": x, "z": z},
                A.NanModeAttrs("IGNORE"), expected=np.maximum(x, z))


@case
def arithmetic_right_shift_round():
    rng = _rng()
    x, s = rng.integers(-10000, 10000, (2, 4)), rng.integers(1, 8, (2, 4))
    expected = ((x + (1 << (s - 1))) >> s).astype(np.int32)
    return _one(Op.ARITHMETIC_RIGHT_SHIFT, {"x": (I32, (2, 4)), "s": (I32, (2, 4))}, {"x": x, "s": s},
                A.ArithmeticRightShiftAttrs(True), expected=expected, atol=0)


@case
def transpose_conv2d():
    x, w, bias = _rand((1, 3, 3, 2)), _rand((2, 2, 2, 2)), _rand((2,))
    g, b, (xv,) = _graph(x=(F32, (1, 3, 3, 2)))
    with b.at(Location("ConvTranspose", "deconv", "onnx")):
        wv, bv = b.const(w), b.const(bias)
        y = b.emit(Op.TRANSPOSE_CONV2D, xv, wv, bv, attrs=A.TransposeConv2dAttrs((0, 0, 0, 0), (2, 2), F32))
    # stride 2 with a 2x2 kernel: every output pixel gets exactly one input pixel's contribution.
    expected = np.einsum("nijc,ohwc->nihjwo", x, w).reshape(1, 6, 6, 2) + bias
    return _finish(g, b, y, {"x": x}, expected.astype(np.float32), atol=1e-5)


@case
def reverse():
    x = _rand((2, 3, 4))
    return _one(Op.REVERSE, {"x": (F32, (2, 3, 4))}, {"x": x}, A.AxisAttrs(2), expected=x[:, :, ::-1])


@case
def scatter():
    values, updates = _rand((1, 5, 2)), _rand((1, 2, 2))
    idx = np.array([[3, 1]], dtype=np.int32)
    expected = values.copy()
    expected[0, idx[0]] = updates[0]
    return _one(Op.SCATTER, {"v": (F32, (1, 5, 2)), "i": (I32, (1, 2)), "u": (F32, (1, 2, 2))},
                {"v": values, "i": idx, "u": updates}, expected=expected)


@case
def resize_bilinear():
    x = _rand((1, 2, 2, 1))
    return _one(Op.RESIZE, {"x": (F32, (1, 2, 2, 1))}, {"x": x},
                A.ResizeAttrs((4, 2, 4, 2), (-1, -1), (1, 1), "BILINEAR"))


@case
def resize_bilinear_int8():
    """int8 BILINEAR gives int32 sums scaled by scale_y_n * scale_x_n (here 2 x 2), as the spec types it."""
    a = np.array([[-128, 127, 5], [-7, 0, 127], [127, -128, -1]], np.int8)
    w = a.astype(np.int32)
    want = np.zeros((5, 5), np.int32)
    want[::2, ::2] = 4 * w
    want[1::2, ::2] = 2 * (w[:-1] + w[1:])
    want[::2, 1::2] = 2 * (w[:, :-1] + w[:, 1:])
    want[1::2, 1::2] = w[:-1, :-1] + w[1:, :-1] + w[:-1, 1:] + w[1:, 1:]
    return _one(Op.RESIZE, {"x": (I8, (1, 3, 3, 1))}, {"x": a.reshape(1, 3, 3, 1)},
                A.ResizeAttrs((2, 1, 2, 1), (0, 0), (0, 0), "BILINEAR"), expected=want.reshape(1, 5, 5, 1),
                atol=0)


@case
def rescale_int16_multiplier():
    x = np.arange(-64, 64, dtype=np.int16).reshape(2, 64) * 3
    attrs = A.RescaleAttrs((16384,), (15,), scale32=False)
    expected = np.clip((x.astype(np.int64) * 16384 + (1 << 14)) >> 15, -128, 127).astype(np.int8)
    return _one(Op.RESCALE, {"x": (DType.INT16, (2, 64))}, {"x": x}, attrs, expected=expected,
                result_type=TensorType(I8, (2, 64)), atol=0)


@case
def equal():
    x = _rng().integers(0, 3, (2, 3)).astype(np.int32)
    z = np.ones((1, 3), dtype=np.int32)
    return _one(Op.EQUAL, {"x": (I32, (2, 3)), "z": (I32, (1, 3))}, {"x": x, "z": z}, expected=x == z, atol=0)


@case
def logical_and():
    rng = _rng()
    x, z = rng.random((2, 3)) > 0.5, rng.random((2, 3)) > 0.5
    return _one(Op.LOGICAL_AND, {"x": (BOOL, (2, 3)), "z": (BOOL, (2, 3))}, {"x": x, "z": z},
                expected=x & z, atol=0)


@case
def tanh():
    x = _rand((2, 3))
    return _one(Op.TANH, {"x": (F32, (2, 3))}, {"x": x}, expected=np.tanh(x))
