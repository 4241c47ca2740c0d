"""Converters for TFLite elementwise ops: arithmetic (with fused activations),
math, comparisons, logic, SELECT and CAST (of RFFT2D's complex result: its real part).

ADD, SUB, MUL, MAXIMUM and MINIMUM of shape tensors (``SHAPE -> MUL -> RESHAPE``) stay index
arithmetic, through the shared ``index_arith``. Float DIV is MUL by
RECIPROCAL; int32 DIV truncates (TFLite's reference kernel is C++ ``/``),
which is TOSA's INTDIV. FLOOR_DIV and FLOOR_MOD correct the truncated
quotient toward negative infinity as TFLite's kernels do; of shape tensors
they are the index algebra's floordiv and mod (the same floor semantics).
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Callable, Optional

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.elementwise import binary_operands, divide, index_arith, sqrt, truncate
from ....lowering.typed import compare, int32_op, mul
from ..reader import ConvertError
from ..registry import converter
from .common import ComplexPair, fused

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....ir.types import TensorType
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader


def _arith(index_op_def: Optional[OpDef], tensor_fn: Callable[[TfliteContext, Value, Value], Value], options: str) -> tuple[str, Callable[[TfliteContext, OpReader], Converted]]:
    def convert(ctx: TfliteContext, node: OpReader) -> Converted:
        if index_op_def is not None:
            st = index_arith(ctx, node.inputs[0], node.inputs[1], index_op_def)
            if st is not None:
                return st
        return fused(ctx, node, tensor_fn(ctx, *binary_operands(ctx, node)))
    return options, convert


for _name, (_opts, _fn) in {
        "ADD": _arith(Op.INDEX_ADD, lambda ctx, a, b: int32_op(ctx, Op.ADD, a, b), "AddOptions"),
        "SUB": _arith(Op.INDEX_SUB, lambda ctx, a, b: int32_op(ctx, Op.SUB, a, b), "SubOptions"),
        "MUL": _arith(Op.INDEX_MUL, mul, "MulOptions"),
        "DIV": _arith(None, divide, "DivOptions")}.items():
    converter(_name, options=_opts)(_fn)


def _binary(fn: Callable[[TfliteContext, Value, Value], Value]) -> Callable[[TfliteContext, OpReader], Converted]:
    def convert(ctx: TfliteContext, node: OpReader) -> Converted:
        return fn(ctx, *binary_operands(ctx, node))
    return convert


converter("EQUAL")(_binary(lambda ctx, a, b: compare(ctx, Op.EQUAL, a, b)))
converter("NOT_EQUAL")(_binary(lambda ctx, a, b: ctx.b.emit(Op.LOGICAL_NOT, compare(ctx, Op.EQUAL, a, b))))
converter("GREATER")(_binary(lambda ctx, a, b: compare(ctx, Op.GREATER, a, b)))
converter("GREATER_EQUAL")(_binary(lambda ctx, a, b: compare(ctx, Op.GREATER_EQUAL, a, b)))
converter("LESS")(_binary(lambda ctx, a, b: compare(ctx, Op.GREATER, b, a)))
converter("LESS_EQUAL")(_binary(lambda ctx, a, b: compare(ctx, Op.GREATER_EQUAL, b, a)))
converter("LOGICAL_AND")(_binary(lambda ctx, a, b: ctx.b.emit(Op.LOGICAL_AND, a, b)))
converter("LOGICAL_OR")(_binary(lambda ctx, a, b: ctx.b.emit(Op.LOGICAL_OR, a, b)))


@converter("SQUARED_DIFFERENCE")
def convert_squared_difference(ctx: TfliteContext, node: OpReader) -> Converted:
    d = int32_op(ctx, Op.SUB, *binary_operands(ctx, node))
    return mul(ctx, d, d)


@converter("POW")
def convert_pow(ctx: TfliteContext, node: OpReader) -> Converted:
    a, b = binary_operands(ctx, node)
    if not a.type.dtype.is_float:
        raise ConvertError("integer POW is not supported (TOSA POW is float-only)")
    return ctx.b.emit(Op.POW, a, b)


def _index_or(index_op_def: OpDef) -> Callable[[Callable[[TfliteContext, OpReader], Converted]], Callable[[TfliteContext, OpReader], Converted]]:
    """A converter on tensors that becomes ``index_op_def`` when its operands are shape arithmetic."""
    def wrap(fn: Callable[[TfliteContext, OpReader], Converted]) -> Callable[[TfliteContext, OpReader], Converted]:
        @functools.wraps(fn)
        def convert(ctx: TfliteContext, node: OpReader) -> Converted:
            st = index_arith(ctx, node.inputs[0], node.inputs[1], index_op_def)
            return st if st is not None else fn(ctx, node)
        return convert
    return wrap


# of shape tensors (tf.signal.frame's max(frames, 0)), the dim algebra's max and min
converter("MAXIMUM")(_index_or(Op.INDEX_MAX)(_binary(lambda ctx, a, b: int32_op(ctx, Op.MAXIMUM, a, b,
                                                                                 attrs=A.NanModeAttrs()))))
converter("MINIMUM")(_index_or(Op.INDEX_MIN)(_binary(lambda ctx, a, b: int32_op(ctx, Op.MINIMUM, a, b,
                                                                                 attrs=A.NanModeAttrs()))))


@converter("FLOOR_DIV")
@_index_or(Op.INDEX_FLOORDIV)   # floor division, as the dim algebra's floordiv
def convert_floor_div(ctx: TfliteContext, node: OpReader) -> Converted:
    a, b = binary_operands(ctx, node)
    if a.type.dtype.is_float:
        return ctx.b.emit(Op.FLOOR, divide(ctx, a, b))
    q = int32_op(ctx, Op.INTDIV, a, b)
    r = int32_op(ctx, Op.SUB, a, mul(ctx, q, b))
    return int32_op(ctx, Op.SUB, q, _floor_fix(ctx, r, b, q.type))


@converter("FLOOR_MOD")
@_index_or(Op.INDEX_MOD)        # the divisor's sign, as the dim algebra's mod
def convert_floor_mod(ctx: TfliteContext, node: OpReader) -> Converted:
    a, b = binary_operands(ctx, node)
    if a.type.dtype.is_float:
        r = ctx.b.emit(Op.SUB, a, mul(ctx, truncate(ctx, divide(ctx, a, b)), b))
    else:
        r = int32_op(ctx, Op.SUB, a, mul(ctx, int32_op(ctx, Op.INTDIV, a, b), b))
    fix = _floor_fix(ctx, r, b, r.type)
    return int32_op(ctx, Op.ADD, r, mul(ctx, fix, b))


def _floor_fix(ctx: TfliteContext, r: Value, b: Value, like: TensorType) -> Value:
    """1 where a truncated remainder ``r`` is nonzero with a sign other than the divisor's, else 0."""
    zero = ctx.b.scalar_like(0, r.type)
    r_neg = compare(ctx, Op.GREATER, zero, r)
    b_neg = compare(ctx, Op.GREATER, ctx.b.scalar_like(0, b.type), b)
    nonzero = ctx.b.emit(Op.LOGICAL_NOT, compare(ctx, Op.EQUAL, r, zero))
    wrong = ctx.b.emit(Op.LOGICAL_AND, nonzero, ctx.b.emit(Op.LOGICAL_XOR, r_neg, b_neg))
    return ctx.b.emit(Op.SELECT, wrong, ctx.b.scalar_like(1, like), ctx.b.scalar_like(0, like))


