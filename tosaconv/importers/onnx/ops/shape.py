"""Converters for ONNX's shape-computing ops: Shape, Size, Reshape, Flatten,
Constant, ConstantOfShape, Expand, Range and Identity.

Shape and Size produce ShapeTensors of Index values (GET_DIM for symbolic
dims), so the usual ``Shape -> Gather -> Concat -> Reshape`` chain resolves
into a RESHAPE whose unknown dims are explicit ``shape_symbols``; ``0`` and
``-1`` entries are resolved here, never left for the backend to infer, and a
``-1`` that implies divisibility records it in the ledger.
"""
from __future__ import annotations

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....symbolic.constraints import Kind
from ....symbolic.expr import dmax, floordiv, product, same, sub
from ..context import ShapeTensor
from ..reader import ConvertError
from ..registry import converter
from ....lowering.dims import expand_leading, index_for, reshape


@converter("Shape", since=1)
def convert_shape(ctx, node):
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
def convert_size(ctx, node):
    x = ctx.tensor(node.inputs[0])
    return ShapeTensor([index_for(ctx, product(x.type.shape))], scalar=True)


@converter("Identity", since=1)
def convert_identity(ctx, node):
    v = ctx.values.get(node.inputs[0])
    return v if v is not None else ctx.tensor(node.inputs[0])


@converter("Constant", since=1)
def convert_constant(ctx, node):
    for key in ("value", "value_float", "value_floats", "value_int", "value_ints"):
        if node.has(key):
            arr = np.asarray(node.attr(key))
            if key in ("value_int", "value_ints"):
                arr = arr.astype(np.int64)
            elif key in ("value_float", "value_floats"):
                arr = arr.astype(np.float32)
            ctx.set_const(node.outputs[0], arr)
            return None
    raise ConvertError("Constant without a numeric value (sparse and string constants are not supported)")


@converter("Reshape", since=5)
def convert_reshape(ctx, node):
    st = _reshaped_shape_tensor(ctx, node)
    if st is not None:
        return st
    x = ctx.tensor(node.inputs[0])
    entries = ctx.dims(node.inputs[1]).dims
    allowzero = node.attr("allowzero", 0) if node.version >= 14 else 0
    dims = [ctx.dim_value(x, i) if (same(e.type.value, 0) and not allowzero) else e
            for i, e in enumerate(entries)]
    return reshape_with_hole(ctx, x, dims, "Reshape")


def reshape_with_hole(ctx, x, dims: list, op_name: str):
    """RESHAPE ``x`` to Index values ``dims``, one of which may be -1 (inferred from the element count)."""
    holes = [i for i, e in enumerate(dims) if same(e.type.value, -1)]
    if len(holes) > 1:
        raise ConvertError(f"{op_name} target has more than one -1 entry")
    if holes:
        dims = list(dims)
        dims[holes[0]] = _inferred_dim(ctx, x, [d for i, d in enumerate(dims) if i != holes[0]])
    return reshape(ctx, x, dims)


def _reshaped_shape_tensor(ctx, node):
    """A shape tensor reshaped between a scalar and a vector (Paddle2ONNX writes ``Reshape(d, [])``)
    stays a ShapeTensor, so the dims it carries keep their symbolic values."""
    st = ctx.shape_tensor(node.inputs[0])
    target = ctx.const(node.inputs[1])
    if st is None or target is None or len(st.dims) != 1 or np.asarray(target).size > 1:
        return None
    target = np.asarray(target).reshape(-1)
    if target.size == 0:
        return ShapeTensor(st.dims, scalar=True)
    return ShapeTensor(st.dims) if int(target[0]) in (1, -1, 0) else None


def _inferred_dim(ctx, x, others):
    """The -1 entry: elements of x divided by the product of the other entries."""
    total, rest = product(x.type.shape), product(d.type.value for d in others)
    ctx.require(Kind.DIVISIBLE, total, rest, "Reshape infers a -1 entry by exact division")
    return index_for(ctx, floordiv(total, rest))


