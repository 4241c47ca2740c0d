"""The operands of the QDQ folding: quantized tensors traced back to their DequantizeLinear, constant
weights and biases, and the requantization every rule ends with.

Operands are traced from an op back through layout ops to the DequantizeLinear results they came from;
the same layout ops are replayed on the integer data (a PAD then pads with the zero point, which is
what a float 0 is). Constant weights are rearranged in numpy, together with their per-element scales and
zero points, so per-axis quantization on any ONNX axis lands on the right TOSA channel, or is found not
to. The accumulator cores that use them are in :mod:`.qdq_cores`.
"""
from __future__ import annotations

from ....records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional, Sequence, Union

import numpy as np

from ....interpreter.registry import KernelContext, kernel_for
from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from ....ir.types import TensorType
from ....lowering.quant_scale import ScaleError, clamp_is_exact, multiplier_shift, multipliers_shifts
from .qparams import broadcast, is_value
from .qdq_round import requantize_int8
from .qtypes import QTensor, signed_value, state

if TYPE_CHECKING:
    from ....ir.graph import Operation
    from ....ir.ops import OpDef
    from ..context import ImportContext

LAYOUT = (Op.TRANSPOSE, Op.RESHAPE, Op.IDENTITY)
INPUT_LAYOUT = LAYOUT + (Op.PAD, Op.SLICE, Op.DYN_SLICE, Op.TILE, Op.DYN_TILE, Op.EXPAND_DIMS, Op.COLLAPSE_DIMS,
                         Op.REVERSE)   # REVERSE: a reflect Pad's rows (a permutation, like the others)
ADD_HEADROOM = 20     # bits the ADD core gives each rescaled input (as TFLite's int8 ADD does)
DQ_HEADROOM = 16      # bits a lone DequantizeLinear core keeps below one input unit
WEIGHT_CHANNEL_AXES = {Op.CONV2D: (0,), Op.DEPTHWISE_CONV2D: (2, 3), Op.MATMUL: (2,), Op.TRANSPOSE_CONV2D: (0,)}


class NoFold(Exception):
    """The float ops are not in a form the folding handles (the message says why)."""


class NotMine(NoFold):
    """A folding rule does not apply to the op computing the operand at all (another rule may)."""


@dataclass
class Operand:
    record: object        # the DQRecord of the DequantizeLinear result
    ops: list             # layout ops from that result to the core operand, in order
    factor: float = 1.0   # positive scalar constants the value was multiplied by (a Div by 6 of a hard-swish)


@dataclass
class Activation:
    operand: Operand
    scale: float
    zp: Optional[int]     # signed-form zero point; None when known only at run time


@dataclass
class Weights:
    scale: np.ndarray                    # per output channel, or a scalar
    signed: Optional[np.ndarray] = None  # constant data in signed form, in the core's layout
    zps: Optional[np.ndarray] = None     # their signed-form zero points, element by element
    runtime: Optional[Activation] = None

    @property
    def zp(self) -> Optional[int]:
        """The one zero point for TOSA (None: known only at run time, or no int8 form exists)."""
        if self.runtime is not None:
            return self.runtime.zp
        if np.all(self.zps == self.zps.flat[0]):
            return int(self.zps.flat[0])
        return 0 if _fits(self.signed - self.zps, np.int8) else None

    def int8(self) -> np.ndarray:
        uniform = np.all(self.zps == self.zps.flat[0])
        return (self.signed if uniform else self.signed - self.zps).astype(np.int8)


def _fits(arr: np.ndarray, dtype: type) -> bool:
    info = np.iinfo(dtype)
    return bool(arr.min() >= info.min and arr.max() <= info.max)


def trace(ctx: ImportContext, v: Value, allowed: tuple[OpDef, ...] = INPUT_LAYOUT, scaled: bool = False) -> Operand:
    """``v`` traced back through ``allowed`` ops to a DequantizeLinear result; ``scaled`` also passes a MUL
    by a positive scalar constant, which only scales the dequantization (``s * c``): a float op left
    between two quantized ops (onnxruntime's quantizer leaves Div float) costs nothing."""
    ops, dq, factor = [], state(ctx).dq, 1.0
    while v not in dq:
        p = v.producer
        c = _positive_scalar_factor(ctx, p) if scaled else None
        if c is not None:
            factor, v = factor * c[1], p.operands[c[0]]
            continue
        if p is None or p.op not in allowed:
            raise NoFold(_not_dequantized(p))
        ops.append(p)
        v = p.operands[0]
    return Operand(dq[v], ops[::-1], factor)


