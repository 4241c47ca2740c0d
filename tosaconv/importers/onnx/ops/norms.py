"""Converters for the ONNX normalizations over blocks of an [N, C, ...] input:
InstanceNormalization, GroupNormalization (opset 18 and 21),
MeanVarianceNormalization, LpNormalization and LRN (across channels, see
:mod:`tosaconv.lowering.lrn`).

Instance and group normalization standardize with
:func:`.normalize.standardize` (mean, then the mean of squared deviations).
GroupNormalization reshapes ``[N, C, *S]`` to ``[N, G, C/G, *S]`` and
reduces over every axis from 2 on, so no product of symbolic dims is
needed; C must divide by G (a ledger fact when C is symbolic). Opset 18
scales per group (scale and bias have G entries) in the input's type; opset
21 computes in float32 when ``stash_type`` is 1, casts back, and scales per
channel (C entries), as the two schemas' function bodies do.

MeanVarianceNormalization is ``(x - mean) / (sqrt(var) + 1e-9)`` over
``axes``, the epsilon added after the square root as in its function body.
LpNormalization divides by the L1 or L2 norm along ``axis`` and gives 0
where the norm is 0 (the ONNX reference does; a plain division would give NaN).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape
from ....lowering.elementwise import sqrt
from ....lowering.lrn import local_response
from ....lowering.reduce import mean_over, reduce_chain
from ....lowering.typed import mul
from ....symbolic.constraints import Kind
from ....symbolic.expr import floordiv
from ..reader import ConvertError
from ..registry import converter
from .normalize import cast_to, channel_shape, standardize

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader

MVN_EPSILON = 1e-9


def _per_channel(ctx: ImportContext, v: Value, x: Value, what: str) -> Value:
    """A [C] tensor as [1, C, 1, ...] at x's rank."""
    if v.type.rank != 1:
        raise ConvertError(f"{what} must be 1-D with one entry per channel, got rank {v.type.rank}")
    return reshape(ctx, v, channel_shape(ctx, x, v.type.shape[0], what))


def _scale_and_shift(ctx: ImportContext, y: Value, scale: Value, bias: Value) -> Value:
    return ctx.b.emit(Op.ADD, mul(ctx, y, scale), bias)


@converter("InstanceNormalization", since=6)
def convert_instance_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if x.type.rank < 3:
        raise ConvertError(f"InstanceNormalization needs an [N, C, spatial...] input, got rank {x.type.rank}")
    y, _, _ = standardize(ctx, x, list(range(2, x.type.rank)), node.attr("epsilon"))
    scale, bias = (_per_channel(ctx, cast_to(ctx, ctx.tensor(n), x.type.dtype), x, f"InstanceNormalization {w}")
                   for n, w in zip(node.inputs[1:3], ("scale", "B")))
    return _scale_and_shift(ctx, y, scale, bias)


# -- GroupNormalization -------------------------------------------------------------------

@converter("GroupNormalization", since=18)
def convert_group_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    groups = node.attr("num_groups")
    if x.type.rank < 3:
        raise ConvertError(f"GroupNormalization needs an [N, C, spatial...] input, got rank {x.type.rank}")
    if groups < 1:
        raise ConvertError(f"GroupNormalization num_groups must be >= 1, got {groups}")
    n, channels, *spatial = x.type.shape
    ctx.require(Kind.DIVISIBLE, channels, groups, f"the channels divide into {groups} groups")
    grouped_shape = [n, groups, floordiv(channels, groups)] + spatial
    per_channel = node.version >= 21
    dtype = DType.FP32 if per_channel and node.attr("stash_type") == 1 and x.type.dtype.is_float else x.type.dtype
    grouped = cast_to(ctx, reshape(ctx, x, grouped_shape), dtype)
    y, _, _ = standardize(ctx, grouped, list(range(2, len(grouped_shape))), node.attr("epsilon"))
    scale, bias = (cast_to(ctx, ctx.tensor(name), x.type.dtype) for name in node.inputs[1:3])
    if per_channel:
        y = cast_to(ctx, reshape(ctx, y, list(x.type.shape)), x.type.dtype)
        return _scale_and_shift(ctx, y, _per_channel(ctx, scale, y, "GroupNormalization scale"),
                                _per_channel(ctx, bias, y, "GroupNormalization bias"))
    scale, bias = (_per_group(ctx, v, y, groups) for v in (scale, bias))
    return reshape(ctx, _scale_and_shift(ctx, y, scale, bias), list(x.type.shape))


def _per_group(ctx: ImportContext, v: Value, grouped: Value, groups: int) -> Value:
    """Opset 18's scale/bias: G entries, as [1, G, 1, ...] at the grouped rank."""
    if v.type.rank != 1:
        raise ConvertError(f"GroupNormalization-18 scale and bias must be 1-D, got rank {v.type.rank}")
    ctx.require(Kind.EQ, v.type.shape[0], groups,
                "GroupNormalization-18 scale and bias have one entry per group (opset 21 has one per channel)")
    return reshape(ctx, v, [1, groups] + [1] * (grouped.type.rank - 2))


# -- MeanVarianceNormalization, LpNormalization ----------------------------------------------

@converter("MeanVarianceNormalization", since=9)
def convert_mean_variance_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axes = sorted({norm_axis(int(a), x.type.rank) for a in node.attr("axes")})
    centered = ctx.b.emit(Op.SUB, x, mean_over(ctx, x, axes))
    std = sqrt(ctx, mean_over(ctx, mul(ctx, centered, centered), axes))
    denominator = ctx.b.emit(Op.ADD, std, ctx.b.scalar_like(MVN_EPSILON, std.type))
    return mul(ctx, centered, ctx.b.emit(Op.RECIPROCAL, denominator))


@converter("LpNormalization", since=1)
def convert_lp_normalization(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axis = norm_axis(node.attr("axis"), x.type.rank)
    p = node.attr("p")
    if p == 1:
        norm = reduce_chain(ctx, Op.REDUCE_SUM, ctx.b.emit(Op.ABS, x), [axis])
    elif p == 2:
        norm = sqrt(ctx, reduce_chain(ctx, Op.REDUCE_SUM, mul(ctx, x, x), [axis]))
    else:
        raise ConvertError(f"LpNormalization supports p = 1 or 2 (as ONNX defines it), not p = {p}")
    zero = ctx.b.scalar_like(0, x.type)
    is_zero = ctx.b.emit(Op.EQUAL, norm, zero)
    return ctx.b.emit(Op.SELECT, is_zero, zero, mul(ctx, x, ctx.b.emit(Op.RECIPROCAL, norm)))


# -- LRN -------------------------------------------------------------------------------------

@converter("LRN", since=1)
def convert_lrn(ctx: ImportContext, node: NodeReader) -> Converted:
    """ONNX LRN: the window of ``size`` channels around each one, scaled by ``alpha / size``."""
    size = node.attr("size")
    if size < 1:
        raise ConvertError(f"LRN size must be >= 1, got {size}")
    return local_response(ctx, ctx.tensor(node.inputs[0]), (size - 1) // 2, size // 2,
                          node.attr("alpha") / size, node.attr("bias"), node.attr("beta"))
