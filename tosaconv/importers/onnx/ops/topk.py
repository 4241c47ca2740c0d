"""Converter for ONNX TopK (``largest``, ``sorted``, ``axis``; K as input 1).

TOSA has no sort, so TopK is a **comparison-count rank** followed by a one-hot
pick. With the axis moved last, every element's rank is the number of
elements that come before it in ONNX's order: those strictly larger (smaller
for ``largest=0``), plus equal ones at a lower index (ONNX breaks ties by
index). Ranks are a permutation of ``0..n-1``, so for output slot ``p`` the
one-hot mask ``rank == p`` marks exactly one element; REDUCE_SUM of the masked
positions gives its index, and GATHER reads the value. The ``[n, n]``
comparison costs ``n²`` elements per row. Results are always sorted, which
``sorted=0`` allows. K may be a constant, computed from shapes, or read from
data (an EXTRACT_DIM that decays once the bindings make it constant); its
range of output slots is an IOTA of K's Index value in the last two cases.
Indices are INT32 (TOSA has no int64).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape
from ....lowering.index_math import I32, arange, axis_last, inverse, select_reduce, transpose
from ....symbolic.constraints import Kind
from ....symbolic.expr import product
from ..reader import ConvertError
from ....lowering.limits import size_from_data
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader


publish("TopK", size_from_data("K"))


@converter("TopK", since=10)
def convert_topk(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if x.type.dtype is DType.BOOL:
        raise ConvertError("TopK on bool data is not an ONNX TopK")
    rank = x.type.rank
    axis = norm_axis(node.attr("axis"), rank)
    largest = node.attr("largest", 1) if node.version >= 11 else 1
    perm = axis_last(rank, axis)
    xt = transpose(ctx, x, perm)
    *outer, n = xt.type.shape
    k = _k(ctx, node, n)
    slots = ctx.b.emit(Op.EQUAL, reshape(ctx, _ranks(ctx, xt, largest), outer + [1, n]),
                       arange(ctx, k, rank + 1, rank - 1))
    picked = select_reduce(ctx, slots, arange(ctx, n, rank + 1, rank), 0, Op.REDUCE_SUM, rank)
    indices = reshape(ctx, picked, outer + [k])
    rows = product(outer)
    table = reshape(ctx, xt, [rows, n, 1])
    values = reshape(ctx, ctx.b.emit(Op.GATHER, table, reshape(ctx, indices, [rows, k])), outer + [k])
    back = inverse(perm)
    return [transpose(ctx, values, back), transpose(ctx, indices, back)]


def _k(ctx: ImportContext, node: NodeReader, n: Dim) -> Dim:
    """K as a dim (int or symbol), checked to be in ``[1, n]``."""
    st = ctx.dims(node.inputs[1])
    if len(st.dims) != 1:
        raise ConvertError(f"TopK K must hold one value, got {len(st.dims)}")
    k = st.dims[0].type.value
    if isinstance(k, int) and k < 1:
        raise ConvertError(f"TopK with K = {k} has an empty output; TOSA requires every dim to be >= 1")
    ctx.require(Kind.GE, n, k, "TopK K must not exceed the size of the axis")
    return k


def _ranks(ctx: ImportContext, xt: Value, largest: int) -> Value:
    """INT32 ``[..., n]``: how many elements precede each one in TopK order."""
    *outer, n = xt.type.shape
    r = len(outer)
    mine = reshape(ctx, xt, outer + [n, 1])
    other = reshape(ctx, xt, outer + [1, n])
    beats = ctx.b.emit(Op.GREATER, other, mine) if largest else ctx.b.emit(Op.GREATER, mine, other)
    lower = ctx.b.emit(Op.GREATER, arange(ctx, n, r + 2, r), arange(ctx, n, r + 2, r + 1))
    tie = ctx.b.emit(Op.LOGICAL_AND, ctx.b.emit(Op.EQUAL, other, mine), lower)
    before = ctx.b.emit(Op.CAST, ctx.b.emit(Op.LOGICAL_OR, beats, tie), attrs=A.CastAttrs(I32))
    counts = ctx.b.emit(Op.REDUCE_SUM, before, attrs=A.AxisAttrs(r + 1))
    return reshape(ctx, counts, outer + [n])

