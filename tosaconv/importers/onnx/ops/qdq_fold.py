"""QDQ folding: ``DequantizeLinear -> Conv / MatMul / Gemm / Add -> QuantizeLinear`` as integer TOSA.

**Where it lives, and why.** The folding runs inside the QuantizeLinear
converter and looks *behind*, at the IR its float operand was built from; it
is neither a look-ahead in the DequantizeLinear converter nor an IR pass.

* The import context does not hold the ONNX graph, so no converter can see
  its consumers; a QuantizeLinear does see what produced its operand.
* By then the Conv/MatMul/Gemm converters have made every layout decision:
  NCHW to NHWC transposes, pads fitted to TOSA's exact-division rule, depthwise
  detection, Gemm's transposes and alpha/beta. Folding that IR replays those
  decisions on integers instead of re-deriving them, so the integer program
  has exactly the float program's geometry, symbolic dims included.
* The match is exact rather than heuristic: every DequantizeLinear records
  what its result was computed from (:mod:`.qtypes`), so no CAST/SUB/MUL chain
  is ever *guessed* to be a dequantization, as an IR pass over such patterns
  would have to, and the real scales and zero points are at hand.
* Anything else (scales known only at run time, grouped convolutions,
  per-axis activations, 16-bit data...) keeps the float QuantizeLinear, which
  is always correct; float ops nobody uses then fall to dead-code elimination.

**Numbers.** The core's int32 accumulator ``acc = sum((x - zx) * (w - zw))``
(CONV2D / DEPTHWISE_CONV2D / MATMUL with their zero points) stands for
``S * acc`` with ``S = sx * sw`` (per output channel for per-axis weights).
A float or dequantized bias becomes ``rint(b / S)`` in int32 (exact for an
int32 bias dequantized with scale ``sx * sw``); a positive constant factor
(Gemm's alpha) multiplies ``S``; a constant added later (Gemm's C) is added in
int32 the same way. The result is ``RESCALE(acc, S / sy)`` with output zero
point ``zy`` (multiplier and shift from :mod:`tosaconv.lowering.quant_scale`, SINGLE_ROUND:
it rounds half up where ONNX's float path rounds half to even, and the
32-bit multiplier carries a relative error below 2**-31, so results can
differ from a float computation by one unit). The accumulator is clamped to
the range ``apply_scale_32`` accepts when the shift is small; any value
beyond it saturates anyway. A Relu or Clip just before the QuantizeLinear is
an int8 CLAMP of the quantized result. An Add of two dequantized tensors
rescales both to int32 with 20 bits of headroom, adds, and rescales to the
output, as TFLite's int8 ADD does. Unsigned data is used in shifted signed form.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....symbolic.expr import same
from ..reader import ConvertError
from .qdq_core import (LAYOUT, NoFold, NotMine, check_scales, clamp_is_exact_per_channel,
                       const_real, quantize_bias, replay)
from .qdq_cores import plan_core, wide_bias
from .qdq_layernorm import layernorm_rule
from .qdq_layernorm_whole import whole_layernorm_rule
from .qdq_lstm import lstm_rule
from .qdq_round import requantize_int8
from .qdq_rules import INTEGER_RULES, first_rule, note_float_island, order_preserving
from .qdq_table import table_lower
from .qtypes import QParams, QType, state, stored_from_signed

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.graph import Operation
    from ..context import ImportContext

CORES = (Op.CONV2D, Op.DEPTHWISE_CONV2D, Op.TRANSPOSE_CONV2D, Op.MATMUL, Op.REDUCE_SUM)


def fold_quantize(ctx: ImportContext, x: Value, params: QParams, qtype: QType) -> Optional[object]:
    """The integer form of QuantizeLinear(x), or None when x is not a foldable QDQ pattern (the reason
    is recorded for the report's list of float islands)."""
    if qtype.bits != 8 or params.axis is not None or params.block_size or not params.is_const:
        return None
    y_scale = float(params.scale.reshape(-1)[0])
    y_zp = (0 if params.zero_point is None else int(params.zero_point.reshape(-1)[0])) - qtype.offset
    try:
        y = first_rule(ctx, x, y_scale, y_zp, (order_preserving, lstm_rule, layernorm_rule, whole_layernorm_rule,
                                               table_lower, _accumulator, *INTEGER_RULES))
    except NoFold as e:
        note_float_island(ctx, x, str(e))
        return None
    return stored_from_signed(ctx, y, qtype)


def _accumulator(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    """A convolution, matmul or add core, its bias and positive factors, one RESCALE, then clamps."""
    core, post = _walk(ctx, x)
    plan = plan_core(ctx, core)
    steps, scale, rest = _plan_post(ctx, post, plan.scale)
    check_scales(scale / y_scale)
    try:
        plan.check(scale / y_scale, y_zp)
    except NoFold:
        if steps or plan.emit_with_bias is None:
            raise
        y = wide_bias(ctx, plan, np.broadcast_to(scale / y_scale, plan.clamped[0].shape), y_zp)
    else:
        if not clamp_is_exact_per_channel(scale / y_scale):
            raise NoFold("the accumulator cannot be clamped to RESCALE's input range without changing results")
        y = requantize_int8(ctx, _emit_steps(ctx, plan.emit(), steps), scale / y_scale, output_zp=y_zp)
    for op in rest:
        y = _quantized_clamp(ctx, y, op.attrs, y_scale, y_zp) if op.op is Op.CLAMP else replay(ctx, y, [op])
    return y


def _quantized_clamp(ctx: ImportContext, y: Value, attrs: A.ClampAttrs, y_scale: float, y_zp: int) -> Value:
    """A float CLAMP (Relu, Clip) just before QuantizeLinear, as an int8 CLAMP of the quantized value:
    rounding is monotonic, so ``q(clamp(v, lo, hi)) = clamp(q(v), q(lo), q(hi))``."""
    bounds = [np.clip(np.rint(np.float64(b) / y_scale) + y_zp, -128, 127) for b in (attrs.min_val, attrs.max_val)]
    lo, hi = (int(b) for b in bounds)
    if lo == -128 and hi == 127:
        return y
    return ctx.b.emit(Op.CLAMP, y, attrs=A.ClampAttrs(lo, hi))


def integer_accumulator(ctx: ImportContext, x: Value, what: str) -> Value:
    """The exact int32 result of an integer op (ConvInteger, MatMulInteger) built as float ops on x."""
    try:
        core, post = _walk(ctx, x)
        plan = plan_core(ctx, core)
        if any(op.op not in LAYOUT for op, _ in post) or not np.all(plan.scale == 1.0):
            raise NoFold("the result is not a plain accumulator")
    except NoFold as e:
        raise ConvertError(f"{what} cannot be expressed with TOSA integer ops: {e}") from None
    return replay(ctx, plan.emit(), [op for op, _ in post])


# -- matching -------------------------------------------------------------------------

def _walk(ctx: ImportContext, x: Value) -> tuple[Union[Operation, Value], list]:
    """From the QuantizeLinear operand back to the core: (core, [(op, index of the chain operand)])."""
    post, v, dq = [], x, state(ctx).dq
    while v not in dq:
        p = v.producer
        if p is None:
            raise NotMine("the operand is a graph input")
        if p.op in CORES:
            return p, post[::-1]
        if p.op in LAYOUT or p.op is Op.CLAMP:
            post.append((p, 0))
            v = p.operands[0]
            continue
        if p.op is Op.CONCAT:
            raise NoFold("a grouped convolution (one CONV2D per group, then CONCAT) is not folded")
        if p.op not in (Op.MUL, Op.ADD):
            raise NotMine(f"the result is computed by {p.op.name}, not by a convolution, matmul or add")
        side = _constant_side(ctx, p)
        if side is None and p.op is Op.ADD:
            return p, post[::-1]          # an Add of two dequantized tensors
        if side is None:
            raise NoFold("a MUL of two computed tensors")
        post.append((p, 1 - side))
        v = p.operands[1 - side]
    return v, post[::-1]


def _constant_side(ctx: ImportContext, op: Operation) -> Optional[int]:
    for i in (1, 0):
        try:
            const_real(ctx, op.operands[i])
            return i
        except NoFold:
            continue
    return None


def _plan_post(ctx: ImportContext, post: list[tuple], scale: Union[float, np.ndarray]) -> tuple[list, Union[float, np.ndarray], list[Operation]]:
    """Turn the ops after the core into int32 steps; returns (steps, final scale, layout ops for after RESCALE)."""
    arithmetic = [i for i, (op, _) in enumerate(post) if op.op in (Op.MUL, Op.ADD)]
    last = arithmetic[-1] if arithmetic else -1
    if any(op.op is Op.CLAMP for op, _ in post[:last + 1]):
        raise NoFold("a clamp (Relu, Clip) before an addition or multiplication")
    steps = []
    for op, chain in post[:last + 1]:
        other = op.operands[1 - chain] if op.op in (Op.MUL, Op.ADD) else None
        if op.op in LAYOUT:
            if np.ndim(scale) and not _keeps_last_axis(op):
                raise NoFold("a per-channel accumulator loses its channel axis before a bias")
            steps.append(op)
        elif op.op is Op.MUL:
            scale = scale * _positive_factor(ctx, other)
        else:
            steps.append(quantize_bias(const_real(ctx, other), scale))
    return steps, scale, [op for op, _ in post[last + 1:]]


def _positive_factor(ctx: ImportContext, v: Value) -> float:
    real = const_real(ctx, v)
    if real.size != 1 or not np.isfinite(real).all() or real.reshape(-1)[0] <= 0:
        raise NoFold("a MUL by something other than a positive scalar constant")
    return float(real.reshape(-1)[0])


def _keeps_last_axis(op: Operation) -> bool:
    if op.op is Op.TRANSPOSE:
        return op.attrs.perms[-1] == len(op.attrs.perms) - 1
    if op.op is Op.RESHAPE:
        a, b = op.operands[0].type.shape, op.result.type.shape
        return bool(a) and bool(b) and same(a[-1], b[-1])
    return True


def _emit_steps(ctx: ImportContext, acc: Value, steps: Sequence[Union[np.ndarray, Operation]]) -> Value:
    for step in steps:
        if isinstance(step, np.ndarray):
            acc = ctx.b.emit(Op.ADD, acc, ctx.b.const(step))
        else:
            acc = replay(ctx, acc, [step])
    return acc
