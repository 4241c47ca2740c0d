"""Gathers both importers share, on TOSA GATHER (``values[N,K,C]`` read at ``indices[N,W]``).

:func:`gather` is ONNX's Gather and TFLite's GATHER without batch dims: a
shape tensor indexed by constants stays a list of Index values; a single
constant index is a SLICE; otherwise the data is viewed as ``[outer, K,
inner]`` and the indices (negative ones wrapped) are tiled over the outer
rows. :func:`gather_nd` views the data as ``[batch, indexed dims, rest]`` and
folds the last index axis into one row number (wrapped components times
strides, REDUCE_SUM). :func:`take` reads rows of one axis. GATHER takes no
bool tensors, so bools travel as INT8 (:func:`~.index_math.gather_safe`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, Union

import numpy as np

from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.constraints import Kind
from ..symbolic.expr import product, same
from .context import ShapeTensor
from .dims import index_for, norm_axis, reshape, slice_
from .errors import ConvertError
from .index_math import I32, as_int32, gather_safe, inverse, transpose

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..symbolic.expr import Dim
    from .context import LoweringContext


def gather(ctx: LoweringContext, data: str, indices: str, axis: int) -> Union[Value, ShapeTensor]:
    """Gather along ``axis`` of the values named ``data`` and ``indices`` (negative indices wrap).

    A shape tensor indexed by constants stays a ShapeTensor of the picked Index values."""
    st = ctx.shape_tensor(data)
    idx = ctx.const(indices)
    if st is not None and idx is not None and not st.scalar:
        n = len(st.dims)
        bad = [int(i) for i in idx.reshape(-1) if not -n <= int(i) < n]
        if bad:
            raise ConvertError(f"Gather index {bad[0]} is out of range for a shape of {n} dims")
        picked = [st.dims[int(i) + (n if i < 0 else 0)] for i in idx.reshape(-1)]
        return ShapeTensor(picked, scalar=idx.ndim == 0)
    return _gather_tensor(ctx, data, indices, axis)


def _gather_tensor(ctx: LoweringContext, data: str, indices: str, axis: int) -> Value:
    x = ctx.tensor(data)
    axis = norm_axis(axis, x.type.rank)
    shape = x.type.shape
    idx_const = ctx.const(indices)
    if idx_const is not None and idx_const.ndim == 0:
        return _gather_one(ctx, x, axis, int(idx_const))
    indices = _runtime_indices(ctx, indices, shape[axis])
    outer, inner = product(shape[:axis]), product(shape[axis + 1:])
    values = reshape(ctx, x, [outer, shape[axis], inner])
    w = product(indices.type.shape)
    flat = reshape(ctx, indices, [1, w])
    if not same(outer, 1):
        flat = _tile_rows(ctx, flat, outer)
    g = ctx.b.emit(Op.GATHER, values, flat)
    return reshape(ctx, g, list(shape[:axis]) + list(indices.type.shape) + list(shape[axis + 1:]))


def _tile_rows(ctx: LoweringContext, flat: Value, outer: Dim) -> Value:
    if isinstance(outer, int):
        return ctx.b.emit(Op.TILE, flat, attrs=A.TileAttrs((outer, 1)))
    return ctx.b.emit(Op.DYN_TILE, flat, index_for(ctx, outer), ctx.b.index(1))


def _runtime_indices(ctx: LoweringContext, name: str, k: Dim) -> Value:
    """Indices as INT32 with negative entries wrapped (ONNX allows -k..k-1)."""
    c = ctx.const(name)
    if c is not None and isinstance(k, int):
        return ctx.b.const(np.where(c < 0, c + k, c).astype(np.int32))
    idx = ctx.tensor(name)
    zero = ctx.b.scalar_like(0, idx.type)
    neg = ctx.b.emit(Op.GREATER, zero, idx)
    kt = ctx.b.dims_to_tensor([index_for(ctx, k)])
    kt = reshape(ctx, kt, [1] * idx.type.rank) if idx.type.rank != 1 else kt
    return ctx.b.emit(Op.SELECT, neg, ctx.b.emit(Op.ADD, idx, kt), idx)


def _gather_one(ctx: LoweringContext, x: Value, axis: int, i: int) -> Value:
    """Gather of a single constant index: SLICE then drop the axis."""
    k = x.type.shape[axis]
    start = i + k if i < 0 else i
    starts = [0] * x.type.rank
    starts[axis] = start
    sizes = list(x.type.shape)
    sizes[axis] = 1
    s = slice_(ctx, x, starts, sizes)
    return reshape(ctx, s, [d for j, d in enumerate(sizes) if j != axis])


def gather_nd(ctx: LoweringContext, data: Value, idx: Value, batch_dims: int) -> Value:
    """GatherND: ``data`` viewed as ``[batch, indexed dims, rest]`` read at ND indices ``idx`` (one GATHER)."""
    idx = as_int32(ctx, idx)
    b = batch_dims
    k, batch, indexed, rest = nd_layout(ctx, data, idx, b, "GatherND")
    mid = list(idx.type.shape[b:-1])
    rows = reshape(ctx, nd_rows(ctx, idx, indexed), [product(batch), product(mid)])
    values, undo = gather_safe(ctx, data)
    table = reshape(ctx, values, [product(batch), product(indexed), product(rest)])
    g = undo(ctx.b.emit(Op.GATHER, table, rows))
    return reshape(ctx, g, batch + mid + rest)


def dims_vector(ctx: LoweringContext, dims: Sequence[Dim], rank: int) -> Value:
    """An INT32 tensor ``[1, ..., 1, len(dims)]`` holding the dim values ``dims``."""
    if all(isinstance(d, int) for d in dims):
        return ctx.b.const(np.array(dims, dtype=np.int32).reshape((1,) * (rank - 1) + (len(dims),)))
    t = ctx.b.dims_to_tensor([index_for(ctx, d) for d in dims], I32)
    return reshape(ctx, t, [1] * (rank - 1) + [len(dims)])


def nd_rows(ctx: LoweringContext, idx: Value, dims: Sequence[Dim]) -> Value:
    """Row numbers ``[..., 1]`` of ND indices ``[..., k]`` into a ``dims`` block (wrapped, row-major)."""
    rank = idx.type.rank
    zero = ctx.b.const(np.zeros((1,) * rank, np.int32))
    negative = ctx.b.emit(Op.GREATER, zero, idx)
    idx = ctx.b.emit(Op.SELECT, negative, ctx.b.emit(Op.ADD, idx, dims_vector(ctx, dims, rank)), idx)
    strides = [product(dims[t + 1:]) for t in range(len(dims))]
    if len(dims) > 1:
        idx = ctx.b.emit(Op.MUL, idx, dims_vector(ctx, strides, rank), attrs=A.MulAttrs(0))
        idx = ctx.b.emit(Op.REDUCE_SUM, idx, attrs=A.AxisAttrs(rank - 1))
    return idx


def nd_layout(ctx: LoweringContext, data: Value, idx: Value, batch_dims: int, what: str) -> tuple:
    """(k, batch dims, indexed dims, rest dims) of a GatherND/ScatterND pair, with checks."""
    k = idx.type.shape[-1] if idx.type.rank else None
    if not isinstance(k, int):
        raise ConvertError(f"{what} needs the last dim of its indices to be static")
    if k < 1 or batch_dims + k > data.type.rank or batch_dims >= idx.type.rank:
        raise ConvertError(f"{what} indices of depth {k} with batch_dims {batch_dims} do not fit data of "
                           f"rank {data.type.rank}")
    for j in range(batch_dims):
        ctx.require(Kind.EQ, data.type.shape[j], idx.type.shape[j], f"{what} batch dim {j} of data and indices")
    shape = list(data.type.shape)
    return k, shape[:batch_dims], shape[batch_dims:batch_dims + k], shape[batch_dims + k:]


def take(ctx: LoweringContext, x: Value, axis: int, idx: Value) -> Value:
    """Rows ``idx`` (1-D INT32, already in range) of ``x`` along ``axis``: one GATHER with the axis in front."""
    perm = (axis,) + tuple(i for i in range(x.type.rank) if i != axis)
    moved = transpose(ctx, x, perm)
    n, *rest = moved.type.shape
    w = idx.type.shape[0]
    values, undo = gather_safe(ctx, moved)
    g = ctx.b.emit(Op.GATHER, reshape(ctx, values, [1, n, product(rest)]), reshape(ctx, idx, [1, w]))
    return transpose(ctx, reshape(ctx, undo(g), [w, *rest]), inverse(perm))