CONST_ELEMENTWISE = (Op.RECIPROCAL, Op.NEGATE, Op.CAST)   # what converters build on constants (Div: x * 1/c)


def _evaluated(ctx: ImportContext, op: Operation) -> np.ndarray:
    """A constant-operand elementwise op evaluated with the interpreter's own kernel (constant folding
    has not run yet while the importer converts)."""
    args = [const_real(ctx, v).astype(v.type.dtype.numpy) for v in op.operands]
    with np.errstate(all="ignore"):
        out = kernel_for(op.op)(op, args, KernelContext())[0]
    return np.asarray(out, dtype=np.float64)


def _positive_scalar_factor(ctx: ImportContext, p: Optional[Operation]) -> Optional[tuple[int, float]]:
    """(index of the other operand, c) when ``p`` is a float MUL by one positive constant ``c``, else None."""
    if p is None or p.op is not Op.MUL or p.attrs.shift or not p.result.type.dtype.is_float:
        return None
    for i in (1, 0):
        try:
            real = const_real(ctx, p.operands[i]).reshape(-1)
        except NoFold:
            continue
        if real.size and np.all(real == real[0]) and np.isfinite(real[0]) and real[0] > 0:
            return 1 - i, float(real[0])
    return None


def _not_dequantized(p: Optional[Operation]) -> str:
    return f"an operand is not a DequantizeLinear result (it comes from {p.op.name if p else 'a graph input'})"


def replay(ctx: ImportContext, v: Value, ops: Sequence[Operation], pad_value: int = 0) -> Value:
    for op in ops:
        attrs = A.PadAttrs(op.attrs.padding, float(pad_value)) if op.op is Op.PAD else op.attrs
        v = ctx.b.emit(op.op, v, *op.operands[1:], attrs=attrs)
    return v


def replay_numpy(arr: np.ndarray, ops: Sequence[Operation]) -> np.ndarray:
    for op in ops:
        if op.op is Op.TRANSPOSE:
            arr = np.transpose(arr, op.attrs.perms)
        elif op.op is Op.RESHAPE and op.result.type.is_static:
            arr = arr.reshape(op.result.type.static_shape())
        elif op.op is not Op.IDENTITY:
            raise NoFold(f"constant data goes through {op.op.name}")
    return arr


# -- operands -------------------------------------------------------------------------

def activation(operand: Operand, runtime_zp: bool = False) -> Activation:
    rec = operand.record
    p, qt = rec.params, rec.data.qtype
    if qt.bits != 8:
        raise NoFold(f"{qt.name} data (the integer ops take 8-bit data)")
    if p.axis is not None or p.block_size:
        raise NoFold("an activation has per-axis scales or zero points (TOSA takes one zero point)")
    if is_value(p.scale):
        raise NoFold("an activation scale is known only at run time")
    if is_value(p.zero_point) and not runtime_zp:
        raise NoFold("an activation zero point is known only at run time")
    scale = float(p.scale.reshape(-1)[0]) * operand.factor
    if is_value(p.zero_point):
        return Activation(operand, scale, None)
    z = 0 if p.zero_point is None else int(p.zero_point.reshape(-1)[0])
    return Activation(operand, scale, z - qt.offset)


def emit_activation(ctx: ImportContext, act: Activation) -> Value:
    """The int8 operand in signed form, with the layout ops replayed (PAD pads with the zero point)."""
    return replay(ctx, signed_value(ctx, act.operand.record.data), act.operand.ops, act.zp)


def emit_centered16(ctx: ImportContext, act: Activation) -> Value:
    """``x - zero_point`` as int16 (exact), then the layout ops: for zero points known only at run time."""
    rec = act.operand.record
    x = _int32(ctx, signed_value(ctx, rec.data))
    if act.zp is None:
        z = _int32(ctx, signed_value(ctx, QTensor(rec.data.qtype, value=rec.params.zero_point)))
        x = ctx.b.emit(Op.SUB, x, z)
    elif act.zp:
        x = ctx.b.emit(Op.SUB, x, ctx.b.scalar_like(act.zp, x.type))
    return replay(ctx, ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(DType.INT16)), act.operand.ops)


def _int32(ctx: ImportContext, v: Value) -> Value:
    return ctx.b.emit(Op.CAST, v, attrs=A.CastAttrs(DType.INT32))


