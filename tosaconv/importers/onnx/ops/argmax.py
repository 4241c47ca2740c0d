"""Converters for ONNX ArgMax, ArgMin and Hardmax, built on TOSA ARGMAX.

TOSA ARGMAX returns the first index of the maximum (the first NaN, with
nan_mode PROPAGATE, as numpy and ONNX do) and takes int8, int16, fp16 and
fp32 data. What it is given:

* floats: x for ArgMax, ``-x`` for ArgMin (exact; NaN stays NaN);
* int8/int16: x, or ``~x`` for ArgMin (``~x = -x - 1`` reverses the order
  without the overflow of negating the most negative value);
* int32 (ONNX int32 and int64): the int8 mask ``x == max(x)`` (or ``min``):
  its first 1 is the first extreme element, and REDUCE_MAX/MIN and EQUAL
  take int32.

The lowering is :func:`tosaconv.lowering.reduce.arg_extreme`.
``select_last_index`` reverses the axis first and maps the index i back to
``n - 1 - i`` (n from the bound size when the axis is symbolic); ``keepdims``
puts the reduced axis back as a 1. Hardmax is the one-hot of ArgMax: the
axis' positions (a constant, or IOTA when the axis is symbolic) compared with
the index. Before opset 13 it works on the input flattened to 2-D at
``axis``, which is a RESHAPE to ``[d0, ..., d(axis-1), d(axis) * ... ]``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import index_for, norm_axis, reshape
from ....lowering.reduce import arg_extreme
from ....lowering.typed import compare
from ....symbolic.expr import product
from ..registry import converter
from .qtypes import as_signed

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


def _arg(find_min: bool) -> Callable[[ImportContext, NodeReader], Value]:
    def convert(ctx: ImportContext, node: NodeReader) -> Value:
        x, _ = as_signed(ctx, ctx.tensor(node.inputs[0]))   # uint8 data (QOperator models) compares signed
        axis = norm_axis(node.attr("axis"), x.type.rank)
        last = bool(node.attr("select_last_index", 0))
        index = arg_extreme(ctx, x, axis, find_min, last)
        if not node.attr("keepdims"):
            return index
        return ctx.b.emit(Op.EXPAND_DIMS, index, attrs=A.IndicesAttrs((axis,)))
    return convert


converter("ArgMax", since=1)(_arg(find_min=False))
converter("ArgMin", since=1)(_arg(find_min=True))


# -- Hardmax ----------------------------------------------------------------------------------

@converter("Hardmax", since=1)
def convert_hardmax(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    rank = x.type.rank
    axis = norm_axis(node.attr("axis"), rank)
    if node.version >= 13 or axis == rank - 1:
        return _hardmax(ctx, x, axis)
    shape = list(x.type.shape)
    flat = reshape(ctx, x, shape[:axis] + [product(shape[axis:])])
    return reshape(ctx, _hardmax(ctx, flat, axis), shape)


def _hardmax(ctx: ImportContext, x: Value, axis: int) -> Value:
    """1 at the first maximum along ``axis``, 0 elsewhere."""
    index = ctx.b.emit(Op.EXPAND_DIMS, arg_extreme(ctx, x, axis, False), attrs=A.IndicesAttrs((axis,)))
    hit = compare(ctx, Op.EQUAL, axis_positions(ctx, x, axis), index)
    return ctx.b.emit(Op.CAST, hit, attrs=A.CastAttrs(x.type.dtype))


def axis_positions(ctx: ImportContext, x: Value, axis: int) -> Value:
    """INT32 ``0 .. n-1`` along ``axis`` of x, with every other dim 1 (ready to broadcast)."""
    n = x.type.shape[axis]
    dims = [1] * x.type.rank
    dims[axis] = n
    if isinstance(n, int):
        return ctx.b.const(np.arange(n, dtype=np.int32).reshape(dims))
    iota = ctx.b.emit(Op.IOTA, index_for(ctx, n), attrs=A.IotaAttrs(DType.INT32))
    return reshape(ctx, iota, dims)
