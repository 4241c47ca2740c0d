"""The integer cores of the QDQ folding: int32 accumulators for CONV2D, DEPTHWISE_CONV2D,
TRANSPOSE_CONV2D, MATMUL, REDUCE_SUM, an ADD of two dequantized tensors, and a lone DequantizeLinear.

A core is *planned* first (numpy and checks only; :class:`NoFold` when its operands are not in a form
the folding handles) and *emitted* after, so a refused fold leaves no ops behind. ``Plan.scale`` is the
real value of one accumulator unit: a scalar, or one value per output channel (the last axis of the
core's result).
"""
from __future__ import annotations

from dataclasses import replace
from ....records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Callable, Optional, Union

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from .qdq_core import (ADD_HEADROOM, DQ_HEADROOM, LAYOUT, WEIGHT_CHANNEL_AXES, NoFold, Operand, Weights, activation,
                       check_scales, const_real, emit_activation, emit_centered16, emit_weights, quantize_bias, trace,
                       weights)
from .qparams import is_value
from .qdq_round import requantize_int8
from .qdq_weights import float_constant, note_quantized, quantize_symmetric
from .qtypes import rescale, signed_value, state

if TYPE_CHECKING:
    from ....ir.graph import Operation
    from ..context import ImportContext


@dataclass
class Plan:
    scale: np.ndarray
    emit: Callable[[], Value]
    clamped: Optional[tuple] = None   # (bias before clamping, the accumulator's largest magnitude), per channel
    emit_with_bias: Optional[Callable[[np.ndarray], Value]] = None   # a convolution with another int32 bias

    def check(self, scale: np.ndarray, zp: int) -> None:
        """Clamping a bias so the int32 sum cannot overflow must not change any int8 result (zero point
        ``zp``): each clamped channel either saturates with both biases or rounds to ``zp`` with both."""
        if self.clamped is None:
            return
        bias, top = self.clamped
        over = np.abs(bias) + top >= 1 << 31
        r = np.broadcast_to(np.asarray(scale, dtype=np.float64), bias.shape)[over]
        nearest = ((1 << 31) - 1 - 2 * top[over]) * r          # the clamped sum's smallest magnitude, scaled
        sign = np.sign(bias[over])
        saturates = np.where(sign > 0, nearest + zp >= 127.5, zp - nearest <= -128.5)
        if not np.all(saturates | ((np.abs(bias[over]) + top[over]) * r < 0.5)):
            raise NoFold("a bias this close to the int32 limit could overflow the accumulator")



def plan_core(ctx: ImportContext, core: Union[Value, Operation]) -> Plan:
    if isinstance(core, Value):
        return _dq_plan(ctx, core)
    if core.op is Op.MATMUL:
        return _matmul_plan(ctx, core)
    if core.op is Op.ADD:
        return _add_plan(ctx, core)
    if core.op is Op.REDUCE_SUM:
        return _sum_plan(ctx, core)
    return _conv_plan(ctx, core)


def _dq_plan(ctx: ImportContext, v: Value) -> Plan:
    act = activation(Operand(state(ctx).dq[v], []))
    unit = 2.0 ** DQ_HEADROOM
    return Plan(np.float64(act.scale / unit), lambda: rescale(
        ctx, signed_value(ctx, act.operand.record.data), unit, DType.INT32, input_zp=act.zp))


def _conv_plan(ctx: ImportContext, op: Operation) -> Plan:
    x, w, b = op.operands
    act = activation(trace(ctx, x))
    wt, error = _weights_of(ctx, op, w)
    if wt.zp is None:
        raise NoFold("the weight zero point is known only at run time, or per-channel zero points leave "
                     "centered weights outside int8 (TOSA convolutions take one zero point)")
    scale = act.scale * wt.scale
    channels = op.result.type.shape[-1]
    bias = np.broadcast_to(_bias_units(ctx, b, scale), (channels,)).astype(np.int64)
    top = np.broadcast_to(_accumulator_bound(wt, WEIGHT_CHANNEL_AXES[op.op]), (channels,))
    clamped = (bias, top) if np.any(np.abs(bias) + top >= 1 << 31) else None
    limit = np.maximum((1 << 31) - 1 - top, 0)
    bias = np.clip(bias, -limit, limit).astype(np.int32)

    def emit_with_bias(b: np.ndarray) -> Value:
        _noted(ctx, op, error)
        attrs = replace(op.attrs, acc_type=DType.INT32, input_zp=act.zp, weight_zp=wt.zp)
        return ctx.b.emit(op.op, emit_activation(ctx, act), emit_weights(ctx, wt),
                          ctx.b.const(np.ascontiguousarray(b.astype(np.int32))), attrs=attrs)
    return Plan(scale, lambda: emit_with_bias(bias), clamped, emit_with_bias)


def _weights_of(ctx: ImportContext, core: Operation, w: Value) -> tuple:
    """(the core's weights, None), or under ``--profile int`` for float constant weights, (the weights
    tosaconv quantized, their largest relative error); see :mod:`.qdq_weights`."""
    try:
        operand = trace(ctx, w)
    except NoFold:
        real = float_constant(w) if getattr(ctx, "quantize_weights", False) else None
        if real is None:
            raise
        return quantize_symmetric(real, WEIGHT_CHANNEL_AXES[core.op])
    return weights(ctx, operand, WEIGHT_CHANNEL_AXES[core.op]), None


