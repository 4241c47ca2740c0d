"""Quantized MEAN, SUM, REDUCE_MAX and REDUCE_MIN (int8, uint8, int16), bit-exact with reduce.cc.

**MEAN and SUM** (reduce.cc ``EvalQuantizedMean`` / ``EvalSum`` ->
reference_ops::QuantizedMeanOrSum, the all-integer version LiteRT 2.x runs
for every axis set): the int32 sum of the stored values minus ``in_zp * n``
(that is, the sum of ``q - in_zp``), then ``MultiplyByQuantizedMultiplier``
and ``+ out_zp``, clamped to the type. The multiplier is ``PrepareMeanOrSum``'s
``QuantizeMultiplier(double(in_scale) / double(out_scale))``; MEAN folds
``1 / n`` into it the way the kernel does: ``s = min(floor(log2 n), 32, 31 +
exponent)``, ``multiplier = (multiplier << s) / n`` (int64, truncated),
``exponent -= s``. The whole tail is one DOUBLE_ROUND RESCALE
(= MultiplyByQuantizedMultiplier) straight into the output type with the
output zero point, whose saturation is the kernel's clamp (uint8 through int16,
see :func:`tosaconv.lowering.int32_ops.int32_to_output`). Where the RESCALE's shift is below 32 the sum is
first clamped to TOSA's input range, which only touches sums whose result
saturates anyway.

**REDUCE_MAX / REDUCE_MIN** (EvalGeneric) take the extreme stored value;
TFLite requires the input and output parameters to be equal (refused
otherwise, as LiteRT refuses them). uint8 goes through the order-preserving
``u - 128``.

Over H and W of a static NHWC tensor (the global pooling of CNN heads) the sum
is one DEPTHWISE_CONV2D with an all-ones H x W kernel and the input zero point
as its ``input_zp`` (int32 accumulator; int48 for int16, narrowed exactly):
the same integers, without the int32 copy of the input and the REDUCE_SUMs
that Ethos-U compilers implement with transposes.

Over a symbolic axis MEAN's multiplier depends on the count, so the tail is
the helper COUNT_RESCALE with the count as an Index operand; it becomes the
same RESCALE when the symbols are bound (tosaconv/ir/count_rescale.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....symbolic.expr import product
from ....lowering.dims import norm_axis
from ....lowering.reduce import reduce_chain
from ....ir.count_rescale import CountRescaleError, mean_multiplier, rescale_for
from ....lowering.dims import index_for
from ....lowering.int32_ops import Int32Ops, identity_rescale, input_as_int32
from ..qhelpers_data import same_quant
from ..qmath import same_types
from ..quant import QUANT_TYPES, quantize_multiplier, scale, unsigned, zero_point
from ..reader import ConvertError
from ..registry import converter
from .q_accum import activation as signed_activation, narrow48
from ..qmath import signed_input, to_unsigned

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....symbolic.expr import Dim
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

F32 = np.float32


def _axes(ctx: TfliteContext, node: OpReader, x: Value) -> tuple:
    """(sorted normalized axes, their element count n: an int, or a symbolic expression)."""
    c = ctx.const(node.inputs[1])
    if c is None:
        raise ConvertError(f"quantized {node.op_type} needs constant axes")
    axes = sorted({norm_axis(int(a), x.type.rank) for a in np.asarray(c).reshape(-1)})
    return axes, product([x.type.shape[a] for a in axes])


def _finish(ctx: TfliteContext, node: OpReader, y: Value, axes: Sequence[int]) -> Value:
    return y if node.opt("KeepDims") or not axes else \
        ctx.b.emit(Op.COLLAPSE_DIMS, y, attrs=A.IndicesAttrs(tuple(axes)))


def _multiplier(node: OpReader) -> tuple:
    """PrepareMeanOrSum's (multiplier, exponent) of ``double(in_scale) / double(out_scale)``."""
    real = float(np.float64(F32(scale(node.input_infos[0]))) / np.float64(F32(scale(node.output_infos[0]))))
    return quantize_multiplier(real)


