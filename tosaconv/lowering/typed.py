"""Emitting TOSA ops on the operand types TOSA 1.0 defines them for.

ONNX computes on every integer width; TOSA's ADD, SUB, INTDIV, MAXIMUM,
MINIMUM, EQUAL, GREATER and GREATER_EQUAL take int32 (and floats) but not
int8/int16, MUL of int8/int16 gives int32, CLAMP takes int8/int16 and floats
but not int32, and EQUAL takes no bool. Our interpreter would compute all of
these; the reference model (and hardware) refuse them. These helpers widen
int8/int16 operands to int32 and narrow the result back (exact: narrowing
keeps the low bits, which is ONNX's own wrap-around), clamp int32 with
MAXIMUM/MINIMUM, and compare bools with NOT(XOR), so that converters can stay
type-agnostic. ``tests/importers/onnx/test_arith_reference_model.py`` runs
each workaround on the official reference model.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..ir.ops import OpDef
    from .context import LoweringContext


def widen_int(ctx: LoweringContext, x: Value) -> Value:
    """int8/int16 ``x`` as int32 (TOSA's ADD, SUB, INTDIV, MAXIMUM, MINIMUM, comparisons take int32)."""
    if x.type.dtype in (DType.INT8, DType.INT16):
        return ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(DType.INT32))
    return x


def narrow_to(ctx: LoweringContext, y: Value, dtype: DType) -> Value:
    if y.type.dtype is dtype or y.type.dtype is DType.BOOL:
        return y
    return ctx.b.emit(Op.CAST, y, attrs=A.CastAttrs(dtype))


def int32_op(ctx: LoweringContext, op: OpDef, *operands: Value, attrs: Optional[A.Attrs] = None) -> Value:
    """``op`` on operands of one type; int8/int16 ones are computed in int32 and narrowed back.

    Narrowing truncates to the low bits, which is the wrap-around ONNX's integer arithmetic has.
    """
    dtype = operands[0].type.dtype
    if dtype not in (DType.INT8, DType.INT16):
        return ctx.b.emit(op, *operands, attrs=attrs)
    return narrow_to(ctx, ctx.b.emit(op, *(widen_int(ctx, v) for v in operands), attrs=attrs), dtype)


def mul(ctx: LoweringContext, a: Value, b: Value) -> Value:
    """MUL with shift 0; int8/int16 products (int32 in TOSA) are narrowed back, wrapping like ONNX."""
    return narrow_to(ctx, ctx.b.emit(Op.MUL, a, b, attrs=A.MulAttrs(0)), a.type.dtype)


def compare(ctx: LoweringContext, op: OpDef, a: Value, b: Value) -> Value:
    """EQUAL / GREATER / GREATER_EQUAL on the types TOSA compares (int32 and floats).

    int8 and int16 operands are widened to int32 first (exact); bool equality is NOT(XOR).
    """
    if a.type.dtype is DType.BOOL and op is Op.EQUAL:
        return ctx.b.emit(Op.LOGICAL_NOT, ctx.b.emit(Op.LOGICAL_XOR, a, b))
    return int32_op(ctx, op, a, b)


def _typed(v: float, x: Value) -> float | int:
    """A bound of ``x``'s type: an int, or a float the type can hold. A float bound beyond the type's finite
    range (a Relu's float32 FLT_MAX on fp16 data) is infinite: every finite value of the type lies inside
    it, and an infinity is clamped to it, which in the type is that infinity again."""
    if not x.type.dtype.is_float:
        return int(v)
    limit = float(np.finfo(x.type.dtype.numpy).max)
    return float(v) if abs(float(v)) <= limit or np.isnan(v) else float(np.copysign(np.inf, v))


def clamp(ctx: LoweringContext, x: Value, lo: float, hi: float) -> Value:
    """CLAMP to [lo, hi]; for int32 data, which TOSA's CLAMP does not take, MAXIMUM and MINIMUM
    with constants (a bound at the end of the int32 range needs no op)."""
    if x.type.dtype is not DType.INT32:
        return ctx.b.emit(Op.CLAMP, x, attrs=A.ClampAttrs(_typed(lo, x), _typed(hi, x)))
    limits = np.iinfo(np.int32)
    if lo > limits.min:
        x = ctx.b.emit(Op.MAXIMUM, x, ctx.b.scalar_like(lo, x.type), attrs=A.NanModeAttrs())
    if hi < limits.max:
        x = ctx.b.emit(Op.MINIMUM, x, ctx.b.scalar_like(hi, x.type), attrs=A.NanModeAttrs())
    return x
