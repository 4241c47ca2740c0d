"""Converters for ONNX ScatterElements, ScatterND and the deprecated Scatter.

Without a reduction, ONNX forbids duplicate indices, which is exactly TOSA
SCATTER's rule (each output row written at most once), so the data becomes a
``[N, K, C]`` table (ScatterElements: ``[1, size, 1]`` with flat element
offsets; ScatterND: ``[1, indexed rows, rest]``) and one SCATTER writes it.

With a reduction (add, mul, max, min) indices may repeat, which SCATTER does
not allow. Those use a **comparison matrix**: EQUAL of every index against a
range of the target positions gives a one-hot mask ``[positions, updates]``;
SELECT puts each update where the mask holds and the reduction's identity
(0, 1, lowest, highest) elsewhere; one REDUCE_SUM / REDUCE_PRODUCT /
REDUCE_MAX / REDUCE_MIN over the updates axis combines duplicates; ADD, MUL,
MAXIMUM or MINIMUM merges the result into the data. ScatterElements builds the
mask only along its axis (moved last), so it costs ``updates x dim`` elements.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape
from ....lowering.gather import nd_layout, nd_rows
from ....lowering.index_math import (arange, as_int32, axis_last, extremes, gather_safe, inverse, select_reduce, transpose,
                         wrap_negative)
from ....symbolic.constraints import Kind
from ....symbolic.expr import product, sub
from ..reader import ConvertError
from ..registry import converter
from .indexing import element_offsets, elements_like

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader

# reduction -> (TOSA reduction, merge with the data, identity selector)
_REDUCTIONS = {
    "add": (Op.REDUCE_SUM, Op.ADD, lambda dt: 0),
    "mul": (Op.REDUCE_PRODUCT, Op.MUL, lambda dt: 1),
    "max": (Op.REDUCE_MAX, Op.MAXIMUM, lambda dt: extremes(dt)[0]),
    "min": (Op.REDUCE_MIN, Op.MINIMUM, lambda dt: extremes(dt)[1]),
}


def _reduction(node: NodeReader, dtype: DType) -> str:
    reduction = node.attr("reduction", "none") if node.version >= 16 else "none"
    if reduction != "none" and reduction not in _REDUCTIONS:
        raise ConvertError(f"{node.op_type} reduction '{reduction}' is not one of none, add, mul, max, min")
    if reduction != "none" and dtype is DType.BOOL:
        raise ConvertError(f"{node.op_type} reduction '{reduction}' on bool data has no TOSA equivalent")
    if reduction == "mul" and not dtype.is_float:
        raise ConvertError(f"{node.op_type} reduction 'mul' on {dtype.value} data is not supported: "
                           "TOSA REDUCE_PRODUCT takes only floating-point data")
    return reduction


def _merge(ctx: ImportContext, reduction: str, data: Value, combined: Value) -> Value:
    op = _REDUCTIONS[reduction][1]
    attrs = A.MulAttrs(0) if op is Op.MUL else None
    return ctx.b.emit(op, data, combined, attrs=attrs)


def _scatter_rows(ctx: ImportContext, data: Value, rows: Value, updates: Value, table_shape: Sequence[Dim]) -> Value:
    """One TOSA SCATTER of ``updates`` into ``data`` viewed as ``table_shape`` [N, K, C]."""
    values, undo = gather_safe(ctx, data)
    upd, _ = gather_safe(ctx, updates)
    n, _, c = table_shape
    w = product(rows.type.shape)
    out = ctx.b.emit(Op.SCATTER, reshape(ctx, values, table_shape), reshape(ctx, rows, [n, w]),
                     reshape(ctx, upd, [n, w, c]))
    return reshape(ctx, undo(out), list(data.type.shape))


def _operands(ctx: ImportContext, node: NodeReader) -> tuple[Value, Value, Value]:
    data = ctx.tensor(node.inputs[0])
    idx = as_int32(ctx, ctx.tensor(node.inputs[1]))
    updates = ctx.tensor(node.inputs[2])
    return data, idx, updates


def _same_shape(ctx: ImportContext, a: Value, b: Value, what: str) -> None:
    if a.type.rank != b.type.rank:
        raise ConvertError(f"{what}: ranks {a.type.rank} and {b.type.rank} differ")
    for j, (x, y) in enumerate(zip(a.type.shape, b.type.shape)):
        ctx.require(Kind.EQ, x, y, f"{what} on axis {j}")


@converter("ScatterElements", since=11)
def convert_scatter_elements(ctx: ImportContext, node: NodeReader) -> Converted:
    data, idx, updates = _operands(ctx, node)
    axis = norm_axis(node.attr("axis"), data.type.rank)
    elements_like(ctx, data, idx, axis, node.op_type)
    _same_shape(ctx, idx, updates, f"{node.op_type} updates have the shape of the indices")
    reduction = _reduction(node, data.type.dtype)
    if reduction == "none":
        offsets = element_offsets(ctx, data.type.shape, idx, axis)
        return _scatter_rows(ctx, data, offsets, updates, [1, product(data.type.shape), 1])
    return _reduce_elements(ctx, data, idx, updates, axis, reduction)


converter("Scatter", since=9)(convert_scatter_elements)


def _reduce_elements(ctx: ImportContext, data: Value, idx: Value, updates: Value, axis: int, reduction: str) -> Value:
    """ScatterElements with a reduction: a one-hot mask along ``axis`` (moved last)."""
    rank = data.type.rank
    perm = axis_last(rank, axis)
    d = transpose(ctx, data, perm)
    i = transpose(ctx, wrap_negative(ctx, idx, data.type.shape[axis]), perm)
    u = transpose(ctx, updates, perm)
    *outer, n = d.type.shape
    *u_outer, m = i.type.shape
    mask = ctx.b.emit(Op.EQUAL, reshape(ctx, i, u_outer + [1, m]), arange(ctx, n, rank + 1, rank - 1))
    reducer, _, identity = _REDUCTIONS[reduction]
    fill = identity(data.type.dtype)
    combined = select_reduce(ctx, mask, reshape(ctx, u, u_outer + [1, m]), fill, reducer, rank)
    combined = _pad_to(ctx, reshape(ctx, combined, u_outer + [n]), outer + [n], fill)
    return transpose(ctx, _merge(ctx, reduction, d, combined), inverse(perm))


def _pad_to(ctx: ImportContext, x: Value, shape: Sequence[Dim], value: float) -> Value:
    """PAD ``x`` at the end of each axis up to ``shape`` with ``value`` (updates may cover a corner)."""
    padding = []
    for j, (have, want) in enumerate(zip(x.type.shape, shape)):
        extra = sub(want, have)
        if not isinstance(extra, int):
            ctx.require(Kind.EQ, want, have, f"updates of a symbolic size must cover the data on axis {j}")
            extra = 0
        padding += [0, extra]
    if not any(padding):
        return x
    return ctx.b.emit(Op.PAD, x, attrs=A.PadAttrs(tuple(padding), value))


@converter("ScatterND", since=11)
def convert_scatter_nd(ctx: ImportContext, node: NodeReader) -> Converted:
    data, idx, updates = _operands(ctx, node)
    k, _, indexed, rest = nd_layout(ctx, data, idx, 0, "ScatterND")
    expected = list(idx.type.shape[:-1]) + rest
    if updates.type.rank != len(expected):
        raise ConvertError(f"ScatterND updates have rank {updates.type.rank}, expected {len(expected)} "
                           "(indices.shape[:-1] + data.shape[k:])")
    for j, (a, b) in enumerate(zip(updates.type.shape, expected)):
        ctx.require(Kind.EQ, a, b, f"ScatterND updates dim {j} is indices.shape[:-1] + data.shape[k:]")
    rows = nd_rows(ctx, idx, indexed)
    table = [1, product(indexed), product(rest)]
    reduction = _reduction(node, data.type.dtype)
    if reduction == "none":
        return _scatter_rows(ctx, data, rows, updates, table)
    return _reduce_nd(ctx, data, rows, updates, table, reduction)


def _reduce_nd(ctx: ImportContext, data: Value, rows: Value, updates: Value, table: Sequence[Dim], reduction: str) -> Value:
    """ScatterND with a reduction: mask ``[rows, updates, 1]`` against updates ``[1, updates, rest]``."""
    _, n, c = table
    w = product(rows.type.shape)
    mask = ctx.b.emit(Op.EQUAL, reshape(ctx, rows, [1, w, 1]), arange(ctx, n, 3, 0))
    reducer, _, identity = _REDUCTIONS[reduction]
    combined = select_reduce(ctx, mask, reshape(ctx, updates, [1, w, c]), identity(data.type.dtype), reducer, 1)
    merged = _merge(ctx, reduction, reshape(ctx, data, [n, 1, c]), combined)
    return reshape(ctx, merged, list(data.type.shape))
