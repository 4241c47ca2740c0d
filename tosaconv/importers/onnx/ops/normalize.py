"""Converters for ONNX normalizations: Softmax and LogSoftmax (both the
flatten-to-2-D semantics before opset 13 and the single axis after),
LayerNormalization (opset 17) and BatchNormalization in inference mode.

Softmax is the numerically stable form: subtract the max, EXP, REDUCE_SUM,
RECIPROCAL, MUL. Before opset 13 ONNX normalizes over the flattened block of
dims ``axis..rank-1``; reducing over each of those axes in turn gives exactly
that without reshaping through a product of symbolic dims. LayerNormalization
computes the mean and variance with the reductions of :mod:`.reduce` and also
returns them (Mean and InvStdDev are intermediates it computes anyway);
``standardize`` is that step, shared with the instance and group
normalizations of :mod:`.norms`.
BatchNormalization folds its statistics into one scale and one shift, with
numpy at import time when they are constants, and with IR ops otherwise.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape
from ....lowering.reduce import mean_divisor, mean_over, reduce_chain
from ....lowering.typed import mul as _mul
from ....symbolic.constraints import Kind
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader


def _shifted_exp(ctx: ImportContext, x: Value, axes: Sequence[int]) -> tuple[Value, Value, Value]:
    """``(x - max, exp(x - max), sum(exp(x - max)))`` over ``axes`` (kept as 1s)."""
    shifted = ctx.b.emit(Op.SUB, x, reduce_chain(ctx, Op.REDUCE_MAX, x, axes))
    e = ctx.b.emit(Op.EXP, shifted)
    return shifted, e, reduce_chain(ctx, Op.REDUCE_SUM, e, axes)


def _softmax_axes(node: NodeReader, rank: int) -> list:
    """Opset >= 13: the one ``axis``; before: every axis of the flattened block ``axis..rank-1``."""
    axis = norm_axis(node.attr("axis"), rank)
    return [axis] if node.version >= 13 else list(range(axis, rank))


@converter("Softmax", since=1)
def convert_softmax(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    _, e, total = _shifted_exp(ctx, x, _softmax_axes(node, x.type.rank))
    return _mul(ctx, e, ctx.b.emit(Op.RECIPROCAL, total))


@converter("LogSoftmax", since=1)
def convert_log_softmax(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    shifted, _, total = _shifted_exp(ctx, x, _softmax_axes(node, x.type.rank))
    return ctx.b.emit(Op.SUB, shifted, ctx.b.emit(Op.LOG, total))


# -- LayerNormalization ---------------------------------------------------------

def cast_to(ctx: ImportContext, x: Value, dtype: DType) -> Value:
    return x if x.type.dtype is dtype else ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(dtype))


def stash_dtype(node: NodeReader, x: Value) -> DType:
    """The computation type: float32 when stash_type=1 (the default), else the input's type."""
    return DType.FP32 if node.attr("stash_type") == 1 and x.type.dtype.is_float else x.type.dtype


def standardize(ctx: ImportContext, x: Value, axes: Sequence[int], epsilon: float) -> tuple[Value, Value, Value]:
    """``((x - mean) * rsqrt(var + epsilon), mean, rsqrt(var + epsilon))`` over ``axes`` (kept as 1s);
    the variance is the mean of the squared deviations, which is never negative."""
    divisor = mean_divisor(ctx, x, axes)
    mean = mean_over(ctx, x, axes, divisor)
    centered = ctx.b.emit(Op.SUB, x, mean)
    var = mean_over(ctx, _mul(ctx, centered, centered), axes, divisor)
    inv_std = ctx.b.emit(Op.RSQRT, ctx.b.emit(Op.ADD, var, ctx.b.scalar_like(epsilon, var.type)))
    return _mul(ctx, centered, inv_std), mean, inv_std


