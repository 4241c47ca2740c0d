"""Converters for ONNX MaxPool, AveragePool, LpPool and GlobalAveragePool (NCHW).

1-D and 2-D MaxPool and AveragePool without dilations (and MaxPool without
its Indices output) become TRANSPOSE, MAX_POOL2D / AVG_POOL2D, TRANSPOSE,
with pads, strides, ceil_mode and auto_pad fitted by :mod:`tosaconv.lowering.window`. TOSA's
AVG_POOL2D never counts padding, which is ONNX's ``count_include_pad=0``; for
``count_include_pad=1`` the pads are applied first as zeros by a PAD, so they
count as input, and only ceil mode's extra end padding (which ONNX and ORT do
not count either) stays in the pool. When a symbolic size needs an explicit
end PAD (which AVG_POOL2D would count), the result is divided by the same
pool of a ones tensor, so the counts cancel. Pads as large as the kernel are
refused there. 3-D pools, dilations, the Indices output and LpPool (the p-th
root of the sum of ``|x|^p``) are pooled one axis at a time by
:mod:`.pool_separable`.
GlobalAveragePool with static H, W is one AVG_POOL2D; with symbolic sizes it
is REDUCE_SUM over the spatial axes times 1/(H*W), where H*W is an Index value
turned into data (DIMS_TO_TENSOR, CAST, RECIPROCAL): a mean over a dynamic
axis divides by the bound size.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, Union

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import index_for, reshape
from ....lowering.pool import average_pool, average_pool_by_ratio, check_pads, pad_hw, pool_fits
from ....lowering.window import Geometry, Window, apply_fits, drop_1d, geometry, lift_1d, lowest, to_nchw, to_nhwc
from ....symbolic.expr import product
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish
from . import pool_separable as sep
from .window_attrs import read_window
from .qtypes import as_signed, stored_from_signed

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....lowering.window import Geometry
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader


def _window(node: NodeReader, rank: int) -> Window:
    kernel = node.attr("kernel_shape")
    if rank - 2 != len(kernel):
        raise ConvertError(f"{node.op_type} kernel_shape {list(kernel)} does not match input rank {rank}")
    return read_window(node, rank, kernel, _ceil_mode(node))


def _ceil_mode(node: NodeReader) -> bool:
    return bool(node.attr("ceil_mode", 0))


def _native(node: NodeReader, x: Value) -> bool:
    """1-D and 2-D pools without dilation map onto TOSA's 2-D pools."""
    dilations = node.attr("dilations", None) or ()
    return x.type.rank in (3, 4) and all(d == 1 for d in dilations)


# A dilated window with SAME padding has no agreed meaning: the same record for every pool that takes both.
SAME_DILATED = Limit(
    "same-dilated", LimitKind.ATTRIBUTE, "auto_pad", ("SAME_UPPER or SAME_LOWER with dilations other than 1",),
    "onnxruntime pads for the undilated kernel and ONNX's reference leaves output rows unset, so the result is "
    "ill-defined", "export with explicit pads")
for _op in ("MaxPool", "AveragePool", "LpPool"):
    publish(_op, SAME_DILATED)


def _axis_pools(ctx: ImportContext, node: NodeReader, x: Value) -> list:
    if x.type.rank < 3:
        raise ConvertError(f"{node.op_type} needs an input of rank 3 or more (N, C, spatial), not {x.type.rank}")
    dilations = node.attr("dilations", None) or ()
    if node.attr("auto_pad", "NOTSET").startswith("SAME") and any(d != 1 for d in dilations):
        raise SAME_DILATED.refuse(f"{node.op_type} with auto_pad {node.attr('auto_pad')} and dilations "
                                  f"{list(dilations)}")
    return sep.axis_pools(ctx, node, x, node.attr("kernel_shape"), _ceil_mode(node))


@converter("MaxPool", since=1)
def convert_max_pool(ctx: ImportContext, node: NodeReader) -> Converted:
    x, unsigned = as_signed(ctx, ctx.tensor(node.inputs[0]))   # uint8 data (QOperator models) pools signed
    result = _max_pool(ctx, node, x)
    if unsigned is None:
        return result
    if isinstance(result, list):
        return [stored_from_signed(ctx, result[0], unsigned)] + result[1:]
    return stored_from_signed(ctx, result, unsigned)


def _max_pool(ctx: ImportContext, node: NodeReader, x: Value) -> Union[Value, list[Value]]:
    if len(node.outputs) > 1 and node.outputs[1]:
        return list(sep.max_pool_with_indices(ctx, x, _axis_pools(ctx, node, x), node.attr("storage_order", 0)))
    if not _native(node, x):
        return sep.max_pool(ctx, x, _axis_pools(ctx, node, x))
    w = _window(node, x.type.rank)
    nhwc = to_nhwc(ctx, lift_1d(ctx, x, node.op_type))
    geoms = [geometry(ctx, nhwc.type.shape[1 + i], w, i) for i in range(2)]
    nhwc, pad = apply_fits(ctx, nhwc, pool_fits(nhwc, w, geoms), lowest(x.type.dtype))
    check_pads(node.op_type, pad, w)
    y = ctx.b.emit(Op.MAX_POOL2D, nhwc, attrs=A.MaxPool2dAttrs(w.kernel, w.stride, pad))
    return drop_1d(ctx, to_nchw(ctx, y), x.type.rank)


