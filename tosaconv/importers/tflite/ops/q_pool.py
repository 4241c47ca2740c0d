"""Quantized MAX_POOL_2D and AVERAGE_POOL_2D (int8, uint8, int16), bit-exact with TFLite's kernels.

Both kernels work on the *stored* values and never rescale (pooling.cc only
DCHECKs that the input and output parameters agree, so LiteRT runs models
where they differ on the stored values as they are; tosaconv does the same).
A fused activation clamps to ``CalculateActivationRangeQuantized`` of the
output (:func:`q_accum.act_range`).

**MAX_POOL_2D** (reference_integer_ops::MaxPool, reference_ops::MaxPool for
uint8) is TOSA MAX_POOL2D on the stored values; uint8 goes through the
order-preserving ``u - 128`` (exact RESCALEs either side).

**AVERAGE_POOL_2D** (reference_integer_ops::AveragePool,
reference_ops::AveragePool for uint8) sums the stored values of the window's
*in-bounds* taps and divides by their count ``n`` rounding half away from
zero: ``acc > 0 ? (acc + n/2) / n : (acc - n/2) / n`` with C's truncating
division. That is TOSA's own AVG_POOL2D, which also counts only in-bounds
taps and computes ``floor(s * m / 2**S + 1/2)`` with ``reciprocal_scale(n)``:
``m / 2**S = 1/n + e`` with ``0 < e <= 1 / (2**30 n)``, because the spec's
numerator is ``2**30 + 1`` rather than ``2**30``. For ``|s| <= 2**15 n`` the
error ``|s| e <= 2**-15`` stays below the ``1 / (2n)`` gap between a
non-half ``s / n`` and a rounding boundary when ``n < 2**14``, and at an exact
half its sign follows ``s``, so positive halves round up and negative ones
down: half away from zero, as TFLite rounds (checked on every sum in
tests/importers/tflite/test_q_pool.py, and against LiteRT). So the pool is one
AVG_POOL2D with zero points 0 (uint8: -128 in and out, making the sum one of
``u``) whenever the window area is below 2**14 and TFLite's padding is TOSA's
``pad`` attribute. Where the geometry needs an explicit PAD (a symbolic H or
W), the padded rows would count, so tosaconv builds the kernel's own
arithmetic instead: the window sum is a DEPTHWISE_CONV2D with all-ones weights
(int32 accumulator; int48 for int16, then an exact 16-bit RESCALE to int32),
whose padding adds nothing; ``n`` per output position is a constant computed
from TFLite's own padding rule when H and W are static, and the same
convolution over a tensor of ones (DYN_TILE, static once bound) otherwise; the
rounding division is SELECT(acc > 0, acc + n/2, acc - n/2) then INTDIV (which
truncates toward zero, as C does).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....limits import check_tensor
from ....lowering.index_math import fill
from ....lowering.window import apply_fits, fit_window, lowest
from ....lowering.int32_ops import Int32Ops, int32_to_output
from ..qmath import same_types
from ..quant import unsigned, value_range
from ..reader import ConvertError
from ..registry import converter
from ..schema import tflite
from . import q_accum as Q
from .nn import pool_fits, pool_window

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....lowering.window import Window
    from ..context import TfliteContext
    from ..node import OpReader


def _bounded(ctx: TfliteContext, node: OpReader, y: Value, shift: int) -> Value:
    """``y`` (stored values minus ``shift``) clamped to the fused activation's range."""
    out = node.output_infos[0]
    lo, hi = Q.act_range(node, out)
    if (lo, hi) == value_range(out):
        return y
    if y.type.dtype == DType.INT32:
        ops = Int32Ops(ctx, y.type.rank)
        return ops.minimum(ops.maximum(y, lo - shift), hi - shift)
    return ctx.b.emit(Op.CLAMP, y, attrs=A.ClampAttrs(lo - shift, hi - shift))


def _input(ctx: TfliteContext, node: OpReader) -> tuple[Value, int]:
    """The rank-4 input in signed storage and its zero point as the pools see it (-128 for uint8, else 0)."""
    same_types(node, 1)
    info = node.input_infos[0]
    x, zp = Q.activation(ctx, node.inputs[0], info)
    if x.type.rank != 4:
        raise ConvertError(f"{node.op_type} needs a rank-4 NHWC input, got rank {x.type.rank}")
    return x, (-128 if unsigned(info) else 0)


@converter("MAX_POOL_2D", options="Pool2DOptions", form="quantized")
def convert_q_max_pool_2d(ctx: TfliteContext, node: OpReader) -> Converted:
    x, zp = _input(ctx, node)
    w = pool_window(node)
    x, pad = apply_fits(ctx, x, pool_fits(ctx, x, w), lowest(x.type.dtype))
    y = ctx.b.emit(Op.MAX_POOL2D, x, attrs=A.MaxPool2dAttrs(w.kernel, w.stride, pad))
    y = _bounded(ctx, node, y, -zp)
    return Q.to_unsigned(ctx, y) if zp else y


