"""Converters for ONNX ops that are a mask over index ranges: Trilu, EyeLike,
OneHot and CumSum.

Each compares ranges (a CONST when the length is known at import, an IOTA of
the length's Index value otherwise) with GREATER_EQUAL/EQUAL and SELECTs.
Trilu keeps ``col - row >= k`` (upper) or ``<= k`` (lower); EyeLike is
``col - row == k`` (a plain constant when the shape is static); OneHot
compares the wrapped indices with ``0..depth-1`` on the new axis (float
indices are truncated toward zero first: the spec casts them to int64). CumSum is a
triangular mask between output position ``i`` and source position ``j`` on
two adjacent axes (``j <= i``, ``j < i`` when exclusive, mirrored when
reverse) followed by one REDUCE_SUM over ``j``; it costs ``n²`` elements per
row but is exact for integers and stays valid with symbolic dims.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape
from ....lowering.elementwise import truncate
from ....lowering.index_math import I32, arange, as_int32, cumsum, scalar, wrap_negative
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind, must_be_known
from ..registry import converter, publish
from .elementwise import _CAST_TARGETS

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader


def _diagonal_offsets(ctx: ImportContext, rows: Dim, cols: Dim, rank: int) -> Value:
    """INT32 ``col - row`` over the last two of ``rank`` dims (other dims 1)."""
    return ctx.b.emit(Op.SUB, arange(ctx, cols, rank, rank - 1), arange(ctx, rows, rank, rank - 2))


def _int_operand(ctx: ImportContext, name: str, rank: int) -> Value:
    """A scalar int operand as an INT32 tensor with every dim 1 (a constant when known)."""
    c = ctx.const(name)
    if c is not None:
        return scalar(ctx, int(np.asarray(c).reshape(-1)[0]), I32, rank)
    return reshape(ctx, as_int32(ctx, ctx.tensor(name)), [1] * rank)


ONEHOT_DEPTH = publish("OneHot", must_be_known("depth-from-data", "depth", "it is the size of the output"))
CUMSUM_AXIS = publish("CumSum", Limit("axis-from-data", LimitKind.INPUT, "axis", ("not a constant",),
                                      "the scanned axis decides the lowering", "make the axis an initializer"))


@converter("Trilu", since=14)
def convert_trilu(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    rank = x.type.rank
    if rank < 2:
        raise ConvertError(f"Trilu needs a rank >= 2 input, got rank {rank}")
    k = scalar(ctx, 0, I32, rank) if node.input(1) is None else _int_operand(ctx, node.input(1), rank)
    offsets = _diagonal_offsets(ctx, x.type.shape[-2], x.type.shape[-1], rank)
    keep = (ctx.b.emit(Op.GREATER_EQUAL, offsets, k) if node.attr("upper")
            else ctx.b.emit(Op.GREATER_EQUAL, k, offsets))
    return ctx.b.emit(Op.SELECT, keep, x, scalar(ctx, 0, x.type.dtype, rank))


@converter("EyeLike", since=9)
def convert_eye_like(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    if x.type.rank != 2:
        raise ConvertError(f"EyeLike needs a rank 2 input, got rank {x.type.rank}")
    dtype = _dtype(node.attr("dtype", None), x.type.dtype)
    k = node.attr("k")
    rows, cols = x.type.shape
    if isinstance(rows, int) and isinstance(cols, int):
        return ctx.b.const(np.eye(rows, cols, k, dtype=dtype.numpy))
    on = ctx.b.emit(Op.EQUAL, _diagonal_offsets(ctx, rows, cols, 2), scalar(ctx, k, I32, 2))
    if dtype is DType.BOOL:
        return on
    return ctx.b.emit(Op.SELECT, on, scalar(ctx, 1, dtype, 2), scalar(ctx, 0, dtype, 2))


def _dtype(onnx_type: Optional[int], default: DType) -> DType:
    if onnx_type is None:
        return default
    if onnx_type not in _CAST_TARGETS:
        raise ConvertError(f"EyeLike dtype {onnx_type} has no TOSA equivalent")
    return _CAST_TARGETS[onnx_type]


# ONNX types TOSA has no tensors for, as the importer narrows them.
_NARROW = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.float64): np.dtype(np.float32)}


@converter("OneHot", since=9)
def convert_one_hot(ctx: ImportContext, node: NodeReader) -> Converted:
    idx = ctx.tensor(node.inputs[0])
    if idx.type.dtype.is_float:   # "casted to int64 before use" (the spec; onnxruntime >= 1.32 truncates)
        idx = ctx.b.emit(Op.CAST, truncate(ctx, idx), attrs=A.CastAttrs(I32))
    else:
        idx = as_int32(ctx, idx)
    depth = _depth(ctx, node.inputs[1])
    rank = idx.type.rank + 1
    axis = norm_axis(node.attr("axis"), rank)
    idx = wrap_negative(ctx, idx, depth)
    shape = list(idx.type.shape)
    on_axis = reshape(ctx, idx, shape[:axis] + [1] + shape[axis:])
    hot = ctx.b.emit(Op.EQUAL, on_axis, arange(ctx, depth, rank, axis))
    off, on = _off_on(ctx, node.inputs[2], rank)
    return ctx.b.emit(Op.SELECT, hot, on, off)


def _depth(ctx: ImportContext, name: str) -> Dim:
    c = ctx.const(name)
    if c is not None:
        depth = int(np.asarray(c).reshape(-1)[0])
    else:
        st = ctx.shape_tensor(name)
        if st is None:
            raise ONEHOT_DEPTH.refuse(f"OneHot depth '{name}'")
        depth = st.dims[0].type.value
    if isinstance(depth, int) and depth < 1:
        raise ConvertError(f"OneHot depth {depth} gives an empty output; TOSA requires every dim to be >= 1")
    return depth


def _off_on(ctx: ImportContext, name: str, rank: int) -> tuple[Value, ...]:
    """The [off, on] pair as two tensors with every dim 1."""
    c = ctx.const(name)
    if c is not None:
        c = np.asarray(c).reshape(-1)
        dtype = _NARROW.get(c.dtype, c.dtype)
        return tuple(ctx.b.const(np.full((1,) * rank, v, dtype=dtype)) for v in c[:2])
    values = ctx.tensor(name)
    pair = reshape(ctx, values, [2])
    picks = [ctx.b.emit(Op.SLICE, pair, attrs=A.SliceAttrs((i,), (1,))) for i in (0, 1)]
    return tuple(reshape(ctx, p, [1] * rank) for p in picks)


@converter("CumSum", since=11)
def convert_cumsum(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axis_c = ctx.const(node.inputs[1])
    if axis_c is None:
        raise CUMSUM_AXIS.refuse(f"CumSum axis input '{node.inputs[1]}'")
    axis = norm_axis(int(np.asarray(axis_c).reshape(-1)[0]), x.type.rank)
    return cumsum(ctx, x, axis, bool(node.attr("exclusive")), bool(node.attr("reverse")))