def _mean_or_sum(mean: bool) -> Callable[[TfliteContext, OpReader], Value]:
    def convert(ctx: TfliteContext, node: OpReader) -> Value:
        same_types(node, 1)
        info, out = node.input_infos[0], node.output_infos[0]
        x = ctx.tensor(node.inputs[0])
        axes, n = _axes(ctx, node, x)
        acc = _spatial_sum(ctx, x, info, axes)
        if acc is None:
            acc = input_as_int32(ctx, x, info.type_name, zero_point(info))
            acc = reduce_chain(ctx, Op.REDUCE_SUM, acc, axes) if axes else acc
        m, e = _multiplier(node)
        wide = unsigned(out)
        out_zp, out_t = (0, DType.INT16) if wide else (zero_point(out), QUANT_TYPES[out.type_name])
        try:
            y = _scaled(ctx, acc, m, e, n if mean else 1, out_zp, out_t)
        except CountRescaleError as err:
            raise ConvertError(f"quantized {node.op_type} '{node.name}': {err}") from None
        if wide:   # uint8 through int16: TOSA has no int32 -> uint8 RESCALE
            y = identity_rescale(ctx, y, DType.INT8, output_zp=zero_point(out), output_unsigned=True)
        return _finish(ctx, node, y, axes)
    return convert


def _spatial_sum(ctx: TfliteContext, x: Value, info: TensorInfo, axes: Sequence[int]) -> Optional[Value]:
    """The int32 sum of ``q - zp`` over H and W of a static rank-4 input as a DEPTHWISE_CONV2D, else None."""
    shape = x.type.shape
    if x.type.rank != 4 or axes != [1, 2] or not all(isinstance(d, int) for d in shape[1:]):
        return None
    x, zp = signed_input(ctx, x, info)
    acc_t = DType.INT48 if x.type.dtype == DType.INT16 else DType.INT32
    ones = ctx.b.const(np.ones((shape[1], shape[2], shape[3], 1), np.int8))
    bias = ctx.b.emit(Op.CONST, attrs=A.ConstAttrs(np.zeros((shape[3],), np.int64), acc_t)) \
        if acc_t == DType.INT48 else ctx.b.const(np.zeros((shape[3],), np.int32))
    attrs = A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), acc_t, zp, 0)
    return narrow48(ctx, ctx.b.emit(Op.DEPTHWISE_CONV2D, x, ones, bias, attrs=attrs))


def _scaled(ctx: TfliteContext, acc: Value, m: int, e: int, n: Dim, out_zp: int, out_t: DType) -> Value:
    """``MultiplyByQuantizedMultiplier(acc) + out_zp`` saturated to ``out_t``, with MEAN's ``1 / n`` folded in
    (:mod:`tosaconv.ir.count_rescale`); a symbolic ``n`` becomes COUNT_RESCALE, which decays once bound."""
    if not isinstance(n, int):
        rescale_for(m, e, out_zp, out_t)     # n = 1's shift; larger counts are checked when bound
        return ctx.b.emit(Op.COUNT_RESCALE, acc, index_for(ctx, n), attrs=A.CountRescaleAttrs(m, e, out_zp, out_t))
    attrs, bounds = rescale_for(*mean_multiplier(m, e, n), out_zp, out_t)
    if bounds is not None:
        ops = Int32Ops(ctx, acc.type.rank)
        acc = ops.minimum(ops.maximum(acc, bounds[0]), bounds[1])
    return ctx.b.emit(Op.RESCALE, acc, attrs=attrs)


converter("MEAN", options="ReducerOptions", form="quantized")(_mean_or_sum(mean=True))
converter("SUM", options="ReducerOptions", form="quantized")(_mean_or_sum(mean=False))


def _extreme(op: OpDef) -> Callable[[TfliteContext, OpReader], Value]:
    def convert(ctx: TfliteContext, node: OpReader) -> Value:
        same_types(node, 1)
        same_quant(node)
        info = node.input_infos[0]
        x, _ = signed_activation(ctx, node.inputs[0], info)
        axes, _ = _axes(ctx, node, x)
        y = reduce_chain(ctx, op, x, axes) if axes else x
        return _finish(ctx, node, to_unsigned(ctx, y) if unsigned(info) else y, axes)
    return convert


converter("REDUCE_MAX", options="ReducerOptions", form="quantized")(_extreme(Op.REDUCE_MAX))
converter("REDUCE_MIN", options="ReducerOptions", form="quantized")(_extreme(Op.REDUCE_MIN))
