"""Converters for ONNX GatherElements, GatherND and ReverseSequence, built on
TOSA GATHER (``values[N,K,C]`` read at ``indices[N,W]``).

GatherElements flattens the data to ``[1, size, 1]`` and computes each output
element's flat offset: its own coordinates (ranges) on the other axes, the
wrapped index on the gather axis, times the data's strides. GatherND is
:func:`tosaconv.lowering.gather.gather_nd`. ReverseSequence
moves batch and time to the front and gathers row ``len-1-t`` for ``t < len``.
Negative indices wrap as ONNX defines (``i + dim``); indices out of range are
an error at run time (the interpreter's GATHER checks them).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape
from ....lowering.gather import gather_nd
from ....lowering.index_math import arange, as_int32, dim_tensor, gather_safe, inverse, transpose, wrap_negative
from ....symbolic.constraints import Kind
from ....symbolic.expr import product
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader


def element_offsets(ctx: ImportContext, shape: Sequence[Dim], idx: Value, axis: int) -> Optional[Value]:
    """Flat offsets into a tensor of ``shape`` for GatherElements-style ``idx`` along ``axis``."""
    rank = len(shape)
    total = None
    for j in range(rank):
        coord = wrap_negative(ctx, idx, shape[axis]) if j == axis else arange(ctx, idx.type.shape[j], rank, j)
        stride = product(shape[j + 1:])
        if not (isinstance(stride, int) and stride == 1):
            coord = ctx.b.emit(Op.MUL, coord, dim_tensor(ctx, stride, rank), attrs=A.MulAttrs(0))
        total = coord if total is None else ctx.b.emit(Op.ADD, total, coord)
    return total


def elements_like(ctx: ImportContext, data: Value, idx: Value, axis: int, what: str) -> None:
    """Check GatherElements/ScatterElements operands: equal ranks, index dims within the data's."""
    if idx.type.rank != data.type.rank:
        raise ConvertError(f"{what} indices have rank {idx.type.rank}, the data rank {data.type.rank}")
    for j, (d, i) in enumerate(zip(data.type.shape, idx.type.shape)):
        if j != axis:
            ctx.require(Kind.GE, d, i, f"{what} indices fit inside the data on axis {j}")


@converter("GatherElements", since=11)
def convert_gather_elements(ctx: ImportContext, node: NodeReader) -> Converted:
    data = ctx.tensor(node.inputs[0])
    idx = as_int32(ctx, ctx.tensor(node.inputs[1]))
    axis = norm_axis(node.attr("axis"), data.type.rank)
    elements_like(ctx, data, idx, axis, "GatherElements")
    offsets = element_offsets(ctx, data.type.shape, idx, axis)
    values, undo = gather_safe(ctx, data)
    table = reshape(ctx, values, [1, product(data.type.shape), 1])
    rows = reshape(ctx, offsets, [1, product(idx.type.shape)])
    return reshape(ctx, undo(ctx.b.emit(Op.GATHER, table, rows)), list(idx.type.shape))


@converter("GatherND", since=11)
def convert_gather_nd(ctx: ImportContext, node: NodeReader) -> Converted:
    data, idx = ctx.tensor(node.inputs[0]), ctx.tensor(node.inputs[1])
    return gather_nd(ctx, data, idx, node.attr("batch_dims", 0))


@converter("ReverseSequence", since=10)
def convert_reverse_sequence(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    lens = as_int32(ctx, ctx.tensor(node.inputs[1]))
    rank = x.type.rank
    b_axis, t_axis = norm_axis(node.attr("batch_axis"), rank), norm_axis(node.attr("time_axis"), rank)
    if rank < 2 or b_axis == t_axis:
        raise ConvertError("ReverseSequence needs a rank >= 2 input with different batch and time axes")
    perm = (b_axis, t_axis) + tuple(i for i in range(rank) if i not in (b_axis, t_axis))
    moved = transpose(ctx, x, perm)
    batch, time, *rest = moved.type.shape
    ctx.require(Kind.EQ, lens.type.shape[0], batch, "ReverseSequence has one length per batch entry")
    t = arange(ctx, time, 2, 1)
    length = reshape(ctx, lens, [batch, 1])
    inside = ctx.b.emit(Op.GREATER, length, t)
    flipped = ctx.b.emit(Op.SUB, ctx.b.emit(Op.SUB, length, ctx.b.const(np.ones((1, 1), np.int32))), t)
    rows = ctx.b.emit(Op.SELECT, inside, flipped, t)
    values, undo = gather_safe(ctx, moved)
    g = undo(ctx.b.emit(Op.GATHER, reshape(ctx, values, [batch, time, product(rest)]), rows))
    return transpose(ctx, reshape(ctx, g, [batch, time, *rest]), inverse(perm))