def _unary(op: OpDef) -> Callable[[TfliteContext, OpReader], Value]:
    def convert(ctx: TfliteContext, node: OpReader) -> Value:
        return ctx.b.emit(op, ctx.tensor(node.inputs[0]))
    return convert


for _name, _op in (("EXP", Op.EXP), ("LOG", Op.LOG), ("ABS", Op.ABS), ("FLOOR", Op.FLOOR), ("CEIL", Op.CEIL),
                   ("SIN", Op.SIN), ("COS", Op.COS), ("RSQRT", Op.RSQRT), ("LOGICAL_NOT", Op.LOGICAL_NOT)):
    converter(_name)(_unary(_op))


@converter("NEG")
def convert_neg(ctx: TfliteContext, node: OpReader) -> Converted:
    return ctx.b.emit(Op.NEGATE, ctx.tensor(node.inputs[0]), attrs=A.NegateAttrs(0, 0))


@converter("SQRT")
def convert_sqrt(ctx: TfliteContext, node: OpReader) -> Converted:
    return sqrt(ctx, ctx.tensor(node.inputs[0]))


@converter("SQUARE")
def convert_square(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    return mul(ctx, x, x)


@converter("ROUND")
def convert_round(ctx: TfliteContext, node: OpReader) -> Converted:
    """TFLite ROUND rounds half to even (the reference kernel's RoundToNearest)."""
    x = ctx.tensor(node.inputs[0])
    floor = ctx.b.emit(Op.FLOOR, x)
    frac = ctx.b.emit(Op.SUB, x, floor)
    half = ctx.b.scalar_like(0.5, x.type)
    up = ctx.b.emit(Op.GREATER, frac, half)
    tie = ctx.b.emit(Op.EQUAL, frac, half)
    odd_floor = _is_odd(ctx, floor)
    bump = ctx.b.emit(Op.LOGICAL_OR, up, ctx.b.emit(Op.LOGICAL_AND, tie, odd_floor))
    return ctx.b.emit(Op.SELECT, bump, ctx.b.emit(Op.ADD, floor, ctx.b.scalar_like(1.0, x.type)), floor)


def _is_odd(ctx: TfliteContext, whole: Value) -> Value:
    halved = mul(ctx, whole, ctx.b.scalar_like(0.5, whole.type))
    return ctx.b.emit(Op.GREATER, halved, ctx.b.emit(Op.FLOOR, halved))


@converter("SELECT", "SELECT_V2")
def convert_select(ctx: TfliteContext, node: OpReader) -> Converted:
    c, a, b = (ctx.tensor(n) for n in node.inputs[:3])
    return ctx.b.emit(Op.SELECT, c, a, b)


_CAST = {"FLOAT32": DType.FP32, "FLOAT16": DType.FP16, "INT32": DType.INT32, "INT64": DType.INT32,
         "INT16": DType.INT16, "INT8": DType.INT8, "BOOL": DType.BOOL}


@converter("CAST")
def convert_cast(ctx: TfliteContext, node: OpReader) -> Converted:
    target_name = node.output_infos[0].type_name
    if target_name not in _CAST:
        raise ConvertError(f"CAST to {target_name} has no TOSA equivalent")
    target = _CAST[target_name]
    held = ctx.values.get(node.inputs[0])   # complex64 casts to a real type as its real part (cast.cc)
    x = held.real if isinstance(held, ComplexPair) else ctx.tensor(node.inputs[0])
    if x.type.dtype is target:
        return x
    if target is DType.BOOL:
        return ctx.b.emit(Op.LOGICAL_NOT, compare(ctx, Op.EQUAL, x, ctx.b.scalar_like(0, x.type)))
    if x.type.dtype.is_float and target.is_int:
        x = truncate(ctx, x)     # TFLite's cast is static_cast (truncation); TOSA CAST rounds
    return ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(target))


@converter("ADD_N")
def convert_add_n(ctx: TfliteContext, node: OpReader) -> Converted:
    out = ctx.tensor(node.inputs[0])
    for key in node.inputs[1:]:
        out = int32_op(ctx, Op.ADD, out, ctx.tensor(key))
    return out

