"""Converters for ONNX elementwise ops: arithmetic, math, activations,
comparisons, logic, Where and Cast, and the variadic Min, Max, Sum and Mean.

Arithmetic on shape tensors (``Shape -> Mul -> Reshape``) stays index
arithmetic on Index values; everything else maps to TOSA elementwise ops,
through the helpers of :mod:`tosaconv.lowering.typed` where TOSA lacks an operand type
(int8/int16 arithmetic and comparisons, int32 clamps, bool equality).
Operands keep ONNX's numpy-style ranks here; the rank-equalization pass makes
them equal and the broadcast-check pass records the ledger entries.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import numpy as np
import onnx

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.elementwise import binary_operands, divide, index_arith, index_elementwise, sqrt, truncate
from ....lowering.index_select import index_equal, index_where
from ....lowering.typed import clamp, compare, int32_op, mul
from ..context import ShapeTensor
from ..unsigned_io import true_value
from .qtypes import UINT8, UINT16, mark_unsigned, stored_qtype
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader
    from .qtypes import QType

FLOAT_MAX = float(np.finfo(np.float32).max)
MAX_POW_BY_MUL = 8   # integer exponents up to this become repeated MUL


def _arith(index_op_def: OpDef, tensor_fn: Callable[[ImportContext, Value, Value], Value]) -> Callable[[ImportContext, NodeReader], Converted]:
    def convert(ctx: ImportContext, node: NodeReader) -> Converted:
        result = index_arith(ctx, node.inputs[0], node.inputs[1], index_op_def)
        return result if result is not None else tensor_fn(ctx, *binary_operands(ctx, node))
    return convert


converter("Add", since=7)(_arith(Op.INDEX_ADD, lambda ctx, a, b: int32_op(ctx, Op.ADD, a, b)))
converter("Sub", since=7)(_arith(Op.INDEX_SUB, lambda ctx, a, b: int32_op(ctx, Op.SUB, a, b)))
converter("Mul", since=7)(_arith(Op.INDEX_MUL, mul))
converter("Div", since=7)(_arith(Op.INDEX_FLOORDIV, divide))


def _variadic(op: OpDef, index_op_def: OpDef) -> Callable[[ImportContext, NodeReader], Converted]:
    def convert(ctx: ImportContext, node: NodeReader) -> Converted:
        names = [n for n in node.inputs if n]
        if all(isinstance(ctx.values.get(n), ShapeTensor) or ctx.shape_tensor(n) for n in names) and \
                any(isinstance(ctx.values.get(n), ShapeTensor) for n in names):
            out = ctx.shape_tensor(names[0])
            for n in names[1:]:
                out = index_elementwise(ctx, index_op_def, out, ctx.shape_tensor(n))
            return out
        out = ctx.tensor(names[0])
        for n in names[1:]:
            out = int32_op(ctx, op, out, ctx.tensor(n))
        return out
    return convert


converter("Min", since=8)(_variadic(Op.MINIMUM, Op.INDEX_MIN))
converter("Max", since=8)(_variadic(Op.MAXIMUM, Op.INDEX_MAX))
converter("Sum", since=8)(_variadic(Op.ADD, Op.INDEX_ADD))


@converter("Mean", since=8)
def convert_mean(ctx: ImportContext, node: NodeReader) -> Converted:
    """The Sum of the inputs times 1/count (ONNX defines Mean for floating point only)."""
    total = _variadic(Op.ADD, Op.INDEX_ADD)(ctx, node)
    count = len([n for n in node.inputs if n])
    if count == 1:
        return total
    return mul(ctx, total, ctx.b.scalar_like(1.0 / count, total.type))


def _unary(op: OpDef) -> Callable[[ImportContext, NodeReader], Value]:
    def convert(ctx: ImportContext, node: NodeReader) -> Value:
        return ctx.b.emit(op, ctx.tensor(node.inputs[0]))
    return convert


for _onnx, _op in (("Reciprocal", Op.RECIPROCAL), ("Exp", Op.EXP), ("Log", Op.LOG), ("Abs", Op.ABS),
                   ("Sigmoid", Op.SIGMOID), ("Tanh", Op.TANH), ("Erf", Op.ERF), ("Not", Op.LOGICAL_NOT),
                   ("Floor", Op.FLOOR), ("Ceil", Op.CEIL), ("Sin", Op.SIN), ("Cos", Op.COS)):
    converter(_onnx, since=1)(_unary(_op))


@converter("Neg", since=6)
def convert_neg(ctx: ImportContext, node: NodeReader) -> Converted:
    held = ctx.values.get(node.inputs[0])
    if isinstance(held, ShapeTensor):   # shape arithmetic (a crop computed from a dim) stays Index values
        return index_elementwise(ctx, Op.INDEX_SUB, ShapeTensor([ctx.index(0)], scalar=True), held)
    return ctx.b.emit(Op.NEGATE, ctx.tensor(node.inputs[0]), attrs=A.NegateAttrs(0, 0))


@converter("Sqrt", since=6)
def convert_sqrt(ctx: ImportContext, node: NodeReader) -> Converted:
    return sqrt(ctx, ctx.tensor(node.inputs[0]))


@converter("Relu", since=6)
def convert_relu(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    hi = FLOAT_MAX if x.type.dtype.is_float else int(np.iinfo(x.type.dtype.numpy).max)
    return clamp(ctx, x, 0, hi)


@converter("LeakyRelu", since=6)
def convert_leaky_relu(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    alpha = ctx.b.scalar_like(node.attr("alpha"), x.type)
    positive = ctx.b.emit(Op.GREATER_EQUAL, x, ctx.b.scalar_like(0, x.type))
    return ctx.b.emit(Op.SELECT, positive, x, mul(ctx, x, alpha))


@converter("Clip", since=11)
def convert_clip(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    lo, hi = ctx.const(node.input(1)), ctx.const(node.input(2))
    if (node.input(1) is None or lo is not None) and (node.input(2) is None or hi is not None):
        info = np.finfo(np.float32) if x.type.dtype.is_float else np.iinfo(x.type.dtype.numpy)
        lo_v = info.min if lo is None else lo.item()
        hi_v = info.max if hi is None else hi.item()
        # ONNX gives min(max(x, lo), hi) = hi everywhere when lo > hi; TOSA's CLAMP needs min_val <= max_val.
        return clamp(ctx, x, min(lo_v, hi_v), hi_v)
    if node.input(1):
        x = int32_op(ctx, Op.MAXIMUM, x, ctx.tensor(node.input(1)))
    if node.input(2):
        x = int32_op(ctx, Op.MINIMUM, x, ctx.tensor(node.input(2)))
    return x


@converter("Pow", since=7)
def convert_pow(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    e = ctx.const(node.inputs[1])
    if e is not None and e.size == 1:
        special = _pow_special(ctx, x, float(e.reshape(-1)[0]))
        if special is not None:
            return special
    return _float_pow(ctx, x, ctx.tensor(node.inputs[1]))


def _float_pow(ctx: ImportContext, x: Value, e: Value) -> Value:
    """POW in floating point: an exponent of another type is cast to the base's type, and an
    integer base is raised in float32 and rounded back (exact while the result fits 24 bits)."""
    base = x if x.type.dtype.is_float else ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(DType.FP32))
    if e.type.dtype is not base.type.dtype:
        e = ctx.b.emit(Op.CAST, e, attrs=A.CastAttrs(base.type.dtype))
    y = ctx.b.emit(Op.POW, base, e)
    return y if y.type.dtype is x.type.dtype else ctx.b.emit(Op.CAST, y, attrs=A.CastAttrs(x.type.dtype))


def _pow_special(ctx: ImportContext, x: Value, e: float) -> Optional[Value]:
    """Exponents TOSA POW handles poorly (POW is undefined for negative bases): 0.5 and small integers."""
    if e == 0.5:
        return sqrt(ctx, x)
    if e != int(e) or abs(e) > MAX_POW_BY_MUL or (e < 0 and not x.type.dtype.is_float):
        return None
    if e == 0:
        return int32_op(ctx, Op.ADD, mul(ctx, x, ctx.b.scalar_like(0, x.type)), ctx.b.scalar_like(1, x.type))
    out = x
    for _ in range(abs(int(e)) - 1):
        out = mul(ctx, out, x)
    return ctx.b.emit(Op.RECIPROCAL, out) if e < 0 else out


@converter("Where", since=9)
def convert_where(ctx: ImportContext, node: NodeReader) -> Converted:
    picked = index_where(ctx, *node.inputs[:3])   # shape tensors under a condition decided at import
    if picked is not None:
        return picked
    c, a, b = (ctx.tensor(n) for n in node.inputs[:3])
    return ctx.b.emit(Op.SELECT, c, a, b)


@converter("Equal", since=7)
def convert_equal(ctx: ImportContext, node: NodeReader) -> Converted:
    decided = index_equal(ctx, node.inputs[0], node.inputs[1])   # dims compared for every binding
    if decided is not None:
        return ctx.b.const(decided)
    return compare(ctx, Op.EQUAL, *binary_operands(ctx, node))


@converter("Greater", since=7)
def convert_greater(ctx: ImportContext, node: NodeReader) -> Converted:
    return compare(ctx, Op.GREATER, *binary_operands(ctx, node))


@converter("Less", since=7)
def convert_less(ctx: ImportContext, node: NodeReader) -> Converted:
    a, b = binary_operands(ctx, node)
    return compare(ctx, Op.GREATER, b, a)


_CAST_TARGETS = {
    onnx.TensorProto.FLOAT: DType.FP32, onnx.TensorProto.DOUBLE: DType.FP32,
    onnx.TensorProto.FLOAT16: DType.FP16, onnx.TensorProto.INT64: DType.INT32,
    onnx.TensorProto.INT32: DType.INT32, onnx.TensorProto.INT16: DType.INT16,
    onnx.TensorProto.INT8: DType.INT8, onnx.TensorProto.BOOL: DType.BOOL,
}


_UNSIGNED_TARGETS = {onnx.TensorProto.UINT8: UINT8, onnx.TensorProto.UINT16: UINT16}
# 4- and 2-bit integers, stored as INT8 holding their true values: (bits, signed)
_NARROW_TARGETS = {onnx.TensorProto.INT4: (4, True), onnx.TensorProto.UINT4: (4, False),
                   onnx.TensorProto.INT2: (2, True), onnx.TensorProto.UINT2: (2, False)}


def _no_tosa_targets() -> tuple:
    """The ONNX element types a Cast cannot produce: every type but those with a TOSA (or unsigned I/O) form."""
    known = set(_CAST_TARGETS) | set(_UNSIGNED_TARGETS) | set(_NARROW_TARGETS) | {onnx.TensorProto.UNDEFINED}
    return tuple(name for name, code in onnx.TensorProto.DataType.items() if code not in known)


CAST_TARGET = publish("Cast", Limit(
    "target-dtype", LimitKind.ATTRIBUTE, "to", _no_tosa_targets(),
    "TOSA 1.0 (PRO-FP, PRO-INT) has no tensors of these types", "cast to a float, int8/16/32/64 or bool type"))


@converter("Cast", since=6)
def convert_cast(ctx: ImportContext, node: NodeReader) -> Converted:
    to = node.attr("to")
    if to in _UNSIGNED_TARGETS:
        return _cast_to_unsigned(ctx, node, _UNSIGNED_TARGETS[to])
    if to in _NARROW_TARGETS:
        return _cast_to_narrow(ctx, node, *_NARROW_TARGETS[to])
    if to not in _CAST_TARGETS:
        raise CAST_TARGET.refuse(f"Cast to {onnx.TensorProto.DataType.Name(to)}")
    st = ctx.values.get(node.inputs[0])
    if isinstance(st, ShapeTensor) and _CAST_TARGETS[to] in (DType.INT32, DType.INT16):
        return st
    x = true_value(ctx, ctx.tensor(node.inputs[0]))     # uint8 bits read as their values
    target = _CAST_TARGETS[to]
    if x.type.dtype is target:
        return x
    if x.type.dtype.is_float and target.is_int:
        x = truncate(ctx, x)
    return ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(target))


def _as_int32(ctx: ImportContext, x: Value) -> Value:
    """``x`` (uint8 bits read as values, floats truncated toward zero) as INT32."""
    x = true_value(ctx, x)
    if x.type.dtype.is_float:
        x = truncate(ctx, x)
    return x if x.type.dtype is DType.INT32 else ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(DType.INT32))


def _cast_to_narrow(ctx: ImportContext, node: NodeReader, bits: int, signed: bool) -> Value:
    """An int4/uint4/int2/uint2 result as INT8 holding its true value: the low ``bits`` bits of the integer
    (ONNX's Cast wraps), sign-extended when ``signed`` (``((x + half) & mask) - half``)."""
    x = _as_int32(ctx, ctx.tensor(node.inputs[0]))
    half = 1 << (bits - 1) if signed else 0
    if half:
        x = ctx.b.emit(Op.ADD, x, ctx.b.scalar_like(half, x.type))
    x = ctx.b.emit(Op.BITWISE_AND, x, ctx.b.scalar_like((1 << bits) - 1, x.type))
    if half:
        x = ctx.b.emit(Op.SUB, x, ctx.b.scalar_like(half, x.type))
    return ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(DType.INT8))


def _cast_to_unsigned(ctx: ImportContext, node: NodeReader, qtype: QType) -> Value:
    """uint8/uint16 storage (the low bits, as ONNX's integer Cast wraps; floats truncated first)."""
    x = ctx.tensor(node.inputs[0])
    if stored_qtype(ctx, x) is qtype:
        return x
    x = true_value(ctx, x)
    if x.type.dtype.is_float:
        x = truncate(ctx, x)
    if x.type.dtype is DType.BOOL or x.type.dtype.is_float or x.type.dtype is not DType.INT32:
        x = ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(DType.INT32))
    return mark_unsigned(ctx, ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(qtype.dtype)), qtype)