@converter("Flatten", since=1)
def convert_flatten(ctx, node):
    x = ctx.tensor(node.inputs[0])
    axis = node.attr("axis")
    axis = axis + x.type.rank if axis < 0 else axis
    if not 0 <= axis <= x.type.rank:
        raise ConvertError(f"Flatten axis {node.attr('axis')} is out of range for rank {x.type.rank}")
    shape = x.type.shape
    return reshape(ctx, x, [product(shape[:axis]), product(shape[axis:])])


@converter("ConstantOfShape", since=9)
def convert_constant_of_shape(ctx, node):
    value = node.attr("value", None)
    fill = np.zeros((1,), np.float32) if value is None else np.asarray(value).reshape(-1)[:1]
    st = ctx.dims(node.inputs[0])
    dims = [d.type.value for d in st.dims]
    if all(isinstance(d, int) for d in dims):
        return ctx.b.const(_to_ir(np.full(dims, fill[0], dtype=fill.dtype)))
    base = ctx.b.const(_to_ir(np.full((1,) * len(dims), fill[0], dtype=fill.dtype)))
    return ctx.b.emit(Op.DYN_TILE, base, *st.dims)


def _to_ir(arr: np.ndarray) -> np.ndarray:
    if arr.dtype == np.int64:
        return arr.astype(np.int32)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    return arr


@converter("Expand", since=8)
def convert_expand(ctx, node):
    x = ctx.tensor(node.inputs[0])
    target = ctx.dims(node.inputs[1]).dims
    rank = max(x.type.rank, len(target))
    x = expand_leading(ctx, x, rank)
    target = [ctx.b.index(1)] * (rank - len(target)) + list(target)
    pairs = list(zip(x.type.shape, target))
    if not all(same(d, 1) or same(t.type.value, 1) or same(d, t.type.value) for d, t in pairs):
        return _expand_by_broadcast(ctx, x, target)
    multiples = [t if same(d, 1) else ctx.b.index(1) for d, t in pairs]
    if all(isinstance(m.type.value, int) for m in multiples):
        reps = tuple(m.type.value for m in multiples)
        return x if all(r == 1 for r in reps) else ctx.b.emit(Op.TILE, x, attrs=A.TileAttrs(reps))
    return ctx.b.emit(Op.DYN_TILE, x, *multiples)


def _expand_by_broadcast(ctx, x, target):
    """Expand where a symbolic dim meets another size: x op zeros(target), with broadcast checks."""
    zero = np.zeros((1,) * len(target), dtype=x.type.dtype.numpy)
    zeros = ctx.b.emit(Op.DYN_TILE, ctx.b.const(zero), *target)
    op = Op.LOGICAL_OR if x.type.dtype is DType.BOOL else Op.ADD
    return ctx.b.emit(op, x, zeros)


@converter("Range", since=11)
def convert_range(ctx, node):
    consts = [ctx.const(n) for n in node.inputs[:3]]
    if all(c is not None for c in consts):
        start, limit, delta = (c.item() for c in consts)
        return ctx.b.const(_to_ir(np.arange(start, limit, delta, dtype=consts[0].dtype)))
    st = [ctx.shape_tensor(n) for n in node.inputs[:3]]
    if any(s is None for s in st) or ctx.const(node.inputs[2]) is None:
        raise ConvertError("Range needs start, limit and delta computed from shapes or constants")
    start, limit = st[0].dims[0], st[1].dims[0]
    delta = int(ctx.const(node.inputs[2]).item())
    span = sub(limit.type.value, start.type.value)
    if delta == 0:
        raise ConvertError("Range with delta 0 never ends")
    n = dmax(floordiv(span + delta - 1, delta) if delta > 0 else floordiv(-span - delta - 1, -delta), 0)
    iota = ctx.b.emit(Op.IOTA, index_for(ctx, n), attrs=A.IotaAttrs(DType.INT32))
    scaled = iota if delta == 1 else ctx.b.emit(Op.MUL, iota, ctx.b.const(np.array([delta], np.int32)),
                                                 attrs=A.MulAttrs(0))
    offset = ctx.b.dims_to_tensor([start], DType.INT32)
    return ctx.b.emit(Op.ADD, scaled, offset)

