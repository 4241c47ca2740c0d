"""Converter for ONNX DynamicQuantizeLinear: uint8 quantization with parameters computed from the data.

Following ONNX's definition, in float TOSA: ``max`` and ``min`` over every
element (one REDUCE_MAX/REDUCE_MIN per axis), widened to include 0;
``scale = (max - min) / 255`` (1/255 when ``max == min``);
``zero_point = rint(clamp(-min / scale, 0, 255))``; ``y = clamp(rint(x /
scale) + zero_point, 0, 255)``. Rounding is TOSA's float-to-int CAST (ties
to even, like ``rint``). Divisions are a multiply by the RECIPROCAL with
one exact correction step (:mod:`.float_div`), so ties round as ONNX's do. ``y`` and ``y_zero_point`` are uint8:
unsigned bits in int8 tensors (see :mod:`.qtypes`), recorded as such so a
MatMulInteger or DequantizeLinear downstream reads them correctly.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.reduce import reduce_chain
from ..reader import ConvertError
from ..registry import converter
from .float_div import divide
from .qtypes import UINT8, clamp_int32, mark_unsigned

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


@converter("DynamicQuantizeLinear", since=11)
def convert_dynamic_quantize_linear(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if x.type.dtype != DType.FP32:
        raise ConvertError(f"DynamicQuantizeLinear takes float32 input, not {x.type.dtype.value}")
    q, scale, zero_point = quantize_uint8(ctx, x)
    y = mark_unsigned(ctx, _cast(ctx, q, DType.INT8), UINT8)
    zp = mark_unsigned(ctx, _scalar(ctx, _cast(ctx, zero_point, DType.INT8)), UINT8)
    return [y, _scalar(ctx, scale), zp]


def quantize_uint8(ctx: ImportContext, x: Value) -> tuple:
    """DynamicQuantizeLinear of float32 ``x`` as int32 values: ``(q in [0, 255], scale, zero point)``,
    the scale float and the zero point int32, both with every dim 1."""
    scale, zero_point = _parameters(ctx, x)
    q = _rint(ctx, divide(ctx, x, scale, ctx.b.emit(Op.RECIPROCAL, scale)))
    return clamp_int32(ctx, ctx.b.emit(Op.ADD, q, zero_point), 0, 255), scale, zero_point


def _parameters(ctx: ImportContext, x: Value) -> tuple[Value, Value]:
    """(scale as float [1,...,1], zero point as int32 [1,...,1])."""
    axes = range(x.type.rank)
    hi = reduce_chain(ctx, Op.REDUCE_MAX, x, axes)
    lo = reduce_chain(ctx, Op.REDUCE_MIN, x, axes)
    zero = ctx.b.scalar_like(0.0, hi.type)
    hi, lo = ctx.b.emit(Op.MAXIMUM, hi, zero), ctx.b.emit(Op.MINIMUM, lo, zero)
    span = ctx.b.emit(Op.SUB, hi, lo)
    flat = ctx.b.emit(Op.EQUAL, span, zero)
    span = ctx.b.emit(Op.SELECT, flat, ctx.b.scalar_like(1.0, span.type), span)
    ones = (1,) * x.type.rank
    scale = divide(ctx, span, np.full(ones, 255.0, np.float32), np.full(ones, 1.0 / 255.0, np.float32))
    shifted = divide(ctx, ctx.b.emit(Op.SUB, zero, lo), scale, ctx.b.emit(Op.RECIPROCAL, scale))
    shifted = ctx.b.emit(Op.CLAMP, shifted, attrs=A.ClampAttrs(0.0, 255.0))
    return scale, _rint(ctx, shifted)


def _rint(ctx: ImportContext, v: Value) -> Value:
    return _cast(ctx, v, DType.INT32)


def _cast(ctx: ImportContext, v: Value, dtype: DType) -> Value:
    return ctx.b.emit(Op.CAST, v, attrs=A.CastAttrs(dtype))


def _scalar(ctx: ImportContext, v: Value) -> Value:
    return ctx.b.emit(Op.RESHAPE, v, attrs=A.ReshapeAttrs(()))
