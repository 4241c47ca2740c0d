"""Integer forms of MUL, SUB, MAXIMUM, MINIMUM, SELECT and CONCAT of quantized tensors.

Operands are dequantized 8-bit tensors (through layout ops) or constants.

* **MUL**: ``(qa - za) * (qb - zb)`` is exact in int32; one RESCALE by
  ``sa * sb / sy`` gives the output. A constant operand that is not itself a
  per-tensor quantized tensor is put on a 16-bit grid (``max|c| / 32767``),
  whose relative error (below 2**-15) is far below one output unit.
* **SUB**: both operands rescaled to a common int32 unit with 20 bits of
  headroom (as TFLite's int8 SUB does), subtracted, and rescaled out.
* **MAXIMUM / MINIMUM**: each operand rescaled to int32 in output units, then
  the integer maximum and a saturating RESCALE to int8. Rounding is monotonic,
  so this is the quantized maximum.
* **SELECT and CONCAT**: each operand requantized to the output's scale and
  zero point (a constant is quantized in numpy), then the int8 op.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Union

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from .qdq_core import (ADD_HEADROOM, LAYOUT, NoFold, NotMine, activation, check_scales, clamp_is_exact_per_channel,
                       const_real, emit_activation, replay, requantize, trace)
from .qdq_round import requantize_int8, round_half_even
from .qtypes import rescale

if TYPE_CHECKING:
    from ....ir.graph import Operation
    from ....ir.ops import OpDef
    from ..context import ImportContext
    from .qdq_core import Activation


def _root(x: Value) -> tuple[Optional[Operation], list[Operation]]:
    """The op computing ``x`` behind trailing layout ops, and those ops (to replay after it)."""
    v, after = x, []
    while v.producer is not None and v.producer.op in LAYOUT:
        after.append(v.producer)
        v = v.producer.operands[0]
    return v.producer, after[::-1]


def root_of(x: Value, ops: tuple[OpDef, ...]) -> tuple:
    """The op computing ``x`` behind trailing layout ops (one of ``ops``, else NotMine), and those ops."""
    p, after = _root(x)
    if p is None or p.op not in ops:
        raise NotMine(f"not a {' or '.join(o.name for o in ops)}")
    return p, after


def _act(ctx: ImportContext, v: Value) -> Value:
    return activation(trace(ctx, v))


def _int32(ctx: ImportContext, act: Activation) -> Value:
    """``q - zp`` of a quantized operand, exactly, in int32."""
    return rescale(ctx, emit_activation(ctx, act), 1.0, DType.INT32, input_zp=act.zp)


def _finish(ctx: ImportContext, acc: Value, scale: float, y_scale: float, y_zp: int) -> Value:
    check_scales([scale / y_scale])
    if not clamp_is_exact_per_channel(scale / y_scale):
        raise NoFold("the int32 result cannot be clamped to RESCALE's input range without changing results")
    return requantize_int8(ctx, acc, scale / y_scale, output_zp=y_zp)


# -- MUL ----------------------------------------------------------------------------------

def mul_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    p, after = root_of(x, (Op.MUL,))
    if p.attrs.shift:
        raise NoFold("an integer MUL")
    parts = [_mul_operand(ctx, v) for v in p.operands]
    if all(isinstance(part[0], np.ndarray) for part in parts):
        raise NoFold("a MUL of two constants")
    values = [ctx.b.const(v) if isinstance(v, np.ndarray) else v() for v, _ in parts]
    acc = ctx.b.emit(Op.MUL, *values, attrs=A.MulAttrs(0))
    return replay(ctx, _finish(ctx, acc, parts[0][1] * parts[1][1], y_scale, y_zp), after)


def _mul_operand(ctx: ImportContext, v: Value) -> tuple[Union[np.ndarray, Callable[[], Value]], float]:
    """(int32 array or a function emitting the int32 tensor, its scale) of one MUL operand."""
    try:
        act = _act(ctx, v)
    except NoFold:
        return _constant_grid(const_real(ctx, v), v)
    return (lambda: _int32(ctx, act)), act.scale


def _constant_grid(real: np.ndarray, v: Value) -> tuple[np.ndarray, float]:
    top = float(np.max(np.abs(real))) if real.size else 0.0
    if not np.isfinite(top):
        raise NoFold("a constant operand is not finite")
    scale = top / 32767.0 if top > 0 else 1.0
    grid = np.rint(real / scale).astype(np.int32).reshape(_const_shape(real, v))
    return grid, scale


def _const_shape(real: np.ndarray, v: Value) -> tuple:
    return tuple(v.type.static_shape()) if v.type.is_static else real.shape


# -- SUB ----------------------------------------------------------------------------------

def sub_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    p, after = root_of(x, (Op.SUB,))
    a, b = (_act(ctx, v) for v in p.operands)
    unit = 2.0 * max(a.scale, b.scale) / 2.0 ** ADD_HEADROOM
    check_scales([a.scale / unit, b.scale / unit])
    a32, b32 = (rescale(ctx, emit_activation(ctx, t), t.scale / unit, DType.INT32, input_zp=t.zp) for t in (a, b))
    acc = ctx.b.emit(Op.SUB, a32, b32)
    return replay(ctx, _finish(ctx, acc, unit, y_scale, y_zp), after)


# -- MAXIMUM / MINIMUM ---------------------------------------------------------------------

def extreme_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    p, after = root_of(x, (Op.MAXIMUM, Op.MINIMUM))
    acts = [_act(ctx, v) for v in p.operands]
    check_scales([t.scale / y_scale for t in acts])
    ints = [round_half_even(ctx, emit_activation(ctx, t), t.scale / y_scale, input_zp=t.zp) for t in acts]
    m = ctx.b.emit(p.op, *ints, attrs=p.attrs)
    return replay(ctx, rescale(ctx, m, 1.0, DType.INT8, output_zp=y_zp), after)


# -- SELECT / CONCAT -------------------------------------------------------------------------

def select_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    p, after = root_of(x, (Op.SELECT,))
    cond = _integer_condition(ctx, p.operands[0])
    branches = [_requantized(ctx, v, y_scale, y_zp) for v in p.operands[1:]]
    return replay(ctx, ctx.b.emit(Op.SELECT, cond(), *[f() for f in branches]), after)


COMPARISONS = {Op.GREATER: np.greater, Op.GREATER_EQUAL: np.greater_equal, Op.EQUAL: np.equal}


def _integer_condition(ctx: ImportContext, cond: Value) -> Callable[[], Value]:
    """A function emitting ``cond`` without float ops: as it is when it is not computed from floats, or a
    comparison of a quantized tensor with a constant as one integer comparison with the threshold the
    float comparison has over all 256 stored values (dequantization is increasing, so it has one)."""
    p = cond.producer
    if p is None or not any(v.type.dtype.is_float for v in p.operands):
        return lambda: cond
    if p.op not in COMPARISONS:
        raise NoFold(f"the condition is computed by a float {p.op.name}")
    try:
        act, c, swapped = _act(ctx, p.operands[0]), _scalar(ctx, p.operands[1]), False
    except NoFold:
        act, c, swapped = _act(ctx, p.operands[1]), _scalar(ctx, p.operands[0]), True
    q = np.arange(-128, 128)
    real = (q - act.zp).astype(np.float32) * np.float32(act.scale)
    truth = COMPARISONS[p.op](np.float32(c), real) if swapped else COMPARISONS[p.op](real, np.float32(c))
    return lambda: _table_compare(ctx, emit_activation(ctx, act), truth)


def _scalar(ctx: ImportContext, v: Value) -> float:
    real = const_real(ctx, v).reshape(-1)
    if real.size == 0 or not np.all(real == real[0]):
        raise NoFold("a comparison with a constant that is not one value")
    return float(real[0])


def _table_compare(ctx: ImportContext, q: Value, truth: np.ndarray) -> Value:
    """The boolean ``truth[q + 128]``: one int32 comparison when ``truth`` is a step, else a TABLE and EQUAL."""
    q32 = ctx.b.emit(Op.CAST, q, attrs=A.CastAttrs(DType.INT32))
    flips = np.flatnonzero(np.diff(truth.astype(np.int8)))
    if len(flips) == 0:
        return ctx.b.emit(Op.EQUAL, q32, q32) if truth[0] else ctx.b.emit(Op.GREATER, q32, q32)
    if len(flips) == 1 and not truth[0]:        # false up to the flip: q > threshold
        return ctx.b.emit(Op.GREATER, q32, ctx.b.scalar_like(int(flips[0]) - 128, q32.type))
    if len(flips) == 1:                         # true up to the flip: q <= threshold
        return ctx.b.emit(Op.GREATER_EQUAL, ctx.b.scalar_like(int(flips[0]) - 128, q32.type), q32)
    table = ctx.b.emit(Op.TABLE, q, attrs=A.TableAttrs(truth.astype(np.int8)))
    table32 = ctx.b.emit(Op.CAST, table, attrs=A.CastAttrs(DType.INT32))     # EQUAL compares int32
    return ctx.b.emit(Op.EQUAL, table32, ctx.b.scalar_like(1, table32.type))


def concat_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    p, after = root_of(x, (Op.CONCAT,))
    parts = [_requantized(ctx, v, y_scale, y_zp) for v in p.operands]
    return replay(ctx, ctx.b.emit(Op.CONCAT, *[f() for f in parts], attrs=p.attrs), after)


def _requantized(ctx: ImportContext, v: Value, y_scale: float, y_zp: int) -> Callable[[], Value]:
    """A function emitting ``v`` as int8 in the output's scale and zero point (checked before emitting)."""
    try:
        act = _act(ctx, v)
    except NoFold:
        real = const_real(ctx, v)
        q = np.clip(np.rint(real.astype(np.float32) / np.float32(y_scale)) + y_zp, -128, 127).astype(np.int8)
        q = np.broadcast_to(q, real.shape).reshape(_const_shape(real, v))
        return lambda: ctx.b.const(np.ascontiguousarray(q))
    check_scales([act.scale / y_scale])
    return lambda: requantize(ctx, emit_activation(ctx, act), act, y_scale, y_zp)


BINARY_RULES = (mul_rule, sub_rule, extreme_rule, select_rule, concat_rule)
