"""Pools TOSA's 2-D pools cannot express, one spatial axis at a time: 3-D pools, dilations,
MaxPool's Indices output, LpPool.

A pool's window is a box, so ONNX's max, sum and valid-element count are
separable: pooling axis after axis gives the same result (and an average is
the per-axis averages in turn, since the count of a box is the product of the
per-axis counts). Along one axis with kernel ``k``, stride ``s`` and dilation
``d``, output ``o`` reads padded position ``o*s + t*d`` for each tap ``t``. The
tensor is viewed as ``[N, C, before, L, after]``, padded (with the pool's
neutral value) by ONNX's begin pad and enough at the end, and each tap is one
SLICE of ``out`` rows; with ``s > 1`` the padded axis is first cut to ``Q*s``
rows and reshaped to ``[Q, s]``, so tap ``t`` is rows ``q..q+out`` of phase
``r`` where ``t*d = q*s + r``. Taps combine with MAXIMUM or ADD; averages divide
by the per-axis counts (a constant, or the same taps run over a ones mask
when the size is symbolic). Output sizes and pads come from ONNX's geometry
in :mod:`tosaconv.lowering.window` (auto_pad, ceil_mode, symbolic sizes).

MaxPool's Indices (the flat NCHW index, or column-major spatial index with
``storage_order=1``) follow each maximum: axes go innermost first and a tap
replaces the running best only when strictly greater, so ties keep the first
element in row-major order, as ONNX's reference does.
"""
from __future__ import annotations

import functools
from ....records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import index_for, reshape, slice_
from ....lowering.window import Geometry, geometry, lowest
from ....symbolic.expr import add, mul, product, sub
from ....lowering.limits import Limit, LimitKind
from ..reader import ConvertError
from ..registry import publish
from .windows_nd import nd_window

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader

COUNTED_SYMBOLIC_PAD = publish("AveragePool", Limit(
    "counted-symbolic-pad", LimitKind.ATTRIBUTE, "count_include_pad",
    ("1 with SAME padding, stride above 1 and a symbolic spatial size",),
    "the counted end pad depends on the size", "bind the symbol first (--bind or --input-shape)"))