@converter("AveragePool", since=1)
def convert_average_pool(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if not x.type.dtype.is_float:
        raise ConvertError(f"AveragePool on {x.type.dtype.value} data is not supported")
    if not _native(node, x):
        return sep.average_pool(ctx, x, _axis_pools(ctx, node, x), bool(node.attr("count_include_pad")))
    w = _window(node, x.type.rank)
    nhwc = to_nhwc(ctx, lift_1d(ctx, x, node.op_type))
    geoms = [geometry(ctx, nhwc.type.shape[1 + i], w, i) for i in range(2)]
    counted = _counted_pads(geoms) if node.attr("count_include_pad") else None
    if counted is not None:
        nhwc = pad_hw(ctx, nhwc, counted, 0.0)
        geoms = [Geometry(g.out, 0, 0, g.bound - g.end) for g in geoms]
    fits = pool_fits(nhwc, w, geoms)
    if any(f.append for f in fits):
        y = average_pool_by_ratio(ctx, node.op_type, nhwc, w, fits, counted)
    else:
        y = average_pool(ctx, node.op_type, nhwc, w, fits)
    return drop_1d(ctx, to_nchw(ctx, y), x.type.rank)


def _counted_pads(geoms: Sequence[Geometry]) -> tuple:
    """count_include_pad=1: ONNX's pads become real zeros, (top, bottom, left, right)."""
    if not all(isinstance(g.end, int) for g in geoms):
        raise sep.COUNTED_SYMBOLIC_PAD.refuse("AveragePool with count_include_pad=1")
    return (geoms[0].begin, geoms[0].end, geoms[1].begin, geoms[1].end)


@converter("GlobalAveragePool", since=1)
def convert_global_average_pool(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if x.type.rank < 3 or not x.type.dtype.is_float:
        raise ConvertError("GlobalAveragePool needs a float input of rank 3 or more")
    spatial = x.type.shape[2:]
    if x.type.rank == 4 and all(isinstance(d, int) for d in spatial):
        attrs = A.AvgPool2dAttrs(tuple(spatial), (1, 1), (0, 0, 0, 0), DType.FP32)
        return to_nchw(ctx, ctx.b.emit(Op.AVG_POOL2D, to_nhwc(ctx, x), attrs=attrs))
    total = x
    for axis in range(2, x.type.rank):
        total = ctx.b.emit(Op.REDUCE_SUM, total, attrs=A.AxisAttrs(axis))
    return ctx.b.emit(Op.MUL, total, _inverse_count(ctx, product(spatial), x), attrs=A.MulAttrs(0))


def _inverse_count(ctx: ImportContext, count: Dim, x: Value) -> Value:
    """1/count as a tensor of x's rank: a constant, or computed from the Index value of count."""
    ones = [1] * x.type.rank
    if isinstance(count, int):
        return ctx.b.const(np.full(ones, 1.0 / count, dtype=x.type.dtype.numpy))
    n = ctx.b.dims_to_tensor([index_for(ctx, count)], DType.INT32)
    inverse = ctx.b.emit(Op.RECIPROCAL, ctx.b.emit(Op.CAST, n, attrs=A.CastAttrs(x.type.dtype)))
    return reshape(ctx, inverse, ones)


@converter("LpPool", since=2)
def convert_lp_pool(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    p = _lp_order(node, x)
    return _root(ctx, sep.sum_pool(ctx, _abs_power(ctx, x, p), _axis_pools(ctx, node, x)), p)


def _lp_order(node: NodeReader, x: Value) -> int:
    if x.type.rank < 3 or not x.type.dtype.is_float:
        raise ConvertError(f"{node.op_type} needs a float input of rank 3 or more")
    p = node.attr("p", 2)
    if p < 1 or p != int(p):
        raise ConvertError(f"{node.op_type} p={p} is not supported (p must be an integer >= 1)")
    return int(p)


def _abs_power(ctx: ImportContext, x: Value, p: int) -> Value:
    """|x|^p: ABS, MUL for p = 2, else POW (TOSA POW needs a base >= 0)."""
    if p == 2:
        return ctx.b.emit(Op.MUL, x, x, attrs=A.MulAttrs(0))
    magnitude = ctx.b.emit(Op.ABS, x)
    return magnitude if p == 1 else ctx.b.emit(Op.POW, magnitude, ctx.b.scalar_like(float(p), x.type))


def _root(ctx: ImportContext, total: Value, p: int) -> Value:
    """The p-th root of a sum of |x|^p (>= 0): RECIPROCAL(RSQRT) for p = 2, else POW(1/p)."""
    if p == 1:
        return total
    if p == 2:
        return ctx.b.emit(Op.RECIPROCAL, ctx.b.emit(Op.RSQRT, total))
    return ctx.b.emit(Op.POW, total, ctx.b.scalar_like(1.0 / p, total.type))