@converter("LayerNormalization", since=17)
def convert_layer_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axes = list(range(norm_axis(node.attr("axis"), x.type.rank), x.type.rank))
    xs = cast_to(ctx, x, stash_dtype(node, x))
    normalized, mean, inv_std = standardize(ctx, xs, axes, node.attr("epsilon"))
    y = _mul(ctx, cast_to(ctx, normalized, x.type.dtype), ctx.tensor(node.inputs[1]))
    if node.input(2):
        y = ctx.b.emit(Op.ADD, y, ctx.tensor(node.input(2)))
    return [y, mean, inv_std]


# -- BatchNormalization -----------------------------------------------------------

BN_TRAINING_MODE, BN_TRAINING_OUTPUTS = publish(
    "BatchNormalization",
    Limit("training-mode", LimitKind.ATTRIBUTE, "training_mode", (1,),
          "training mode normalizes with the batch's own statistics; tosaconv converts inference graphs",
          "export the model in inference mode"),
    Limit("training-outputs", LimitKind.OUTPUT, "running_mean or running_var (mean, var, saved_mean or "
          "saved_var before version 14)", (), "they exist only in training mode; tosaconv converts inference graphs",
          "export the model in inference mode"))


@converter("BatchNormalization", since=9)
def convert_batch_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    if node.attr("training_mode", 0):
        raise BN_TRAINING_MODE.refuse("BatchNormalization in training mode")
    if len([o for o in node.outputs if o]) > 1:
        raise BN_TRAINING_OUTPUTS.refuse(f"BatchNormalization with {len(node.outputs)} outputs")
    x = ctx.tensor(node.inputs[0])
    if x.type.rank < 2:
        raise ConvertError(f"BatchNormalization input has rank {x.type.rank}; it needs [N, C, ...]")
    stats = [ctx.const(n) for n in node.inputs[1:5]]
    if all(s is not None for s in stats):
        scale, shift = _folded_constants(ctx, x, stats, node.attr("epsilon"))
    else:
        scale, shift = _folded_values(ctx, x, node, node.attr("epsilon"))
    return ctx.b.emit(Op.ADD, _mul(ctx, x, scale), shift)


def channel_shape(ctx: ImportContext, x: Value, channels: Dim, what: str = "BatchNormalization statistics") -> list:
    """``[1, C, 1, ...]`` at x's rank, after recording that x has C channels."""
    ctx.require(Kind.EQ, x.type.shape[1], channels, f"{what} have one entry per channel")
    return [1, channels] + [1] * (x.type.rank - 2)


def _folded_constants(ctx: ImportContext, x: Value, stats: Sequence[np.ndarray], eps: float) -> tuple[Value, Value]:
    """scale = gamma / sqrt(var + eps) and shift = beta - mean * scale, folded in float64."""
    with np.errstate(all="ignore"):   # float folding: a negative variance gives NaN, as onnxruntime computes
        gamma, beta, mean, var = (np.asarray(s, dtype=np.float64).reshape(-1) for s in stats)
        scale = gamma / np.sqrt(var + eps)
        shift = beta - mean * scale
        shape = channel_shape(ctx, x, scale.shape[0])
        dtype = x.type.dtype.numpy
        scale, shift = scale.reshape(shape).astype(dtype), shift.reshape(shape).astype(dtype)
    return (ctx.b.const(scale, name=f"{ctx.b.location.name}.scale"),
            ctx.b.const(shift, name=f"{ctx.b.location.name}.shift"))


def _folded_values(ctx: ImportContext, x: Value, node: NodeReader, eps: float) -> tuple[Value, Value]:
    """The same folding with IR ops, for statistics computed at run time."""
    gamma, beta, mean, var = (cast_to(ctx, ctx.tensor(n), x.type.dtype) for n in node.inputs[1:5])
    inv_std = ctx.b.emit(Op.RSQRT, ctx.b.emit(Op.ADD, var, ctx.b.scalar_like(eps, var.type)))
    scale = _mul(ctx, gamma, inv_std)
    shift = ctx.b.emit(Op.SUB, beta, _mul(ctx, mean, scale))
    shape = channel_shape(ctx, x, scale.type.shape[0])
    return reshape(ctx, scale, shape), reshape(ctx, shift, shape)
