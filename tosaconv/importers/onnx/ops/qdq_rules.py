"""Integer forms of the float ops between DequantizeLinear and QuantizeLinear, beyond the accumulator cores.

:func:`lower_quantize` is tried by the QDQ folding (:mod:`.qdq_fold`) for a
QuantizeLinear whose operand is not an accumulator pattern. Each rule either
returns the signed-form int8 result or raises :class:`NoFold` with the reason
(the last reason is kept, so a float island says why it stayed float):

* **order-preserving ops** (layout ops, MAX_POOL2D, REDUCE_MAX/MIN, nearest
  RESIZE): replayed on the int8 data, then one RESCALE to the output's scale
  and zero point, or none when they are equal (a DQ/Q pair that cancels).
  Dequantization is increasing, so a maximum or a nearest pick of the int8
  values is the quantized maximum or pick;
* **elementwise chains of one tensor**: one TABLE (:mod:`.qdq_table`);
* **MUL, SUB, MAXIMUM, MINIMUM, SELECT and CONCAT of quantized tensors**
  (:mod:`.qdq_binary`);
* **AVG_POOL2D**: the exact window sum and one RESCALE to the output scale (with padding that the
  windows exclude, an int32 MUL by a factor per output position before it).

RESCALE rounds half up where ONNX rounds half to even, so a result can differ
from the float program by one unit at exact ties; that is the only difference.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from .qdq_binary import BINARY_RULES, root_of
from .qdq_core import INPUT_LAYOUT, NoFold, NotMine, activation, emit_activation, replay, requantize, trace
from .qdq_round import requantize_int8
from .qdq_softmax import softmax_rule
from .qtypes import state

if TYPE_CHECKING:
    from ....ir.graph import Operation
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from .qdq_core import Activation

MAX_NOTED = 256        # float values whose source a reason is noted for, per QuantizeLinear
ORDER_PRESERVING = INPUT_LAYOUT + (Op.MAX_POOL2D, Op.REDUCE_MAX, Op.REDUCE_MIN, Op.GATHER, Op.RESIZE)


def first_rule(ctx: ImportContext, x: Value, y_scale: float, y_zp: int, rules: Sequence[Callable[[ImportContext, Value, float, int], Value]]) -> Value:
    """The signed-form int8 QuantizeLinear(x) (scale ``y_scale``, signed zero point ``y_zp``) by the first
    of ``rules`` that applies, or :class:`NoFold` with the most specific reason."""
    reasons = []
    for rule in rules:
        try:
            return rule(ctx, x, y_scale, y_zp)
        except NotMine:
            continue
        except NoFold as e:
            reasons.append(str(e))
    if not reasons:
        raise NoFold(_no_rule(x))
    p = x.producer
    raise NoFold(f"{p.op.name} (from {p.location}): {reasons[0]}" if p is not None else reasons[0])


def _no_rule(x: Value) -> str:
    p = x.producer
    if p is None:
        return "the operand is a graph input that is not quantized"
    return f"{p.op.name} (from {p.location}) has no integer lowering in tosaconv"


def note_float_island(ctx: ImportContext, x: Value, reason: str) -> None:
    """Record, for the report's float islands, why the float ops computing ``x`` stay float (under their
    source location) and so why this QuantizeLinear does (under its own)."""
    reasons = ctx.graph.float_reasons
    reasons.setdefault(str(ctx.b.location), f"it quantizes a float result: {reason}")
    dq, seen, stack = state(ctx).dq, set(), [x]
    while stack and len(seen) < MAX_NOTED:
        v = stack.pop()
        if v in seen or v.producer is None or v.producer.op is Op.CONST:
            continue
        seen.add(v)
        if v in dq:
            reasons.setdefault(str(v.producer.location), f"its result feeds float ops: {reason}")
            continue
        reasons.setdefault(str(v.producer.location), reason)
        stack.extend(v.producer.operands)


def order_preserving(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    try:
        operand = trace(ctx, x, ORDER_PRESERVING, scaled=True)
    except NoFold as e:
        raise NotMine(str(e)) from None
    if any(op.op is Op.RESIZE and op.attrs.mode != "NEAREST" for op in operand.ops):
        raise NoFold("a bilinear RESIZE is not order-preserving")
    act = activation(operand)
    return requantize(ctx, emit_activation(ctx, act), act, y_scale, y_zp)


def _avg_pool(ctx: ImportContext, x: Value, y_scale: float, y_zp: int) -> Value:
    """AVG_POOL2D (after layout ops) of a quantized tensor, as the exact window sum (a DEPTHWISE_CONV2D
    with unit weights, int32) and one RESCALE by ``s_in / (count * s_out)``: a single rounding, to even at
    ties as ONNX rounds. TOSA's int8 AVG_POOL2D would round once to input units and again to the output's,
    one unit off on about a third of the elements. A pool whose windows exclude padding divides border
    windows by fewer elements, which one RESCALE cannot do: a MUL by the right factor per position does it
    (:func:`_padded_mean`)."""
    p, after = root_of(x, (Op.AVG_POOL2D,))
    act = activation(trace(ctx, p.operands[0], scaled=True))
    channels = p.operands[0].type.shape[-1]
    if any(p.attrs.pad):
        return replay(ctx, _padded_mean(ctx, p, act, channels, y_scale, y_zp), after)
    if not isinstance(channels, int):
        raise NoFold("an average pool over a symbolic number of channels")
    return replay(ctx, _window_sum(ctx, p, act, channels, y_scale, y_zp), after)


def _padded_mean(ctx: ImportContext, p: Operation, act: Activation, channels: Dim, y_scale: float, y_zp: int) -> Value:
    """A pool whose windows exclude padding (ONNX ``count_include_pad=0``, TOSA's AVG_POOL2D): the exact
    window sum (a DEPTHWISE_CONV2D with the pads, which add nothing to ``q - zp``) times a constant
    ``round(2**b / count)`` per output position (an int32 MUL, ``b`` as large as int32 allows), then one
    RESCALE by ``s_in / (s_out * 2**b)``. The multiplier's rounding moves a result by less than
    ``255 * kh * kw / 2**(b+1)`` of an output unit times ``s_in / s_out`` before the one final rounding, so
    it can differ from ONNX's only that close to a tie. TOSA's int8 AVG_POOL2D then RESCALE would round
    twice (measured: one unit off on up to 37 % of the elements)."""
    (kh, kw), (sh, sw), pad = p.attrs.kernel, p.attrs.stride, p.attrs.pad
    _, h, w, _ = p.operands[0].type.shape
    _, oh, ow, _ = p.result.type.shape
    if not all(isinstance(d, int) for d in (h, w, oh, ow, channels)):
        raise NoFold("an average pool that excludes padding, over symbolic sizes")
    counts = np.outer(_window_counts(h, oh, kh, sh, pad[0]), _window_counts(w, ow, kw, sw, pad[2]))
    bits = 30 - (255 * kh * kw).bit_length()
    factors = np.rint(2.0 ** bits / counts).astype(np.int32).reshape(1, oh, ow, 1)
    ones = ctx.b.const(np.ones((kh, kw, channels, 1), np.int8))
    attrs = A.Conv2dAttrs(tuple(pad), (sh, sw), (1, 1), DType.INT32, input_zp=act.zp)
    total = ctx.b.emit(Op.DEPTHWISE_CONV2D, emit_activation(ctx, act), ones,
                       ctx.b.const(np.zeros(channels, np.int32)), attrs=attrs)
    scaled = ctx.b.emit(Op.MUL, total, ctx.b.const(factors), attrs=A.MulAttrs(0))
    return requantize_int8(ctx, scaled, act.scale / (y_scale * 2.0 ** bits), output_zp=y_zp)


def _window_counts(size: int, out: int, kernel: int, stride: int, before: int) -> np.ndarray:
    """How many input elements each output position's window holds along one axis."""
    start = np.arange(out) * stride - before
    return np.minimum(start + kernel, size) - np.maximum(start, 0)


def _window_sum(ctx: ImportContext, p: Operation, act: Activation, channels: int, y_scale: float, y_zp: int) -> Value:
    kh, kw = p.attrs.kernel
    ones = ctx.b.const(np.ones((kh, kw, channels, 1), np.int8))
    attrs = A.Conv2dAttrs((0, 0, 0, 0), tuple(p.attrs.stride), (1, 1), DType.INT32, input_zp=act.zp)
    acc = ctx.b.emit(Op.DEPTHWISE_CONV2D, emit_activation(ctx, act), ones, ctx.b.const(np.zeros(channels, np.int32)),
                     attrs=attrs)
    return requantize_int8(ctx, acc, act.scale / (kh * kw * y_scale), output_zp=y_zp)


INTEGER_RULES = (*BINARY_RULES, _avg_pool, softmax_rule)
