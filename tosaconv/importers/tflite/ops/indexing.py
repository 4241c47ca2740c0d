"""Converters for TFLite's indexing and generating ops: TILE, GATHER (axis,
batch_dims), GATHER_ND, ARG_MAX, ARG_MIN, CUMSUM, FILL, ZEROS_LIKE, RANGE and
BROADCAST_TO.

Most call the shared lowering with their operands (:mod:`tosaconv.lowering`:
``tile``, ``gather``, ``gather_nd``, ``cumsum``, ``arange_of``, ``expand``,
``arg_extreme``, ``fill``). GATHER with ``batch_dims`` views the params as
``[batch * outer, K, inner]`` and the indices as ``[batch, W]`` repeated over
``outer`` rows, one TOSA GATHER.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import index_for, norm_axis, reshape
from ....lowering.gather import gather, gather_nd
from ....lowering.index_math import as_int32, cumsum, fill, gather_safe
from ....lowering.pad import tile
from ....lowering.reduce import arg_extreme
from ....lowering.shapes import arange_of, expand
from ....symbolic.constraints import Kind
from ....symbolic.expr import product, same
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext


@converter("TILE", form="any")
def convert_tile(ctx: TfliteContext, node: OpReader) -> Converted:
    return tile(ctx, ctx.tensor(node.inputs[0]), ctx.dims(node.inputs[1]).dims)


@converter("GATHER", options="GatherOptions", form="any")
def convert_gather(ctx: TfliteContext, node: OpReader) -> Converted:
    b = node.opt("BatchDims")
    if b == 0:
        return gather(ctx, node.inputs[0], node.inputs[1], node.opt("Axis"))
    x = ctx.tensor(node.inputs[0])
    idx = as_int32(ctx, ctx.tensor(node.inputs[1]))
    b = b + idx.type.rank if b < 0 else b
    axis = norm_axis(node.opt("Axis"), x.type.rank)
    if not 0 < b <= axis or b > idx.type.rank:
        raise ConvertError(f"GATHER batch_dims {b} must be <= axis {axis} and the indices' rank {idx.type.rank}")
    shape = list(x.type.shape)
    for j in range(b):
        ctx.require(Kind.EQ, shape[j], idx.type.shape[j], f"GATHER batch dim {j} of params and indices")
    batch, outer, inner = shape[:b], shape[b:axis], shape[axis + 1:]
    w = list(idx.type.shape[b:])
    rows = reshape(ctx, idx, [product(batch), 1, product(w)])
    n_outer = product(outer)
    if not same(n_outer, 1):
        if isinstance(n_outer, int):
            rows = ctx.b.emit(Op.TILE, rows, attrs=A.TileAttrs((1, n_outer, 1)))
        else:
            rows = ctx.b.emit(Op.DYN_TILE, rows, ctx.b.index(1), index_for(ctx, n_outer), ctx.b.index(1))
    n = product(batch + outer)
    values, undo = gather_safe(ctx, x)
    table = reshape(ctx, values, [n, shape[axis], product(inner)])
    g = undo(ctx.b.emit(Op.GATHER, table, reshape(ctx, rows, [n, product(w)])))
    return reshape(ctx, g, batch + outer + w + inner)


@converter("GATHER_ND", form="any")
def convert_gather_nd(ctx: TfliteContext, node: OpReader) -> Converted:
    return gather_nd(ctx, ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1]), 0)


def _arg(find_min: bool) -> Callable[[TfliteContext, OpReader], Value]:
    def convert(ctx: TfliteContext, node: OpReader) -> Value:
        return arg_of(ctx, node, ctx.tensor(node.inputs[0]), find_min)
    return convert


def arg_of(ctx: TfliteContext, node: OpReader, x: Value, find_min: bool) -> Value:
    """ARG_MAX / ARG_MIN of ``x`` along the op's constant axis (input 1)."""
    axis_c = ctx.const(node.inputs[1])
    if axis_c is None:
        raise ConvertError(f"{node.op_type} needs a constant axis")
    axis = norm_axis(int(np.asarray(axis_c).reshape(-1)[0]), x.type.rank)
    return arg_extreme(ctx, x, axis, find_min)


converter("ARG_MAX", options="ArgMaxOptions")(_arg(find_min=False))
converter("ARG_MIN", options="ArgMinOptions")(_arg(find_min=True))


@converter("CUMSUM", options="CumsumOptions")
def convert_cumsum(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axis_c = ctx.const(node.inputs[1])
    if axis_c is None:
        raise ConvertError(f"CUMSUM axis input '{node.inputs[1]}' must be a constant")
    axis = norm_axis(int(np.asarray(axis_c).reshape(-1)[0]), x.type.rank)
    return cumsum(ctx, x, axis, bool(node.opt("Exclusive")), bool(node.opt("Reverse")))


@converter("FILL")
def convert_fill(ctx: TfliteContext, node: OpReader) -> Converted:
    dims = ctx.dims(node.inputs[0]).dims
    value = ctx.const(node.inputs[1])
    if value is not None:
        value = np.asarray(value).reshape(-1)
        if all(isinstance(d.type.value, int) for d in dims):
            return ctx.b.const(np.full([d.type.value for d in dims], value[0], dtype=value.dtype))
        base = ctx.b.const(value.reshape((1,) * len(dims)))
    else:
        v = ctx.tensor(node.inputs[1])
        if not same(product(v.type.shape), 1):
            raise ConvertError("FILL value must hold one element")
        base = reshape(ctx, v, [1] * len(dims))
    if all(same(d.type.value, 1) for d in dims):
        return base
    return ctx.b.emit(Op.DYN_TILE, base, *dims)


@converter("ZEROS_LIKE", options="ZerosLikeOptions")
def convert_zeros_like(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    return fill(ctx, False if x.type.dtype.name == "BOOL" else 0, x.type.dtype, list(x.type.shape))


@converter("RANGE", options="RangeOptions")
def convert_range(ctx: TfliteContext, node: OpReader) -> Converted:
    return arange_of(ctx, *node.inputs[:3])


@converter("BROADCAST_TO", options="BroadcastToOptions", form="any")
def convert_broadcast_to(ctx: TfliteContext, node: OpReader) -> Converted:
    return expand(ctx, ctx.tensor(node.inputs[0]), ctx.dims(node.inputs[1]).dims)
