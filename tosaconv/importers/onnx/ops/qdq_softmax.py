"""An integer Softmax for ``DequantizeLinear -> Softmax -> QuantizeLinear``.

The float Softmax (:mod:`.normalize`: subtract the max, EXP, REDUCE_SUM,
RECIPROCAL, MUL) is recognised by its source location, and rebuilt on the int8
data, all in TOSA integer ops:

* ``d = q - max(q)`` lies in ``[-255, 0]``, so ``d + 127`` is an int8 index;
* ``E(d) = round(16383 * exp(scale * d))`` (14 bits) comes from two int8
  TABLEs, its high and low seven bits, combined in int32;
* the row sum ``S`` is an int32 REDUCE_SUM (exact up to 131072 elements);
* the output ``E / (S * y_scale)`` is ``INTDIV(E * M + S/2, S)`` with
  ``M = round(2**P / y_scale)`` as large as int32 allows, then a RESCALE by
  ``2**-P`` and the output zero point.

E's relative error is at most ``2**-15`` for the terms that matter, so the
result is within one unit of the float Softmax quantized, and equal to it
except near rounding ties.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from .qdq_core import NoFold, NotMine, activation, emit_activation, trace
from .qtypes import rescale

if TYPE_CHECKING:
    from ....ir.graph import Operation
    from ....ir.ops import OpDef
    from ..context import ImportContext

E_BITS = 14
E_MAX = (1 << E_BITS) - 1
MAX_ROW = 1 << 17               # S <= MAX_ROW * E_MAX stays below 2**31


def softmax_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    p = x.producer
    if p is None or p.op is not Op.MUL or p.location.op_type not in ("Softmax", "QLinearSoftmax"):
        raise NotMine("not a Softmax")
    axes, source = _match(p)
    act = activation(trace(ctx, source))
    _check_row(source, axes)
    q = emit_activation(ctx, act)
    d = ctx.b.emit(Op.SUB, _int32(ctx, q), _int32(ctx, _reduce(ctx, Op.REDUCE_MAX, q, axes)))
    index = ctx.b.emit(Op.CAST, ctx.b.emit(Op.ADD, d, ctx.b.scalar_like(127, d.type)), attrs=A.CastAttrs(DType.INT8))
    e = _exp14(ctx, index, act.scale)
    total = _reduce(ctx, Op.REDUCE_SUM, e, axes)
    shift, m = _ratio(y_scale)
    num = ctx.b.emit(Op.MUL, e, ctx.b.scalar_like(m, e.type), attrs=A.MulAttrs(0))
    half = ctx.b.emit(Op.ARITHMETIC_RIGHT_SHIFT, total, ctx.b.scalar_like(1, total.type),
                      attrs=A.ArithmeticRightShiftAttrs(False))
    r = ctx.b.emit(Op.INTDIV, ctx.b.emit(Op.ADD, num, half), total)
    return rescale(ctx, r, 2.0 ** -shift, DType.INT8, output_zp=y_zp)


def _match(mul: Operation) -> tuple[list[int], Value]:
    """(softmax axes, the Softmax input) from the float ops: MUL(EXP(SUB(x, REDUCE_MAX...)), RECIPROCAL(...))."""
    exp = next((v.producer for v in mul.operands if v.producer is not None and v.producer.op is Op.EXP), None)
    sub = exp.operands[0].producer if exp is not None else None
    if sub is None or sub.op is not Op.SUB:
        raise NoFold("the Softmax is not in the form tosaconv builds")
    source, v, axes = sub.operands[0], sub.operands[1], []
    while v.producer is not None and v.producer.op is Op.REDUCE_MAX:
        axes.append(v.producer.attrs.axis)
        v = v.producer.operands[0]
    if v is not source or not axes:
        raise NoFold("the Softmax is not in the form tosaconv builds")
    return axes[::-1], source


def _check_row(v: Value, axes: Sequence[int]) -> None:
    size = 1
    for a in axes:
        dim = v.type.shape[a]
        if not isinstance(dim, int):
            raise NoFold("the Softmax axis has a symbolic size")
        size *= dim
    if size > MAX_ROW:
        raise NoFold(f"a Softmax row of {size} elements could overflow the int32 sum")


def _reduce(ctx: ImportContext, op: OpDef, v: Value, axes: Sequence[int]) -> Value:
    for a in axes:
        v = ctx.b.emit(op, v, attrs=A.AxisNanAttrs(a) if op is Op.REDUCE_MAX else A.AxisAttrs(a))
    return v


def _int32(ctx: ImportContext, v: Value) -> Value:
    return ctx.b.emit(Op.CAST, v, attrs=A.CastAttrs(DType.INT32))


def _exp14(ctx: ImportContext, index: Value, scale: float) -> Value:
    """``round(E_MAX * exp(scale * d))`` for ``index = d + 127``, from two 7-bit int8 TABLEs."""
    d = np.arange(256, dtype=np.float64) - 255.0             # TABLE entry i is index i - 128
    e = np.rint(E_MAX * np.exp(np.float64(scale) * d)).astype(np.int64)
    hi = ctx.b.emit(Op.TABLE, index, attrs=A.TableAttrs((e >> 7).astype(np.int8)))
    lo = ctx.b.emit(Op.TABLE, index, attrs=A.TableAttrs((e & 127).astype(np.int8)))
    hi32 = _int32(ctx, hi)
    high = ctx.b.emit(Op.MUL, hi32, ctx.b.scalar_like(128, hi32.type), attrs=A.MulAttrs(0))
    return ctx.b.emit(Op.ADD, high, _int32(ctx, lo))


def _ratio(y_scale: float) -> tuple:
    """``(P, M)``: the largest ``P`` with ``M = round(2**P / y_scale)`` and ``E_MAX * M`` below 2**31."""
    limit = ((1 << 31) - 1) // E_MAX
    shift = int(np.floor(np.log2(limit * y_scale)))
    while shift > 0 and round(2.0 ** shift / y_scale) > limit:
        shift -= 1
    m = round(2.0 ** shift / y_scale)
    if shift < 2 or m < 1:
        raise NoFold(f"a Softmax output scale of {y_scale!r} is too coarse for the integer form")
    return shift, m