# AVG_POOL2D rounds as TFLite does for window areas below this (see the module docstring)
NATIVE_AREA_LIMIT = 1 << 14


@converter("AVERAGE_POOL_2D", options="Pool2DOptions", form="quantized")
def convert_q_average_pool_2d(ctx: TfliteContext, node: OpReader) -> Converted:
    x, zp = _input(ctx, node)
    w = pool_window(node)
    fits = pool_fits(ctx, x, w)
    if w.kernel[0] * w.kernel[1] < NATIVE_AREA_LIMIT and not any(f.append for f in fits):
        x, pad = apply_fits(ctx, x, fits, 0.0)     # no appends: at most a cut of unused rows
        attrs = A.AvgPool2dAttrs(w.kernel, w.stride, pad, DType.INT32, zp, zp)
        y = _bounded(ctx, node, ctx.b.emit(Op.AVG_POOL2D, x, attrs=attrs), -zp)
        return Q.to_unsigned(ctx, y) if zp else y
    mean = round_divide(ctx, _window_sum(ctx, x, w, zp), _count(ctx, x, w, node))
    return int32_to_output(ctx, _bounded(ctx, node, mean, 0), node.output_infos[0].type_name)


def round_divide(ctx: TfliteContext, total: Value, count: Union[np.ndarray, int, Value]) -> Value:
    """``total > 0 ? (total + n/2) / n : (total - n/2) / n`` in C's int32 arithmetic (``count``: n, as a
    numpy array or int32 tensor broadcasting against ``total``)."""
    ops = Int32Ops(ctx, total.type.rank)
    if isinstance(count, (np.ndarray, int)):
        count = np.asarray(count, np.int32).reshape(np.shape(count) or (1,) * total.type.rank)
        half, count = ctx.b.const(count // 2), ctx.b.const(count)
    else:
        half = ops.rdbpot_floor(count, 1)
    positive = ctx.b.emit(Op.GREATER, total, ops.const(0))
    rounded = ctx.b.emit(Op.SELECT, positive, ops.add(total, half), ops.sub(total, half))
    return ctx.b.emit(Op.INTDIV, rounded, count)


def _window_sum(ctx: TfliteContext, x: Value, w: Window, zp: int, channels: Optional[int] = None) -> Value:
    """The int32 sum of ``x - zp`` over each pooling window (padded taps add 0)."""
    c = x.type.shape[3] if channels is None else channels
    if not isinstance(c, int):
        raise ConvertError(f"quantized AVERAGE_POOL_2D with a symbolic channel count {c} is not supported")
    acc = DType.INT48 if x.type.dtype == DType.INT16 else DType.INT32
    x, pad = fit_window(ctx, x, w, float(zp))
    check_tensor("the window of ones of a quantized pool", tuple(w.kernel) + (c, 1), np.int8)
    ones = ctx.b.const(np.ones(tuple(w.kernel) + (c, 1), np.int8))
    bias = ctx.b.emit(Op.CONST, attrs=A.ConstAttrs(np.zeros((c,), np.int64), acc)) if acc == DType.INT48 \
        else ctx.b.const(np.zeros((c,), np.int32))
    attrs = A.Conv2dAttrs(pad, tuple(w.stride), (1, 1), acc, zp, 0)
    total = ctx.b.emit(Op.DEPTHWISE_CONV2D, x, ones, bias, attrs=attrs)
    return Q.narrow48(ctx, total)


def _count(ctx: TfliteContext, x: Value, w: Window, node: OpReader) -> Value:
    """The number of in-bounds taps per output position: ``[1, OH, OW, 1]`` numpy when H and W are
    static, else an int32 tensor summed from ones by the same window."""
    h, wd = x.type.shape[1:3]
    if isinstance(h, int) and isinstance(wd, int):
        same = node.opt("Padding") == tflite.Padding.SAME
        rows = _axis_counts(h, w.kernel[0], w.stride[0], same)
        cols = _axis_counts(wd, w.kernel[1], w.stride[1], same)
        return np.outer(rows, cols).reshape(1, rows.size, cols.size, 1)
    return _window_sum(ctx, fill(ctx, 1, DType.INT8, [1, h, wd, 1]), w, 0, channels=1)


def _axis_counts(size: int, k: int, stride: int, same: bool) -> np.ndarray:
    """In-bounds taps per output along one axis (TFLite's ComputePaddingHeightWidth, no dilation)."""
    out = (size + stride - 1) // stride if same else (size - k + stride) // stride
    if out < 1:
        raise ConvertError(f"AVERAGE_POOL_2D window {k} does not fit an axis of size {size}")
    pad = max(((out - 1) * stride + k - size) // 2, 0)
    starts = np.arange(out) * stride - pad
    return np.minimum(starts + k, size) - np.maximum(starts, 0)
