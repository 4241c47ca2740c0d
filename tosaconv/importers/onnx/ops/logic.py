"""Converters for ONNX logic, bitwise and classification ops: And, Or, Xor,
BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot, GreaterOrEqual, LessOrEqual,
IsNaN and IsInf.

The boolean ops are TOSA's LOGICAL_* ops and the bitwise ones its BITWISE_*
ops (int8, int16 and int32, as ONNX's signed types narrow). Comparisons go
through :func:`.elementwise.compare`, which widens int8/int16 to the int32
TOSA compares. IsNaN is ``NOT(x == x)``; IsInf compares with the infinities
it is asked to detect, and with neither asked for it is ``x > +inf``, which
is false everywhere (NaN included).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ....ir.ops import Op
from ....lowering.typed import compare
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


def _binary(op: OpDef) -> Callable[[ImportContext, NodeReader], Value]:
    def convert(ctx: ImportContext, node: NodeReader) -> Value:
        return ctx.b.emit(op, ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]))
    return convert


for _onnx, _op, _since in (("And", Op.LOGICAL_AND, 7), ("Or", Op.LOGICAL_OR, 7), ("Xor", Op.LOGICAL_XOR, 7),
                           ("BitwiseAnd", Op.BITWISE_AND, 18), ("BitwiseOr", Op.BITWISE_OR, 18),
                           ("BitwiseXor", Op.BITWISE_XOR, 18)):
    converter(_onnx, since=_since)(_binary(_op))


@converter("BitwiseNot", since=18)
def convert_bitwise_not(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if x.type.dtype.is_float or x.type.dtype.name == "BOOL":
        raise ConvertError(f"BitwiseNot is defined for integers, not {x.type.dtype.value}")
    return ctx.b.emit(Op.BITWISE_NOT, x)


@converter("GreaterOrEqual", since=12)
def convert_greater_or_equal(ctx: ImportContext, node: NodeReader) -> Converted:
    return compare(ctx, Op.GREATER_EQUAL, ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]))


@converter("LessOrEqual", since=12)
def convert_less_or_equal(ctx: ImportContext, node: NodeReader) -> Converted:
    return compare(ctx, Op.GREATER_EQUAL, ctx.tensor(node.inputs[1]), ctx.tensor(node.inputs[0]))


@converter("IsNaN", since=9)
def convert_is_nan(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    return ctx.b.emit(Op.LOGICAL_NOT, compare(ctx, Op.EQUAL, x, x))


@converter("IsInf", since=10)
def convert_is_inf(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    inf = ctx.b.scalar_like(float("inf"), x.type)
    positive = compare(ctx, Op.EQUAL, x, inf) if node.attr("detect_positive") else None
    negative = None
    if node.attr("detect_negative"):
        negative = compare(ctx, Op.EQUAL, x, ctx.b.scalar_like(float("-inf"), x.type))
    if positive is not None and negative is not None:
        return ctx.b.emit(Op.LOGICAL_OR, positive, negative)
    if positive is None and negative is None:
        return compare(ctx, Op.GREATER, x, inf)
    return positive if negative is None else negative
