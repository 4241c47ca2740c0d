"""Linear Resize of int8 and uint8 data, as onnxruntime computes it.

ONNX leaves the rounding of an integer linear Resize unspecified. onnxruntime,
whose quantizer leaves Resize on the quantized tensor in QOperator models,
interpolates the true values in float and converts the result to the integer
type with a C cast, which truncates toward zero (checked against its CPU
kernel for every coordinate mode). tosaconv does the same: the true values
(uint8 data in its signed form plus 128) as float32, the float Resize, a
truncation toward zero (FLOOR for values >= 0, else CEIL), and back to the
storage type. Interpolated values lie between input values, so they never
leave the type's range. TOSA's integer BILINEAR is not used: it returns the
unnormalized int32 sum, whose exact division would need a RESCALE that rounds.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from .qtypes import as_signed, stored_from_signed

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..context import ImportContext


def linear_8bit(ctx: ImportContext, x: Value, resize_float: Callable[[Value], Value]) -> Value:
    """``resize_float(float32 values)`` applied to the true values of 8-bit ``x``, truncated back."""
    signed, unsigned = as_signed(ctx, x)
    offset = unsigned.offset if unsigned is not None else 0
    f = ctx.b.emit(Op.CAST, signed, attrs=A.CastAttrs(DType.FP32))
    if offset:
        f = ctx.b.emit(Op.ADD, f, ctx.b.scalar_like(float(offset), f.type))
    y = _truncate(ctx, resize_float(f), nonnegative=unsigned is not None)
    if offset:
        y = ctx.b.emit(Op.SUB, y, ctx.b.scalar_like(float(offset), y.type))
    v = ctx.b.emit(Op.CAST, y, attrs=A.CastAttrs(DType.INT8))    # exact: y holds integers in range
    return v if unsigned is None else stored_from_signed(ctx, v, unsigned)


def _truncate(ctx: ImportContext, y: Value, nonnegative: bool) -> Value:
    down = ctx.b.emit(Op.FLOOR, y)
    if nonnegative:
        return down
    up = ctx.b.emit(Op.CEIL, y)
    positive = ctx.b.emit(Op.GREATER_EQUAL, y, ctx.b.scalar_like(0.0, y.type))
    return ctx.b.emit(Op.SELECT, positive, down, up)
