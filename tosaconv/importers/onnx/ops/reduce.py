"""Converters for ONNX reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin,
ReduceProd, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp and
ReduceSumSquare, in every version (axes as an attribute before opset 13 for
ReduceSum and 18 for the others, as a constant input after; ``keepdims``;
``noop_with_empty_axes``), and GlobalMaxPool (a REDUCE_MAX over the spatial
axes).

A TOSA reduction reduces one axis and keeps it as 1, so a multi-axis ONNX
reduction is a chain of them, and ``keepdims=0`` drops the reduced axes with
COLLAPSE_DIMS (they are literal 1s by then, so no size has to be computed).
ReduceMean is REDUCE_SUM times 1/count: a constant when the reduced dims are
static, and otherwise the count's Index value turned into a tensor, so a mean
over a dynamic axis divides by the size the symbol is bound to (``reduce_chain``,
``mean_over`` and ``mean_divisor`` live in :mod:`tosaconv.lowering.reduce`).
ReduceL1/L2/LogSum/SumSquare are an elementwise step around REDUCE_SUM, and
ReduceLogSumExp subtracts the max before EXP so that large inputs do not overflow.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import norm_axis
from ....lowering.elementwise import truncate
from ....lowering.reduce import mean_over, reduce_chain
from ....lowering.typed import mul
from ..reader import ConvertError
from ....lowering.limits import must_be_known
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader

# The opset version from which each op takes its axes as input 1 instead of an attribute.
_AXES_INPUT_SINCE = {"ReduceSum": 13, "ReduceMean": 18, "ReduceMax": 18, "ReduceMin": 18, "ReduceProd": 18,
                     "ReduceL1": 18, "ReduceL2": 18, "ReduceLogSum": 18, "ReduceLogSumExp": 18,
                     "ReduceSumSquare": 18}

REDUCE_AXES = must_be_known("axes-from-data", "axes", "the output shape depends on the reduced axes")
for _op in _AXES_INPUT_SINCE:
    publish(_op, REDUCE_AXES)


def _drop_axes(ctx: ImportContext, x: Value, axes: Sequence[int]) -> Value:
    """Remove reduced axes (literal 1s) from ``x``."""
    if not axes:
        return x
    return ctx.b.emit(Op.COLLAPSE_DIMS, x, attrs=A.IndicesAttrs(tuple(sorted(axes))))


def _reduce_axes(ctx: ImportContext, node: NodeReader, rank: int) -> Optional[list[int]]:
    """The sorted axes ``node`` reduces, or None when it is a no-op (empty axes, noop_with_empty_axes=1)."""
    axes = _given_axes(ctx, node)
    if not axes:
        # Versions before ReduceSum-13 / Reduce*-18 have no such attribute: empty axes reduce all.
        if node.attr("noop_with_empty_axes", 0):
            return None
        return list(range(rank))
    return sorted({norm_axis(int(a), rank) for a in axes})


def _given_axes(ctx: ImportContext, node: NodeReader) -> tuple[int, ...]:
    """Axes from the attribute (older versions) or from constant input 1; () when not given."""
    if node.version < _AXES_INPUT_SINCE[node.op_type]:
        return tuple(node.attr("axes", None) or ())
    name = node.input(1)
    if name is None:
        return ()
    c = ctx.const(name)
    if c is None:
        raise REDUCE_AXES.refuse(f"{node.op_type} axes input '{name}'")
    return tuple(int(a) for a in np.asarray(c).reshape(-1))


def _reduce(ctx: ImportContext, node: NodeReader, reducer: Callable[[ImportContext, Value, Sequence[int]], Value], composite: bool = False) -> Value:
    """Reduce with ``reducer(ctx, x, axes)``. A no-op reduction (a scalar, or empty axes with
    noop_with_empty_axes) returns x, or for a ``composite`` reducer (ReduceL2, ReduceLogSum...)
    its elementwise part: the reducer over no axes, as the ONNX reference and onnxruntime compute."""
    x = ctx.tensor(node.inputs[0])
    axes = _reduce_axes(ctx, node, x.type.rank) if x.type.rank else None
    if axes is None:
        return reducer(ctx, x, []) if composite else x
    y = reducer(ctx, x, axes)
    return y if node.attr("keepdims") else _drop_axes(ctx, y, axes)


def _with(op: OpDef) -> Callable[[ImportContext, Value, Sequence[int]], Value]:
    return lambda ctx, x, axes: reduce_chain(ctx, op, x, axes)


@converter("ReduceSum", since=1)
def convert_reduce_sum(ctx: ImportContext, node: NodeReader) -> Converted:
    return _reduce(ctx, node, _with(Op.REDUCE_SUM))


@converter("ReduceMean", since=1)
def convert_reduce_mean(ctx: ImportContext, node: NodeReader) -> Converted:
    return _reduce(ctx, node, mean_over)


@converter("ReduceMax", since=1)
def convert_reduce_max(ctx: ImportContext, node: NodeReader) -> Converted:
    return _reduce(ctx, node, _with(Op.REDUCE_MAX))


@converter("ReduceMin", since=1)
def convert_reduce_min(ctx: ImportContext, node: NodeReader) -> Converted:
    return _reduce(ctx, node, _with(Op.REDUCE_MIN))


@converter("ReduceProd", since=1)
def convert_reduce_prod(ctx: ImportContext, node: NodeReader) -> Converted:
    return _reduce(ctx, node, _with(Op.REDUCE_PRODUCT))


# -- reductions composed of an elementwise part and REDUCE_SUM / REDUCE_MAX ---------------

def _via_float(fn: Callable[[ImportContext, Value, Sequence[int]], Value]) -> Callable[[ImportContext, Value, Sequence[int]], Value]:
    """Integer data is reduced in float32 and truncated back toward zero, as onnxruntime does
    (TOSA has EXP, LOG and RSQRT for floating point only)."""
    def reducer(ctx: ImportContext, x: Value, axes: Sequence[int]) -> Value:
        if x.type.dtype.is_float:
            return fn(ctx, x, axes)
        y = fn(ctx, ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(DType.FP32)), axes)
        return ctx.b.emit(Op.CAST, truncate(ctx, y), attrs=A.CastAttrs(x.type.dtype))
    return reducer


def _sum(ctx: ImportContext, x: Value, axes: Sequence[int]) -> Value:
    return reduce_chain(ctx, Op.REDUCE_SUM, x, axes)


def _sum_square(ctx: ImportContext, x: Value, axes: Sequence[int]) -> Value:
    return _sum(ctx, mul(ctx, x, x), axes)


def _l1(ctx: ImportContext, x: Value, axes: Sequence[int]) -> Value:
    return _sum(ctx, ctx.b.emit(Op.ABS, x), axes)


def _l2(ctx: ImportContext, x: Value, axes: Sequence[int]) -> Value:
    return ctx.b.emit(Op.RECIPROCAL, ctx.b.emit(Op.RSQRT, _sum_square(ctx, x, axes)))


def _log_sum(ctx: ImportContext, x: Value, axes: Sequence[int]) -> Value:
    return ctx.b.emit(Op.LOG, _sum(ctx, x, axes))


def _log_sum_exp(ctx: ImportContext, x: Value, axes: Sequence[int]) -> Value:
    """``log(sum(exp(x - m))) + m`` with m the max over ``axes``, or 0 where the max is not finite
    (so an infinite or NaN max gives inf or NaN rather than inf - inf)."""
    m = reduce_chain(ctx, Op.REDUCE_MAX, x, axes)
    finite = ctx.b.emit(Op.EQUAL, ctx.b.emit(Op.SUB, m, m), ctx.b.scalar_like(0, m.type))
    m = ctx.b.emit(Op.SELECT, finite, m, ctx.b.scalar_like(0, m.type))
    total = _sum(ctx, ctx.b.emit(Op.EXP, ctx.b.emit(Op.SUB, x, m)), axes)
    return ctx.b.emit(Op.ADD, ctx.b.emit(Op.LOG, total), m)


for _name, _fn in (("ReduceL1", _l1), ("ReduceL2", _via_float(_l2)), ("ReduceLogSum", _via_float(_log_sum)),
                   ("ReduceLogSumExp", _via_float(_log_sum_exp)), ("ReduceSumSquare", _sum_square)):
    converter(_name, since=1)(lambda ctx, node, fn=_fn: _reduce(ctx, node, fn, composite=True))


@converter("GlobalMaxPool", since=1)
def convert_global_max_pool(ctx: ImportContext, node: NodeReader) -> Converted:
    """The max over every spatial axis (2 and up) of an [N, C, ...] input, kept as 1s."""
    x = ctx.tensor(node.inputs[0])
    if x.type.rank < 3:
        raise ConvertError(f"GlobalMaxPool needs an [N, C, spatial...] input, got rank {x.type.rank}")
    return reduce_chain(ctx, Op.REDUCE_MAX, x, list(range(2, x.type.rank)))
