"""Local response normalization across channels, for the LRN of either importer.

``y = x / (bias + scale * sum(x^2 over a window of channels))^beta`` with the
channels on ``axis`` (1 for ONNX's NCHW, the last for TFLite's NHWC), the
window running from ``c - before`` to ``c + after`` and clipped at the edges
(ONNX LRN: ``scale = alpha / size``, ``before = floor((size - 1) / 2)``,
``after = ceil((size - 1) / 2)``; TFLite: ``scale = alpha``, both ``radius``).

TOSA has no window over the channel axis, so the squares are reshaped to
``[outer, C, inner, 1]``, an NHWC tensor whose *height* is the channel axis, and
one CONV2D with a ``[1, before + 1 + after, 1, 1]`` kernel of ``scale``
(zero padding: the clipped window) sums them; the exact sum times ``scale``
is what a channel-by-channel loop computes, up to the order of float
additions. The power is RSQRT for ``beta = 0.5``, RECIPROCAL for ``beta = 1``
and POW with ``-beta`` otherwise, which TOSA defines for the positive bases
that ``bias > 0`` guarantees.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op
from ..symbolic.expr import product
from .dims import reshape
from .errors import ConvertError

if TYPE_CHECKING:
    from ..ir.graph import Value
    from .context import LoweringContext


def local_response(ctx: LoweringContext, x: Value, before: int, after: int, scale: float, bias: float, beta: float, axis: int = 1) -> Value:
    """LRN of float ``x`` across the channels on ``axis`` (see the module docstring)."""
    if x.type.rank < 3 or not x.type.dtype.is_float:
        raise ConvertError(f"LRN needs a float input with channels and spatial dims, got {x.type}")
    shape = list(x.type.shape)
    squares = ctx.b.emit(Op.MUL, x, x, attrs=A.MulAttrs(0))
    rows = reshape(ctx, squares, [product(shape[:axis]), shape[axis], product(shape[axis + 1:]), 1])
    dtype = x.type.dtype.numpy
    kernel = ctx.b.const(np.full((1, before + 1 + after, 1, 1), scale, dtype))
    attrs = A.Conv2dAttrs((before, after, 0, 0), (1, 1), (1, 1), DType.FP32)
    sums = ctx.b.emit(Op.CONV2D, rows, kernel, ctx.b.const(np.zeros((1,), dtype)), attrs=attrs)
    base = ctx.b.emit(Op.ADD, reshape(ctx, sums, list(x.type.shape)), ctx.b.scalar_like(bias, x.type))
    return ctx.b.emit(Op.MUL, x, _negative_power(ctx, base, bias, beta), attrs=A.MulAttrs(0))


def _negative_power(ctx: LoweringContext, base: Value, bias: float, beta: float) -> Value:
    if beta == 0.5:
        return ctx.b.emit(Op.RSQRT, base)
    if beta == 1.0:
        return ctx.b.emit(Op.RECIPROCAL, base)
    if beta == 0.0:
        return ctx.b.scalar_like(1.0, base.type)
    if bias <= 0.0:
        raise ConvertError(f"LRN with bias {bias} <= 0 and beta {beta} raises a possibly zero sum to a negative "
                           "power, which TOSA POW leaves undefined (bias > 0, or beta 0.5 or 1, is supported)")
    return ctx.b.emit(Op.POW, base, ctx.b.scalar_like(-beta, base.type))
