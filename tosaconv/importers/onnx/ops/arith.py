"""Converters for ONNX Round, Sign and Mod, which TOSA has no single op for.

Round rounds half to even without leaving floating point (a CAST to int
would clip large values and lose NaN and infinities): with ``f = floor(x)``
and ``d = x - f`` (exact), the result is ``f + 1`` when ``d > 0.5`` or when
``d == 0.5`` and ``f`` is odd, else ``f``. Floats of magnitude 2^23 or more
are integers already, so ``d`` is 0 there; NaN and infinities pass through.

Sign is a pair of SELECTs (0 and NaN map to themselves), or a clamp to
[-1, 1] for integers.

Mod with ``fmod=1`` truncates (C's fmod: the result has the dividend's sign);
with ``fmod=0`` (integers only, as in ONNX) it floors (the divisor's sign).
Integers use INTDIV (int32; int8/int16 are widened and narrowed back) and a
correction for floor mod; a zero divisor gives 0, as the ONNX reference does.
Floats compute ``fmod(|a|, |b|)`` as ``|a| - floor(|a| * (1/|b|)) * |b|``
with one correction step each way for the rounding of the reciprocal, then
give it a's sign.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.elementwise import index_arith
from ....lowering.typed import clamp, compare, int32_op, mul, widen_int
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


def _c(ctx: ImportContext, value: float, x: Value) -> Value:
    return ctx.b.scalar_like(value, x.type)


def _emit(ctx: ImportContext, op: OpDef, *operands) -> Value:
    return ctx.b.emit(op, *operands)


def _select(ctx: ImportContext, cond: Value, a: Value, b: Value) -> Value:
    return ctx.b.emit(Op.SELECT, cond, a, b)


# -- Round -----------------------------------------------------------------------------

@converter("Round", since=11)
def convert_round(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if not x.type.dtype.is_float:
        raise ConvertError(f"Round is defined for floating point, not {x.type.dtype.value}")
    return round_half_even(ctx, x)


def round_half_even(ctx: ImportContext, x: Value) -> Value:
    f = _emit(ctx, Op.FLOOR, x)
    d = _emit(ctx, Op.SUB, x, f)
    half = _c(ctx, 0.5, x)
    above_half = compare(ctx, Op.GREATER, d, half)
    f_half = mul(ctx, f, half)
    odd = compare(ctx, Op.GREATER, f_half, _emit(ctx, Op.FLOOR, f_half))   # f / 2 is not an integer
    tie_to_odd = _emit(ctx, Op.LOGICAL_AND, compare(ctx, Op.EQUAL, d, half), odd)
    up = _emit(ctx, Op.LOGICAL_OR, above_half, tie_to_odd)
    return _select(ctx, up, _emit(ctx, Op.ADD, f, _c(ctx, 1, x)), f)


# -- Sign ------------------------------------------------------------------------------

@converter("Sign", since=9)
def convert_sign(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if not x.type.dtype.is_float:
        return _int_sign(ctx, x)
    zero = _c(ctx, 0, x)
    negative = _select(ctx, compare(ctx, Op.GREATER, zero, x), _c(ctx, -1, x), x)
    return _select(ctx, compare(ctx, Op.GREATER, x, zero), _c(ctx, 1, x), negative)


def _int_sign(ctx: ImportContext, x: Value) -> Value:
    if x.type.dtype is DType.BOOL:
        raise ConvertError("Sign is defined for numbers, not bool")
    return clamp(ctx, x, -1, 1)


# -- Mod --------------------------------------------------------------------------------

@converter("Mod", since=10)
def convert_mod(ctx: ImportContext, node: NodeReader) -> Converted:
    fmod = bool(node.attr("fmod"))
    if not fmod:
        shape_result = index_arith(ctx, node.inputs[0], node.inputs[1], Op.INDEX_MOD)
        if shape_result is not None:
            return shape_result
    a, b = ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1])
    if a.type.dtype.is_float:
        if not fmod:
            raise ConvertError("Mod of floating-point tensors needs fmod=1 (ONNX defines fmod=0 for "
                               "integers only)")
        return _float_fmod(ctx, a, b)
    if a.type.dtype is DType.BOOL:
        raise ConvertError("Mod is defined for numbers, not bool")
    return _narrow_back(ctx, _int_mod(ctx, widen_int(ctx, a), widen_int(ctx, b), fmod), a.type.dtype)


def _narrow_back(ctx: ImportContext, y: Value, dtype: DType) -> Value:
    return y if y.type.dtype is dtype else ctx.b.emit(Op.CAST, y, attrs=A.CastAttrs(dtype))


def _int_mod(ctx: ImportContext, a: Value, b: Value, fmod: bool) -> Value:
    """int32 ``a mod b``: truncated (fmod) or floored; 0 where b == 0."""
    zero = _c(ctx, 0, b)
    b_zero = compare(ctx, Op.EQUAL, b, zero)
    safe_b = _select(ctx, b_zero, _c(ctx, 1, b), b)
    t = int32_op(ctx, Op.SUB, a, mul(ctx, int32_op(ctx, Op.INTDIV, a, safe_b), safe_b))
    if not fmod:
        # A nonzero remainder whose sign differs from the divisor's moves by one divisor.
        signs_differ = _emit(ctx, Op.LOGICAL_XOR, compare(ctx, Op.GREATER, zero, t),
                             compare(ctx, Op.GREATER, zero, safe_b))
        nonzero = _emit(ctx, Op.LOGICAL_NOT, compare(ctx, Op.EQUAL, t, zero))
        fix = _emit(ctx, Op.LOGICAL_AND, signs_differ, nonzero)
        t = _select(ctx, fix, int32_op(ctx, Op.ADD, t, safe_b), t)
    return _select(ctx, b_zero, _c(ctx, 0, t), t)


def _float_fmod(ctx: ImportContext, a: Value, b: Value) -> Value:
    abs_a, abs_b = _emit(ctx, Op.ABS, a), _emit(ctx, Op.ABS, b)
    q = _emit(ctx, Op.FLOOR, mul(ctx, abs_a, _emit(ctx, Op.RECIPROCAL, abs_b)))
    r = _emit(ctx, Op.SUB, abs_a, mul(ctx, q, abs_b))
    r = _select(ctx, compare(ctx, Op.GREATER, _c(ctx, 0, r), r), _emit(ctx, Op.ADD, r, abs_b), r)
    r = _select(ctx, compare(ctx, Op.GREATER_EQUAL, r, abs_b), _emit(ctx, Op.SUB, r, abs_b), r)
    negative = compare(ctx, Op.GREATER, _c(ctx, 0, a), a)
    return _select(ctx, negative, _negate(ctx, r), r)


def _negate(ctx: ImportContext, x: Value) -> Value:
    return ctx.b.emit(Op.NEGATE, x, attrs=A.NegateAttrs(0, 0))
