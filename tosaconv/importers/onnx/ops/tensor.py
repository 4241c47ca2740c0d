"""Converters for ONNX data-movement ops: Gather, Unsqueeze, Squeeze, Concat,
Slice, Split and Transpose.

Each works on shape tensors (lists of Index values) when its inputs are
shape-like, which is how exporters compute reshape targets, and on data
tensors otherwise. Data Slice with symbolic bounds becomes DYN_SLICE with
Index operands, and a step other than 1 is built per axis by
``lowering.strided`` (static or symbolic dims alike); Squeeze/Unsqueeze use the seed's COLLAPSE_DIMS/EXPAND_DIMS.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape, slice_, split_along
from ....lowering.gather import gather
from ....lowering.strided import slice_extent, strided_axis
from ....symbolic.constraints import Kind
from ....symbolic.expr import Expr, floordiv, same
from ..context import ShapeTensor
from ..reader import ConvertError
from ....lowering.limits import must_be_known, size_from_data
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader


def _axes(ctx: ImportContext, node: NodeReader, input_index: int, since: int) -> Optional[tuple[int, ...]]:
    """Axes from the attribute (older opsets) or the input (opset >= since)."""
    if node.version >= since:
        name = node.input(input_index)
        if name is None:
            return None
        c = ctx.const(name)
        if c is None:
            raise AXES_FROM_DATA.refuse(f"{node.op_type} axes input '{name}'")
        return tuple(int(a) for a in c.reshape(-1))
    axes = node.attr("axes", None)
    return None if axes is None else tuple(axes)


# -- Gather ---------------------------------------------------------------------

AXES_FROM_DATA = must_be_known("axes-from-data", "axes", "the output shape depends on the axes")
publish("Unsqueeze", AXES_FROM_DATA)
publish("Squeeze", AXES_FROM_DATA)
SLICE_AXES = publish("Slice", size_from_data("starts or ends"),
                     must_be_known("axes-from-data", "axes or steps", "the output shape depends on them"))[1]
SPLIT_FROM_DATA = publish("Split", must_be_known("split-from-data", "split", "the output sizes are its values"))


@converter("Gather", since=1)
def convert_gather(ctx: ImportContext, node: NodeReader) -> Converted:
    return gather(ctx, node.inputs[0], node.inputs[1], node.attr("axis"))


# -- Unsqueeze / Squeeze -------------------------------------------------------------

@converter("Unsqueeze", since=1)
def convert_unsqueeze(ctx: ImportContext, node: NodeReader) -> Converted:
    axes = _axes(ctx, node, 1, 13)
    if axes is None:   # required: the 'axes' attribute before opset 13, the 'axes' input from 13 on
        raise ConvertError(f"Unsqueeze '{node.name}' has no axes; it needs the 'axes' "
                           f"{'input' if node.version >= 13 else 'attribute'}")
    st = ctx.shape_tensor(node.inputs[0])
    if st is not None and st.scalar and axes in ((0,), (-1,)):
        return ShapeTensor(st.dims)
    x = ctx.tensor(node.inputs[0])
    out_rank = x.type.rank + len(axes)
    indices = tuple(sorted(norm_axis(a, out_rank) for a in axes))
    return ctx.b.emit(Op.EXPAND_DIMS, x, attrs=A.IndicesAttrs(indices))


@converter("Squeeze", since=1)
def convert_squeeze(ctx: ImportContext, node: NodeReader) -> Converted:
    axes = _axes(ctx, node, 1, 13)
    st = ctx.shape_tensor(node.inputs[0])
    if st is not None and not st.scalar and len(st.dims) == 1:
        return ShapeTensor(st.dims, scalar=True)
    x = ctx.tensor(node.inputs[0])
    shape = x.type.shape
    if axes is None:
        axes = [i for i, d in enumerate(shape) if same(d, 1)]
        for d in shape:
            if isinstance(d, Expr):
                ctx.require(Kind.GE, d, 2, "Squeeze without axes keeps this dim, so it must not be 1")
    axes = sorted(norm_axis(a, x.type.rank) for a in axes)
    if all(same(shape[a], 1) for a in axes):
        return ctx.b.emit(Op.COLLAPSE_DIMS, x, attrs=A.IndicesAttrs(tuple(axes)))
    for a in axes:
        ctx.require(Kind.EQ, shape[a], 1, "Squeeze removes only dims of size 1")
    return reshape(ctx, x, [d for i, d in enumerate(shape) if i not in axes])


# -- Concat ------------------------------------------------------------------------

@converter("Concat", since=1)
def convert_concat(ctx: ImportContext, node: NodeReader) -> Converted:
    names = [n for n in node.inputs if n]
    shapes = [ctx.shape_tensor(n) for n in names]
    if all(s is not None and not s.scalar for s in shapes):
        return ShapeTensor([d for s in shapes for d in s.dims])
    xs = [ctx.tensor(n) for n in names]
    axis = norm_axis(node.attr("axis"), xs[0].type.rank)
    for x in xs[1:]:
        if x.type.rank != xs[0].type.rank:
            raise ConvertError(f"Concat operands must have one rank: {xs[0].type} and {x.type}")
        for i, (a, b) in enumerate(zip(xs[0].type.shape, x.type.shape)):
            if i != axis:
                ctx.require(Kind.EQ, a, b, f"Concat operands agree on dim {i}")
    xs = [x for x in xs if not same(x.type.shape[axis], 0)]
    return xs[0] if len(xs) == 1 else ctx.b.emit(Op.CONCAT, *xs, attrs=A.AxisAttrs(axis))


# -- Slice ----------------------------------------------------------------------------

@converter("Slice", since=10)
def convertslice_(ctx: ImportContext, node: NodeReader) -> Converted:
    st = ctx.shape_tensor(node.inputs[0])
    starts, ends = (ctx.const(node.input(i)) for i in (1, 2))
    axes, steps = (ctx.const(node.input(i)) for i in (3, 4))
    if st is not None and not st.scalar and starts is not None and ends is not None:
        return _slice_shape_tensor(st, starts, ends, axes, steps)
    x = ctx.tensor(node.inputs[0])
    rank = x.type.rank
    b_starts = ctx.dims(node.inputs[1]).dims
    b_ends = ctx.dims(node.inputs[2]).dims
    axes = list(range(len(b_starts))) if node.input(3) is None else _const_list(ctx, node.input(3), "axes")
    steps = [1] * len(axes) if node.input(4) is None else _const_list(ctx, node.input(4), "steps")
    starts0, sizes, strided = [0] * rank, list(x.type.shape), []
    for s, e, a, step in zip(b_starts, b_ends, axes, steps):
        a = norm_axis(a, rank)
        if step != 1:
            strided.append((a, s.type.value, e.type.value, step))
            continue
        starts0[a], sizes[a] = slice_extent(ctx, x.type.shape[a], s.type.value, e.type.value, 1, a)
    y = slice_(ctx, x, starts0, sizes)
    for a, s, e, step in strided:   # REVERSE / SLICE / PAD / RESHAPE per axis (lowering.strided)
        y = strided_axis(ctx, y, a, s, e, step)
    return y


def _const_list(ctx: ImportContext, name: str, what: str) -> list[int]:
    c = ctx.const(name)
    if c is None:
        raise SLICE_AXES.refuse(f"Slice {what} input '{name}'")
    return [int(v) for v in c.reshape(-1)]


def _slice_shape_tensor(st: ShapeTensor, starts: np.ndarray, ends: np.ndarray, axes: Optional[np.ndarray], steps: Optional[np.ndarray]) -> ShapeTensor:
    if axes is not None and [int(a) for a in axes.reshape(-1)] not in ([0], [-1]):
        raise ConvertError("Slice of a shape tensor must slice axis 0")
    step = 1 if steps is None else int(steps.reshape(-1)[0])
    s, e = int(starts.reshape(-1)[0]), int(ends.reshape(-1)[0])
    n = len(st.dims)
    s = max(min(s, n), -n - 1)
    e = max(min(e, n), -n - 1)
    return ShapeTensor(st.dims[slice(s, e, step)])


# -- Split / Transpose --------------------------------------------------------------

@converter("Split", since=2)
def convert_split(ctx: ImportContext, node: NodeReader) -> Converted:
    st = ctx.shape_tensor(node.inputs[0])
    if st is not None and not st.scalar:
        return _split_shape_tensor(ctx, node, st)
    x = ctx.tensor(node.inputs[0])
    axis = norm_axis(node.attr("axis"), x.type.rank)
    dim = x.type.shape[axis]
    return split_along(ctx, x, axis, _split_sizes(ctx, node, dim))


def _split_shape_tensor(ctx: ImportContext, node: NodeReader, st: ShapeTensor) -> list:
    """Split of a shape vector: shape vectors, which may be empty (tf.signal.frame splits a Shape into
    outer dims, the framed axis and inner dims, and a 1-D signal has neither outer nor inner dims)."""
    sizes, start, parts = _split_sizes(ctx, node, len(st.dims)), 0, []
    for size in sizes:
        parts.append(ShapeTensor(st.dims[start:start + size]))
        start += size
    return parts


def _split_sizes(ctx: ImportContext, node: NodeReader, dim: Dim) -> list[Dim]:
    split = ctx.const(node.input(1)) if node.version >= 13 else node.attr("split", None)
    if split is None and node.version >= 13 and node.input(1):
        raise SPLIT_FROM_DATA.refuse(f"Split input '{node.input(1)}'")
    n = len(node.outputs)
    if split is not None:
        sizes = [int(s) for s in np.asarray(split).reshape(-1)]
        ctx.require(Kind.EQ, dim, sum(sizes), "Split sizes add up to the split dim")
        return sizes
    if node.version >= 18 and node.has("num_outputs"):
        n = node.attr("num_outputs")
    if isinstance(dim, int):
        chunk = -(-dim // n)
        return [min(chunk, dim - i * chunk) for i in range(n)]
    ctx.require(Kind.DIVISIBLE, dim, n, "Split into equal parts needs a divisible dim")
    return [floordiv(dim, n)] * n


@converter("Transpose", since=1)
def convert_transpose(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    perm = node.attr("perm", None)
    perm = tuple(reversed(range(x.type.rank))) if perm is None else tuple(perm)
    if perm == tuple(range(x.type.rank)):
        return x
    return ctx.b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(perm))