@dataclass(frozen=True)
class AxisPool:
    """One spatial axis of a pool: its ONNX axis, window and ONNX geometry."""

    axis: int
    kernel: int
    stride: int
    dilation: int
    geometry: Geometry

    def rows(self) -> Dim:
        """Padded rows the taps read: the window extent, or ``Q*s`` for the ``[Q, s]`` view."""
        g, s, reach = self.geometry, self.stride, (self.kernel - 1) * self.dilation
        return add(g.out, reach) if s == 1 else mul(add(g.out, reach // s + 1), s)


def axis_pools(ctx: ImportContext, node: NodeReader, x: Value, kernel: Sequence[int], ceil_mode: bool) -> list:
    """ONNX's window attributes and geometry, one AxisPool per spatial axis of ``x``."""
    n = len(kernel)
    if x.type.rank != n + 2:
        raise ConvertError(f"{node.op_type} kernel_shape {list(kernel)} does not match input rank {x.type.rank}")
    w = nd_window(node, kernel, ceil_mode)
    return [AxisPool(2 + i, w.kernel[i], w.stride[i], w.dilation[i], geometry(ctx, x.type.shape[2 + i], w, i))
            for i in range(n)]


# -- taps -----------------------------------------------------------------------------------

def taps(ctx: ImportContext, x: Value, p: AxisPool, pad_value: float) -> list:
    """The ``kernel`` taps along ``p.axis``, each ``[N, C, before, out, (1,) after]``."""
    n, c, *spatial = x.type.shape
    i = p.axis - 2
    before, size, after = product(spatial[:i]), spatial[i], product(spatial[i + 1:])
    g, s, d = p.geometry, p.stride, p.dilation
    y = reshape(ctx, x, [n, c, before, size, after])
    end = sub(sub(p.rows(), g.begin), size)
    end = max(end, 0) if isinstance(end, int) else g.bound + 2 * s - 1
    if g.begin or end:
        padding = (0, 0, 0, 0, 0, 0, g.begin, end, 0, 0)
        y = ctx.b.emit(Op.PAD, y, attrs=A.PadAttrs(padding, pad_value))
    if s == 1:
        return [slice_(ctx, y, [0, 0, 0, t * d, 0], [n, c, before, g.out, after]) for t in range(p.kernel)]
    y = slice_(ctx, y, [0, 0, 0, 0, 0], [n, c, before, p.rows(), after])
    y = reshape(ctx, y, [n, c, before, add(g.out, (p.kernel - 1) * d // s + 1), s, after])
    return [slice_(ctx, y, [0, 0, 0, *divmod(t * d, s), 0], [n, c, before, g.out, 1, after])
            for t in range(p.kernel)]


def restore(ctx: ImportContext, y: Value, like: Value, p: AxisPool) -> Value:
    """A combined tap result back to ``like``'s rank, with ``p.axis`` now ONNX's output size."""
    shape = list(like.type.shape)
    shape[p.axis] = p.geometry.out
    return reshape(ctx, y, shape)


def _reduce(ctx: ImportContext, x: Value, p: AxisPool, pad_value: float, op: OpDef) -> Value:
    return restore(ctx, functools.reduce(lambda a, b: ctx.b.emit(op, a, b, attrs=_attrs(op)),
                                         taps(ctx, x, p, pad_value)), x, p)


def _attrs(op: OpDef) -> A.Attrs:
    return A.NanModeAttrs() if op is Op.MAXIMUM else A.NoAttrs()


# -- the pools ----------------------------------------------------------------------------------

def max_pool(ctx: ImportContext, x: Value, pools: list[AxisPool]) -> Value:
    for p in reversed(pools):
        x = _reduce(ctx, x, p, lowest(x.type.dtype), Op.MAXIMUM)
    return x


def sum_pool(ctx: ImportContext, x: Value, pools: list[AxisPool]) -> Value:
    for p in reversed(pools):
        x = _reduce(ctx, x, p, 0.0, Op.ADD)
    return x


def average_pool(ctx: ImportContext, x: Value, pools: list[AxisPool], include_pad: bool) -> Value:
    """Per axis: the sum of the taps times 1/count, ONNX's count of that axis's window."""
    for p in reversed(pools):
        total = _reduce(ctx, x, p, 0.0, Op.ADD)
        x = ctx.b.emit(Op.MUL, total, _inverse_counts(ctx, x, p, include_pad), attrs=A.MulAttrs(0))
    return x


def _inverse_counts(ctx: ImportContext, x: Value, p: AxisPool, include_pad: bool) -> Value:
    """1/count per output along ``p.axis``, shaped to broadcast: counted are input elements, and
    with count_include_pad=1 also the explicit (or SAME) pads, never ceil mode's extra end."""
    g, size, dtype = p.geometry, x.type.shape[p.axis], x.type.dtype
    shape = [1] * x.type.rank
    shape[p.axis] = g.out
    if isinstance(size, int) and isinstance(g.out, int) and isinstance(g.end, int):
        pos = np.arange(g.out)[:, None] * p.stride + np.arange(p.kernel)[None, :] * p.dilation
        low, high = (0, g.begin + size + g.end) if include_pad else (g.begin, g.begin + size)
        counts = ((pos >= low) & (pos < high)).sum(axis=1)
        return ctx.b.const((1.0 / counts).reshape(shape).astype(dtype.numpy))
    return ctx.b.emit(Op.RECIPROCAL, _mask_counts(ctx, x, p, include_pad))


def _mask_counts(ctx: ImportContext, x: Value, p: AxisPool, include_pad: bool) -> Value:
    """The counts as the same tap sum over a mask: ones on the input (and the counted pads)."""
    g, size = p.geometry, x.type.shape[p.axis]
    mask_shape = [1] * x.type.rank
    multiples = [1] * x.type.rank
    multiples[p.axis] = size
    mask = ctx.b.const(np.ones(mask_shape, x.type.dtype.numpy))
    mask = ctx.b.emit(Op.DYN_TILE, mask, *[index_for(ctx, m) for m in multiples])
    if include_pad and (g.begin or g.end):
        if not isinstance(g.end, int):
            raise COUNTED_SYMBOLIC_PAD.refuse("AveragePool with count_include_pad=1")
        padding = [0] * (2 * x.type.rank)
        padding[2 * p.axis:2 * p.axis + 2] = [g.begin, g.end]
        mask = ctx.b.emit(Op.PAD, mask, attrs=A.PadAttrs(tuple(padding), 1.0))
        p = AxisPool(p.axis, p.kernel, p.stride, p.dilation, Geometry(g.out, 0, 0, g.bound - g.end))
    return _reduce(ctx, mask, p, 0.0, Op.ADD)


# -- MaxPool's Indices -------------------------------------------------------------------

def max_pool_with_indices(ctx: ImportContext, x: Value, pools: list[AxisPool], storage_order: int) -> tuple:
    """(values, int32 indices): each axis keeps the first strict maximum and its flat index."""
    best, index = x, _spatial_index(ctx, x, storage_order)
    for p in reversed(pools):
        values, indices = taps(ctx, best, p, lowest(x.type.dtype)), taps(ctx, index, p, -1)
        v, i = values[0], indices[0]
        for tv, ti in zip(values[1:], indices[1:]):
            greater = ctx.b.emit(Op.GREATER, tv, v)
            v, i = ctx.b.emit(Op.SELECT, greater, tv, v), ctx.b.emit(Op.SELECT, greater, ti, i)
        best, index = restore(ctx, v, best, p), restore(ctx, i, best, p)
    return best, ctx.b.emit(Op.ADD, index, _plane_offsets(ctx, x))


def _spatial_index(ctx: ImportContext, x: Value, storage_order: int) -> Value:
    """``[1, 1, *spatial]`` int32: each element's index within its plane (row- or column-major)."""
    spatial = x.type.shape[2:]
    if all(isinstance(d, int) for d in spatial):
        flat = np.arange(int(np.prod(spatial)), dtype=np.int32)
        index = flat.reshape(spatial) if storage_order == 0 else flat.reshape(spatial[::-1]).T
        return ctx.b.const(np.ascontiguousarray(index).reshape((1, 1, *spatial)))
    index = None
    for j, size in enumerate(spatial):
        step = product(spatial[j + 1:]) if storage_order == 0 else product(spatial[:j])
        shape = [1] * x.type.rank
        shape[2 + j] = size
        term = _times(ctx, reshape(ctx, _iota(ctx, size), shape), step)
        index = term if index is None else ctx.b.emit(Op.ADD, index, term)
    return index


def _plane_offsets(ctx: ImportContext, x: Value) -> Value:
    """``[N, C, 1, ...]`` int32: ``(n*C + c) * plane size``, the start of each plane's indices."""
    n, c, *spatial = x.type.shape
    plane, planes = product(spatial), mul(n, c)
    total = mul(planes, plane)
    if isinstance(total, int) and total > np.iinfo(np.int32).max:
        raise ConvertError("MaxPool's Indices exceed the int32 range TOSA supports")
    return _times(ctx, reshape(ctx, _iota(ctx, planes), [n, c] + [1] * len(spatial)), plane)


def _iota(ctx: ImportContext, n: Dim) -> Value:
    """``[0, 1, ..., n-1]`` int32: a CONST, or IOTA when ``n`` is symbolic."""
    if isinstance(n, int):
        return ctx.b.const(np.arange(n, dtype=np.int32))
    return ctx.b.emit(Op.IOTA, index_for(ctx, n), attrs=A.IotaAttrs(DType.INT32))


def _times(ctx: ImportContext, v: Value, factor: Dim) -> Value:
    """``v * factor`` for an int32 tensor and a dim (a constant, or the bound size as data)."""
    if isinstance(factor, int):
        if factor == 1:
            return v
        f = ctx.b.const(np.full((1,) * v.type.rank, factor, np.int32))
    else:
        f = reshape(ctx, ctx.b.dims_to_tensor([index_for(ctx, factor)], DType.INT32), [1] * v.type.rank)
    return ctx.b.emit(Op.MUL, v, f, attrs=A.MulAttrs(0))