def weights(ctx: ImportContext, operand: Operand, channel_axes: tuple) -> Weights:
    rec = operand.record
    p, qt, data = rec.params, rec.data.qtype, rec.data.const
    if data is None:
        act = activation(operand, runtime_zp=True)
        return Weights(np.float64(act.scale), runtime=act)
    if qt.bits != 8 or is_value(p.scale) or is_value(p.zero_point) or operand.factor != 1.0:
        raise NoFold("weights are not 8-bit with constant scales and zero points")
    data_type = TensorType(qt.dtype, data.shape)
    scale = replay_numpy(np.broadcast_to(broadcast(ctx, p.scale, p, data_type), data.shape), operand.ops)
    zp = np.zeros((), np.int64) if p.zero_point is None else p.zero_point
    zp = replay_numpy(np.broadcast_to(broadcast(ctx, zp, p, data_type), data.shape), operand.ops)
    signed = replay_numpy(data, operand.ops) - qt.offset
    return Weights(channel_vector(scale, channel_axes), signed, zp - qt.offset)


def channel_vector(arr: np.ndarray, axes: tuple) -> np.ndarray:
    """The values of ``arr`` along ``axes`` (flattened), which must not vary along any other axis."""
    other = tuple(i for i in range(arr.ndim) if i not in axes)
    first = arr[tuple(0 if i in other else slice(None) for i in range(arr.ndim))]
    if not np.array_equal(np.broadcast_to(np.expand_dims(first, other), arr.shape), arr):
        raise NoFold("weight scales vary along an axis that is not an output channel")
    vector = np.asarray(first, dtype=np.float64).reshape(-1)
    return np.float64(vector[0]) if np.all(vector == vector[0]) else vector


def emit_weights(ctx: ImportContext, w: Weights, wide: bool = False) -> Value:
    """The weights as int8 (signed form, zero point ``w.zp``) or, ``wide``, as centered int16."""
    if w.runtime is not None:
        return emit_centered16(ctx, w.runtime) if wide else emit_activation(ctx, w.runtime)
    if wide:
        return ctx.b.const((w.signed - w.zps).astype(np.int16))
    return ctx.b.const(w.int8())


# -- constant real values (biases) ------------------------------------------------------

def const_real(ctx: ImportContext, v: Value) -> np.ndarray:
    """The float value of ``v`` when it is a constant or a DequantizeLinear of constants."""
    if v.producer is not None and v.producer.op is Op.CONST:
        return np.asarray(v.producer.attrs.values, dtype=np.float64)
    if v.producer is not None and v.producer.op in CONST_ELEMENTWISE:
        return _evaluated(ctx, v.producer)
    operand = trace(ctx, v, LAYOUT)
    rec = operand.record
    p, data = rec.params, rec.data.const
    if data is None or is_value(p.scale) or is_value(p.zero_point):
        raise NoFold("a bias is not constant")
    data_type = TensorType(rec.data.qtype.dtype, data.shape)
    zp = 0 if p.zero_point is None else broadcast(ctx, p.zero_point, p, data_type)
    real = (data - zp).astype(np.float64) * broadcast(ctx, p.scale, p, data_type).astype(np.float64)
    return replay_numpy(real.astype(np.float64), operand.ops)


def quantize_bias(real: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``real`` in accumulator units, as int32 (the scale broadcasts along the last axis)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.rint(real / scale)
    if not np.all(np.isfinite(q)) or q.min(initial=0) < -(1 << 31) or q.max(initial=0) >= 1 << 31:
        raise NoFold("a bias does not fit int32 accumulator units")
    return np.asarray(q, dtype=np.int32)      # an array even for a rank-0 bias (x + 3 of a hard-swish)


def clamp_is_exact_per_channel(scales: Union[float, np.ndarray], out_bits: int = 8) -> bool:
    """:func:`clamp_is_exact` for each channel's own bounds (see :func:`clamp_for_rescale`)."""
    mults, shifts = multipliers_shifts(scales)
    return all(clamp_is_exact((m,), (s,), out_bits) for m, s in zip(mults, shifts))


def requantize(ctx: ImportContext, y: Value, act: Activation, y_scale: float, y_zp: int) -> Value:
    """Signed-form int8 ``y`` (quantized as ``act``) in the output's scale and zero point."""
    if act.scale == y_scale and act.zp == y_zp:
        return y
    return requantize_int8(ctx, y, act.scale / y_scale, input_zp=act.zp, output_zp=y_zp)


def check_scales(scales: Union[float, Sequence[float], np.ndarray]) -> None:
    try:
        for s in np.reshape(scales, -1):
            multiplier_shift(s)
    except ScaleError as e:
        raise NoFold(str(e)) from None