def _noted(ctx: ImportContext, core: Operation, error: Optional[float]) -> None:
    if error is not None:
        note_quantized(ctx, core, error)


def _bias_units(ctx: ImportContext, b: Value, scale: Union[float, np.ndarray]) -> np.ndarray:
    """The bias in accumulator units. An int32 bias dequantized with the accumulator's own scale
    (``x_scale * w_scale``, up to float32 rounding, as quantizers write it) is taken as it is: it never
    passes through float, where -63603913 would become -63603915."""
    try:
        operand = trace(ctx, b, LAYOUT)
    except NoFold:
        return quantize_bias(const_real(ctx, b), scale)
    rec = operand.record
    p, data = rec.params, rec.data.const
    exact = (data is not None and rec.data.qtype.bits == 32 and not is_value(p.scale) and not operand.ops
             and (p.zero_point is None or (not is_value(p.zero_point) and not np.any(p.zero_point))))
    if exact and np.allclose(np.reshape(p.scale, -1).astype(np.float64), np.reshape(scale, -1), rtol=1e-6, atol=0):
        return data.reshape(-1) if data.size > 1 else data.reshape(())
    return quantize_bias(const_real(ctx, b), scale)


def _accumulator_bound(wt: Weights, channel_axes: tuple) -> np.ndarray:
    """The largest ``|sum((x - zx) * (w - zw))|`` per output channel, for any 8-bit x."""
    if wt.signed is None:
        return np.int64(255 * 255) * (1 << 20)
    centered = np.abs(wt.signed - wt.zps)
    other = tuple(i for i in range(centered.ndim) if i not in channel_axes)
    return 255 * np.sum(centered, axis=other, dtype=np.int64).reshape(-1)


def _matmul_plan(ctx: ImportContext, op: Operation) -> Plan:
    act = activation(trace(ctx, op.operands[0]), runtime_zp=True)
    wt, error = _weights_of(ctx, op, op.operands[1])
    wide = act.zp is None or wt.zp is None

    def emit() -> Value:
        _noted(ctx, op, error)
        if not wide:
            return ctx.b.emit(Op.MATMUL, emit_activation(ctx, act), emit_weights(ctx, wt),
                              attrs=A.MatMulAttrs(act.zp, wt.zp))
        acc48 = ctx.b.emit(Op.MATMUL, emit_centered16(ctx, act), emit_weights(ctx, wt, wide=True))
        return rescale(ctx, acc48, 1.0, DType.INT32)
    return Plan(act.scale * wt.scale, emit)


def _add_plan(ctx: ImportContext, op: Operation) -> Plan:
    a, b = (activation(trace(ctx, v)) for v in op.operands)
    twice_max = 2.0 * max(a.scale, b.scale)
    unit = twice_max / 2.0 ** ADD_HEADROOM
    check_scales([a.scale / unit, b.scale / unit])

    def emit() -> Value:
        a32, b32 = (rescale(ctx, emit_activation(ctx, t), t.scale / unit, DType.INT32, input_zp=t.zp)
                    for t in (a, b))
        return ctx.b.emit(Op.ADD, a32, b32)
    return Plan(np.float64(unit), emit)


def _sum_plan(ctx: ImportContext, op: Operation) -> Plan:
    """REDUCE_SUMs (one per axis) of ``q - zp`` in int32: a ReduceMean's sum, whose ``1/n`` is a factor
    of the scale."""
    chain = [op]
    while chain[-1].operands[0].producer is not None and chain[-1].operands[0].producer.op is Op.REDUCE_SUM:
        chain.append(chain[-1].operands[0].producer)
    act = activation(trace(ctx, chain[-1].operands[0], scaled=True))

    def emit() -> Value:
        total = rescale(ctx, emit_activation(ctx, act), 1.0, DType.INT32, input_zp=act.zp)
        for step in reversed(chain):
            total = ctx.b.emit(Op.REDUCE_SUM, total, attrs=step.attrs)
        return total
    return Plan(np.float64(act.scale), emit)


WIDE_BITS = 29       # the int32 intermediate of the two-step requantization stays below 2**WIDE_BITS


def wide_bias(ctx: ImportContext, plan: Plan, ratio: np.ndarray, y_zp: int) -> Value:
    """A convolution whose int32 bias is so close to the limit that adding the accumulator could overflow
    (onnxruntime's quantizer writes such biases for channels whose weights are all near zero): the
    overflowing biases are left out of the convolution and added after a first RESCALE to ``2**-k``
    output units (per channel, ``k`` as large as int32 allows), then one RESCALE by ``2**k`` rounds
    once more. Each channel's result is within ``2**-k`` units of the exact value before that final
    rounding, so it can differ from a single rounding only that close to a tie."""
    bias, top = plan.clamped
    over = np.abs(bias) + top >= 1 << 31
    inner = np.where(over, 0, bias)
    total = (top + np.abs(inner)).astype(np.float64) * ratio + np.abs(np.where(over, bias, 0)) * ratio
    k = np.floor(np.log2((1 << WIDE_BITS) / np.maximum(total, 1e-300))).clip(0, 40)
    unit = ratio * 2.0 ** k
    check_scales(unit)
    acc = rescale(ctx, plan.emit_with_bias(inner), unit, DType.INT32)
    extra = np.rint(np.where(over, bias, 0) * unit).astype(np.int32)
    acc = ctx.b.emit(Op.ADD, acc, ctx.b.const(extra))
    return requantize_int8(ctx, acc, 2.0 ** -k, output_zp=y_zp)
