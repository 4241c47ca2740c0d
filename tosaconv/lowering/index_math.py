"""Index arithmetic shared by the indexing converters (ONNX GatherElements, GatherND,
Scatter*, TopK, CumSum, Trilu, OneHot, EyeLike, ReverseSequence, NonZero; their TFLite twins).

TOSA has no iota, sort or scan, so these converters build index tensors out of
ranges (a CONST when the length is known at import, else an IOTA of the
length's Index value), compare them with EQUAL/GREATER, and feed the result to
SELECT, the reductions or GATHER/SCATTER. Every helper keeps explicit ranks
(size-1 axes where a tensor broadcasts), so no broadcast has to be guessed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op
from .dims import index_for, reshape
from .errors import ConvertError

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..ir.ops import OpDef
    from ..symbolic.expr import Dim
    from .context import LoweringContext

I32 = DType.INT32


def along(shape_rank: int, axis: int, d: Dim) -> list:
    """A shape of ``shape_rank`` dims that is ``d`` on ``axis`` and 1 elsewhere."""
    dims = [1] * shape_rank
    dims[axis] = d
    return dims


def arange(ctx: LoweringContext, n: Dim, rank: int = 1, axis: int = 0) -> Value:
    """INT32 ``[0, n)`` laid along ``axis`` of a rank-``rank`` tensor (other dims 1)."""
    if isinstance(n, int):
        return ctx.b.const(np.arange(n, dtype=np.int32).reshape(along(rank, axis, n)))
    iota = ctx.b.emit(Op.IOTA, index_for(ctx, n), attrs=A.IotaAttrs(I32))
    return reshape(ctx, iota, along(rank, axis, n)) if rank != 1 else iota


def dim_tensor(ctx: LoweringContext, d: Dim, rank: int) -> Value:
    """An INT32 tensor with every dim 1 holding the dim value ``d`` (a constant when static)."""
    if isinstance(d, int):
        return ctx.b.const(np.full((1,) * rank, d, dtype=np.int32))
    t = ctx.b.dims_to_tensor([index_for(ctx, d)], I32)
    return reshape(ctx, t, [1] * rank)


def scalar(ctx: LoweringContext, value: float, dtype: DType, rank: int) -> Value:
    """A constant of ``dtype`` with every dim 1."""
    return ctx.b.const(np.full((1,) * rank, value, dtype=dtype.numpy))


def as_int32(ctx: LoweringContext, idx: Value) -> Value:
    """Index tensors as INT32 (ONNX int64 already is; int16/int8 indices are widened)."""
    if idx.type.dtype is I32:
        return idx
    if not idx.type.dtype.is_int:
        raise ConvertError(f"indices of type {idx.type.dtype.value} are not supported; ONNX indices are integers")
    return ctx.b.emit(Op.CAST, idx, attrs=A.CastAttrs(I32))


def wrap_negative(ctx: LoweringContext, idx: Value, dim: Dim) -> Value:
    """ONNX's negative indices count from the end: ``idx + dim`` where ``idx < 0`` (in idx's own type)."""
    rank, dtype = idx.type.rank, idx.type.dtype
    size = dim_tensor(ctx, dim, rank)
    if dtype is not I32:
        size = ctx.b.emit(Op.CAST, size, attrs=A.CastAttrs(dtype))
    negative = ctx.b.emit(Op.GREATER, scalar(ctx, 0, dtype, rank), idx)
    return ctx.b.emit(Op.SELECT, negative, ctx.b.emit(Op.ADD, idx, size), idx)


def transpose(ctx: LoweringContext, x: Value, perm: Sequence[int]) -> Value:
    perm = tuple(perm)
    if perm == tuple(range(len(perm))):
        return x
    return ctx.b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(perm))


def axis_last(rank: int, axis: int) -> tuple:
    """The permutation that moves ``axis`` to the end."""
    return tuple(i for i in range(rank) if i != axis) + (axis,)


def inverse(perm: Sequence[int]) -> tuple:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)


def fill(ctx: LoweringContext, value: float, dtype: DType, dims: Sequence[Dim]) -> Value:
    """A tensor of ``dims`` (ints or dim expressions) filled with ``value``."""
    if all(isinstance(d, int) for d in dims):
        return ctx.b.const(np.full(tuple(dims), value, dtype=dtype.numpy))
    base = scalar(ctx, value, dtype, len(dims))
    return ctx.b.emit(Op.DYN_TILE, base, *[index_for(ctx, d) for d in dims])


def select_reduce(ctx: LoweringContext, mask: Value, values: Value, identity: float, op: OpDef, axis: int) -> Value:
    """``op`` over ``axis`` of ``values`` where ``mask`` holds, ``identity`` elsewhere (one TOSA reduction)."""
    filler = scalar(ctx, identity, values.type.dtype, max(mask.type.rank, values.type.rank))
    chosen = ctx.b.emit(Op.SELECT, mask, values, filler)
    attrs = A.AxisNanAttrs(axis) if op in (Op.REDUCE_MAX, Op.REDUCE_MIN) else A.AxisAttrs(axis)
    return ctx.b.emit(op, chosen, attrs=attrs)


def extremes(dtype: DType) -> tuple:
    """The lowest and highest value of ``dtype`` (infinities for floats)."""
    if dtype.is_float:
        return -np.inf, np.inf
    if dtype is DType.BOOL:
        return False, True
    info = np.iinfo(dtype.numpy)
    return int(info.min), int(info.max)


def gather_safe(ctx: LoweringContext, x: Value) -> tuple[Value, Callable[[Value], Value]]:
    """GATHER/SCATTER take no bool tensors: carry bools as INT8. Returns (value, undo)."""
    if x.type.dtype is not DType.BOOL:
        return x, lambda v: v
    as_i8 = ctx.b.emit(Op.CAST, x, attrs=A.CastAttrs(DType.INT8))
    return as_i8, lambda v: ctx.b.emit(Op.CAST, v, attrs=A.CastAttrs(DType.BOOL))


def cumsum(ctx: LoweringContext, x: Value, axis: int, exclusive: bool, reverse: bool) -> Value:
    """The running sum of ``x`` along ``axis``: a triangular mask between output position ``i`` and source
    position ``j`` on two adjacent axes (``j <= i``, ``j < i`` when ``exclusive``, mirrored when
    ``reverse``), then one REDUCE_SUM over ``j``; ``n²`` elements per row, exact for integers, valid with
    symbolic dims."""
    rank = x.type.rank
    shape = list(x.type.shape)
    n = shape[axis]
    out_pos, src_pos = arange(ctx, n, rank + 1, axis), arange(ctx, n, rank + 1, axis + 1)
    first, second = (src_pos, out_pos) if reverse else (out_pos, src_pos)
    taken = ctx.b.emit(Op.GREATER if exclusive else Op.GREATER_EQUAL, first, second)
    source = reshape(ctx, x, shape[:axis] + [1] + shape[axis:])
    sums = select_reduce(ctx, taken, source, 0, Op.REDUCE_SUM, axis + 1)
    return reshape(ctx, sums, shape)
