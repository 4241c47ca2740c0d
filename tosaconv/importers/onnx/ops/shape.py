"""Converters for ONNX's shape-computing ops: Shape, Size, Reshape, Flatten,
Constant, ConstantOfShape, Expand, Range and Identity.

Shape and Size produce ShapeTensors of Index values (GET_DIM for symbolic
dims), so the usual ``Shape -> Gather -> Concat -> Reshape`` chain resolves
into a RESHAPE whose unknown dims are explicit ``shape_symbols``; ``0`` and
``-1`` entries are resolved here, never left for the backend to infer, and a
``-1`` that implies divisibility records it in the ledger
(:func:`tosaconv.lowering.shapes.reshape_with_hole`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from ....ir.ops import Op
from ....limits import check_tensor
from ....lowering.dims import index_for, reshape
from ....lowering.shapes import arange_of, expand, reshape_with_hole, to_ir
from ....symbolic.expr import product, same
from ..context import ShapeTensor
from ..lazy_weights import constant_array
from ..reader import ConvertError
from ....lowering.limits import EMPTY_RESULT, size_from_data
from ....lowering.shapes import RANGE_DELTA
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


@converter("Shape", since=1)
def convert_shape(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    rank = x.type.rank
    start, end = node.attr("start", 0), node.attr("end", None)
    start = _clamp_axis(start, rank)
    end = rank if end is None else _clamp_axis(end, rank)
    return ShapeTensor([ctx.dim_value(x, i) for i in range(start, end)])


def _clamp_axis(a: int, rank: int) -> int:
    """Shape's start/end: negative counts from the back, then clamps to [0, rank]."""
    return min(max(a + rank if a < 0 else a, 0), rank)


@converter("Size", since=1)
def convert_size(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    return ShapeTensor([index_for(ctx, product(x.type.shape))], scalar=True)


@converter("Identity", since=1)
def convert_identity(ctx: ImportContext, node: NodeReader) -> Converted:
    v = ctx.values.get(node.inputs[0])
    return v if v is not None else ctx.tensor(node.inputs[0])


@converter("Constant", since=1)
def convert_constant(ctx: ImportContext, node: NodeReader) -> Converted:
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if node.has(key):
            lazy = constant_array(node, ctx.raw) if key == "value" else None   # a view of the file's bytes
            arr = lazy if lazy is not None else np.asarray(node.attr(key))
            if key in ("value_int", "value_ints"):
                arr = arr.astype(np.int64)
            elif key in ("value_float", "value_floats"):
                arr = arr.astype(np.float32)
            ctx.set_const(node.outputs[0], arr)
            return None
    raise ConvertError("Constant without a numeric value (sparse and string constants are not supported)")


publish("Reshape", size_from_data("shape"))
publish("Expand", size_from_data("shape"))
publish("ConstantOfShape", size_from_data("input"))
publish("Range", size_from_data("start or limit"), RANGE_DELTA)


@converter("Reshape", since=5)
def convert_reshape(ctx: ImportContext, node: NodeReader) -> Converted:
    st = _reshaped_shape_tensor(ctx, node)
    if st is not None:
        return st
    x = ctx.tensor(node.inputs[0])
    entries = ctx.dims(node.inputs[1]).dims
    allowzero = node.attr("allowzero", 0) if node.version >= 14 else 0
    dims = [ctx.dim_value(x, i) if (same(e.type.value, 0) and not allowzero) else e
            for i, e in enumerate(entries)]
    return reshape_with_hole(ctx, x, dims, "Reshape")


def _reshaped_shape_tensor(ctx: ImportContext, node: NodeReader) -> Optional[ShapeTensor]:
    """A shape tensor reshaped between a scalar and a vector (Paddle2ONNX writes ``Reshape(d, [])``)
    stays a ShapeTensor, so the dims it carries keep their symbolic values; so does a shape vector reshaped
    to itself (torch.onnx writes ``Reshape(Concat(b, s), [-1])``)."""
    st = ctx.shape_tensor(node.inputs[0])
    target = ctx.const(node.inputs[1])
    if st is None or target is None or np.asarray(target).size > 1:
        return None
    target = np.asarray(target).reshape(-1)
    if len(st.dims) != 1:
        same_vector = not st.scalar and target.size == 1 and int(target[0]) in (-1, len(st.dims))
        return ShapeTensor(st.dims) if same_vector else None
    if target.size == 0:
        return ShapeTensor(st.dims, scalar=True)
    return ShapeTensor(st.dims) if int(target[0]) in (1, -1, 0) else None


@converter("Flatten", since=1)
def convert_flatten(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axis = node.attr("axis")
    axis = axis + x.type.rank if axis < 0 else axis
    if not 0 <= axis <= x.type.rank:
        raise ConvertError(f"Flatten axis {node.attr('axis')} is out of range for rank {x.type.rank}")
    shape = x.type.shape
    return reshape(ctx, x, [product(shape[:axis]), product(shape[axis:])])


@converter("ConstantOfShape", since=9)
def convert_constant_of_shape(ctx: ImportContext, node: NodeReader) -> Converted:
    value = node.attr("value", None)
    if value is not None and np.asarray(value).size != 1:
        raise ConvertError(f"ConstantOfShape 'value' must be a one-element tensor, not {np.asarray(value).shape}")
    fill = np.zeros((1,), np.float32) if value is None else np.asarray(value).reshape(-1)[:1]
    st = ctx.dims(node.inputs[0])
    dims = [d.type.value for d in st.dims]
    if all(isinstance(d, int) for d in dims):
        if any(d < 1 for d in dims):   # an empty tensor too: [2^20, 2^20, 0] holds nothing but still hangs printers
            raise EMPTY_RESULT.refuse(f"ConstantOfShape shape {dims} has a dim below 1")
        check_tensor(f"ConstantOfShape result '{node.outputs[0]}'", dims, fill.dtype)
        return ctx.b.const(to_ir(np.full(dims, fill[0], dtype=fill.dtype)))
    base = ctx.b.const(to_ir(np.full((1,) * len(dims), fill[0], dtype=fill.dtype)))
    return ctx.b.emit(Op.DYN_TILE, base, *st.dims)


@converter("Expand", since=8)
def convert_expand(ctx: ImportContext, node: NodeReader) -> Converted:
    return expand(ctx, ctx.tensor(node.inputs[0]), ctx.dims(node.inputs[1]).dims)


@converter("Range", since=11)
def convert_range(ctx: ImportContext, node: NodeReader) -> Converted:
    return arange_of(ctx, *node.inputs[:3])
