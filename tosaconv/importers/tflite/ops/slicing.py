"""Converters for TFLite's slicing ops: STRIDED_SLICE (every mask), SLICE,
SPLIT, SPLIT_V, PAD, PADV2 and the reductions MEAN, SUM, REDUCE_MAX,
REDUCE_MIN and REDUCE_PROD.

STRIDED_SLICE is resolved into a *dense spec* the way TensorFlow's
``BuildDenseSpec`` does (ellipsis expands to the dims no other entry names,
new-axis entries insert a 1, shrink-axis entries take one element and drop
the dim). On a shape tensor it slices the Index values, so
``SHAPE -> STRIDED_SLICE`` keeps symbolic dims. On a symbolic axis, bounds
that clamp against the size and strides other than 1 give a dim expression
for the extent (``lowering.strided``, shared with ONNX Slice); only a
negative shrink index there is refused. Bounds of STRIDED_SLICE and SLICE
computed from shapes (SHAPE -> ... -> PACK) are dim expressions, so the
slice stays symbolic and decays once bound. SPLIT_V of a shape vector gives
shape-vector pieces (empty ones too), and its reductions (REDUCE_PROD: an
element count) are index arithmetic. MEAN over a symbolic axis divides by
the bound size (the shared ``mean_over``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import index_op, norm_axis, reshape, slice_, split_along
from ....symbolic.constraints import Kind
from ....symbolic.expr import add, sub
from ..context import ShapeTensor
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....ir.ops import OpDef
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import TfliteContext
    from ..node import OpReader


def _ints(ctx: TfliteContext, key: str, what: str) -> list:
    c = ctx.const(key)
    if c is None:
        raise ConvertError(f"{what} must be a constant")
    return [int(v) for v in np.asarray(c).reshape(-1)]


def _bit(mask: int, i: int) -> bool:
    return bool(mask >> i & 1)


def _dense_spec(node: OpReader, rank: int, begin: Sequence[Dim], end: Sequence[Dim], strides: Sequence[Dim]) -> tuple[list, list]:
    """(per-input-dim (begin, end, stride, begin_masked, end_masked, shrink), output layout)."""
    ell, new, shrink = node.opt("EllipsisMask"), node.opt("NewAxisMask"), node.opt("ShrinkAxisMask")
    bm, em = node.opt("BeginMask"), node.opt("EndMask")
    n = len(begin)
    named = sum(1 for i in range(n) if not _bit(new, i) and not _bit(ell, i))
    dims, layout = [], []       # layout: ("dim", index) | ("new",)
    has_ellipsis = any(_bit(ell, i) for i in range(n))
    for i in range(n):
        if _bit(ell, i):
            for _ in range(rank - named):
                layout.append(("dim", len(dims)))
                dims.append((0, 0, 1, True, True, False))
        elif _bit(new, i):
            layout.append(("new",))
        else:
            if not _bit(shrink, i):
                layout.append(("dim", len(dims)))
            dims.append((begin[i], end[i], strides[i], _bit(bm, i), _bit(em, i), _bit(shrink, i)))
    if not has_ellipsis:
        while len(dims) < rank:
            layout.append(("dim", len(dims)))
            dims.append((0, 0, 1, True, True, False))
    if len(dims) != rank:
        raise ConvertError(f"STRIDED_SLICE names {len(dims)} dims of a rank-{rank} input")
    return dims, layout


def _static_range(size: int, spec: tuple) -> range:
    b, e, s, bmask, emask, shrink = spec
    if s == 0:
        raise ConvertError("STRIDED_SLICE stride 0")
    if shrink:
        b = b + size if b < 0 else b
        if not 0 <= b < size:
            raise ConvertError(f"STRIDED_SLICE picks index {spec[0]} of a dim of size {size}")
        return range(b, b + 1)
    lo, hi = (0, size) if s > 0 else (-1, size - 1)
    def fix(v: int, masked: bool, default: int) -> int:
        if masked:
            return default
        v = v + size if v < 0 else v
        return min(max(v, lo), hi)
    start = fix(b, bmask, 0 if s > 0 else size - 1)
    stop = fix(e, emask, size if s > 0 else -1)
    return range(start, stop, s)


@converter("STRIDED_SLICE", options="StridedSliceOptions", form="any")
def convert_strided_slice(ctx: TfliteContext, node: OpReader) -> Converted:
    begin, end = _bounds(ctx, node.inputs[1], "STRIDED_SLICE begin"), _bounds(ctx, node.inputs[2], "STRIDED_SLICE end")
    strides = _ints(ctx, node.inputs[3], "STRIDED_SLICE strides") if node.input(3) else [1] * len(begin)
    if node.opt("Offset"):
        end = [add(b, e) for b, e in zip(begin, end)]
    st = ctx.values.get(node.inputs[0])
    if isinstance(st, ShapeTensor) and not st.scalar:
        if not all(isinstance(v, int) for v in begin + end):
            raise ConvertError("STRIDED_SLICE of a shape vector needs constant begin and end")
        dims, layout = _dense_spec(node, 1, begin, end, strides)
        picked = [st.dims[i] for i in _static_range(len(st.dims), dims[0])]
        if dims[0][5]:
            return ShapeTensor(picked, scalar=True)
        return ShapeTensor(picked)
    x = ctx.tensor(node.inputs[0])
    dims, layout = _dense_spec(node, x.type.rank, begin, end, strides)
    y = _slice_dims(ctx, x, dims)
    shape = [1 if kind[0] == "new" else y.type.shape[kind[1]] for kind in layout]
    return reshape(ctx, y, shape)


def _bounds(ctx: TfliteContext, key: str, what: str) -> list:
    """Slice bounds: constants, or dim expressions when computed from shapes (tf.signal.frame's end)."""
    st = ctx.values.get(key)
    if isinstance(st, ShapeTensor) and not st.scalar:
        return st.values()
    c = ctx.const(key)
    if c is None:
        raise ConvertError(f"{what} must be a constant or computed from shapes")
    return [int(v) for v in np.asarray(c).reshape(-1)]


def _slice_dims(ctx: TfliteContext, x: Value, dims: Sequence[tuple]) -> Value:
    starts, sizes, steps, deferred = [], [], [], []
    for axis, spec in enumerate(dims):
        size = x.type.shape[axis]
        if isinstance(size, int) and isinstance(spec[0], int) and isinstance(spec[1], int):
            r = _static_range(size, spec)
            if len(r) == 0:
                raise ConvertError(f"STRIDED_SLICE is empty on axis {axis}; TOSA requires every dim to be >= 1")
            starts.append(r.start if r.step > 0 else r[-1])
            sizes.append(len(r) if r.step == 1 or r.step == -1 else r[-1] - r.start + 1 if r.step > 0
                         else r.start - r[-1] + 1)
            steps.append(r.step)
            continue
        b, e, s, bmask, emask, shrink = spec
        starts.append(0)
        sizes.append(size)
        steps.append(1)
        if s == 1 and (bmask or _nonneg_int(b)) and (emask or shrink):
            starts[-1] = 0 if bmask else b
            sizes[-1] = 1 if shrink else sub(size, starts[-1])
        elif shrink and not isinstance(b, int):
            raise ConvertError(f"STRIDED_SLICE shrinks axis {axis} (size {size}) at index {b}, computed from "
                               "shapes; bind the symbols first")
        elif shrink:
            raise ConvertError(f"STRIDED_SLICE shrinks symbolic axis {axis} (size {size}) at index {b}: a negative "
                               "index counts from the size; bind the symbol first")
        else:   # clamped bounds or a stride other than 1: the extent is a dim expression (lowering.strided)
            deferred.append((axis, _unmasked(b, bmask, -s), _unmasked(e, emask, s), s))
    from ....lowering.strided import strided_axis, take_every   # here and below: by the op that needs it (issue 13)
    y = slice_(ctx, x, starts, sizes)
    for axis, step in enumerate(steps):
        if step == 1:
            continue
        if step < 0:
            y = ctx.b.emit(Op.REVERSE, y, attrs=A.AxisAttrs(axis))
        y = take_every(ctx, y, axis, 0, -(-y.type.shape[axis] // abs(step)), abs(step))
    for axis, b, e, s in deferred:
        y = strided_axis(ctx, y, axis, b, e, s)
    return y


def _nonneg_int(v: Dim) -> bool:
    return isinstance(v, int) and v >= 0


def _unmasked(v: Dim, masked: bool, direction: int) -> Dim:
    """A masked bound as the Python slice bound that means the same: past the end in ``direction``."""
    from ....lowering.strided import BIG
    return (BIG if direction > 0 else -BIG) if masked else v


@converter("SLICE", form="any")
def convert_slice(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    begin, size = _bounds(ctx, node.inputs[1], "SLICE begin"), _bounds(ctx, node.inputs[2], "SLICE size")
    if len(begin) != x.type.rank or len(size) != x.type.rank:
        raise ConvertError(f"SLICE of a rank-{x.type.rank} input needs {x.type.rank} begins and sizes, got "
                           f"{len(begin)} and {len(size)}")
    sizes = [sub(x.type.shape[i], begin[i]) if isinstance(s, int) and s == -1 else s for i, s in enumerate(size)]
    return slice_(ctx, x, begin, sizes)


@converter("SPLIT", options="SplitOptions", form="any")
def convert_split(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[1])
    axis = norm_axis(_ints(ctx, node.inputs[0], "SPLIT axis")[0], x.type.rank)
    n, dim = node.opt("NumSplits"), x.type.shape[axis]
    if not isinstance(dim, int) or dim % n:
        raise ConvertError(f"SPLIT of axis {axis} (size {dim}) into {n} equal parts needs a static, divisible size")
    return split_along(ctx, x, axis, [dim // n] * n)


@converter("SPLIT_V", options="SplitVOptions", form="any")
def convert_split_v(ctx: TfliteContext, node: OpReader) -> Converted:
    pieces = _split_shape_tensor(ctx, node)
    if pieces is not None:
        return pieces
    x = ctx.tensor(node.inputs[0])
    sizes = _ints(ctx, node.inputs[1], "SPLIT_V size_splits")
    axis = norm_axis(_ints(ctx, node.inputs[2], "SPLIT_V axis")[0], x.type.rank)
    if -1 in sizes:
        sizes[sizes.index(-1)] = sub(x.type.shape[axis], sum(s for s in sizes if s != -1))
    else:
        ctx.require(Kind.EQ, x.type.shape[axis], sum(sizes), "SPLIT_V sizes add up to the split dim")
    return split_along(ctx, x, axis, sizes)


def _split_shape_tensor(ctx: TfliteContext, node: OpReader) -> Optional[list[ShapeTensor]]:
    """SPLIT_V of a shape vector (tf.signal.frame splits SHAPE's result into outer, framed and inner
    dims, some of them none): ShapeTensor pieces, empty ones included, for static sizes; else None."""
    st = ctx.values.get(node.inputs[0])
    sizes = ctx.const(node.inputs[1])
    if not isinstance(st, ShapeTensor) or st.scalar or sizes is None:
        return None
    sizes = [int(s) for s in np.asarray(sizes).reshape(-1)]
    if sizes.count(-1) == 1:
        sizes[sizes.index(-1)] = len(st.dims) - sum(s for s in sizes if s != -1)
    if min(sizes, default=0) < 0 or sum(sizes) != len(st.dims):
        raise ConvertError(f"SPLIT_V sizes {sizes} do not split the {len(st.dims)} elements of its input")
    starts = np.cumsum([0] + sizes).tolist()
    return [ShapeTensor(st.dims[a:b]) for a, b in zip(starts, starts[1:])]


@converter("PAD", "PADV2")
def convert_pad(ctx: TfliteContext, node: OpReader) -> Converted:
    value = 0.0
    if node.input(2) is not None:
        value = float(np.asarray(_const(ctx, node.inputs[2], "PADV2 constant_values")).reshape(-1)[0])
    return pad(ctx, node, value)


def pad(ctx: TfliteContext, node: OpReader, value: float) -> Value:
    """PAD/PADV2's input padded with ``value`` (for integer data: the stored value)."""
    from ....lowering.pad import pad_by, paddings_pairs
    x = ctx.tensor(node.inputs[0])
    before, after = paddings_pairs(ctx, node.inputs[1], x.type.rank, f"{node.op_type} paddings")
    return pad_by(ctx, x, before, after, "constant", value)


def _const(ctx: TfliteContext, key: str, what: str) -> np.ndarray:
    c = ctx.const(key)
    if c is None:
        raise ConvertError(f"{what} must be a constant")
    return c


_INDEX_REDUCE = {Op.REDUCE_SUM: Op.INDEX_ADD, Op.REDUCE_MAX: Op.INDEX_MAX, Op.REDUCE_MIN: Op.INDEX_MIN,
                 Op.REDUCE_PRODUCT: Op.INDEX_MUL}


def _reduce_shape(ctx: TfliteContext, node: OpReader, op: Optional[OpDef]) -> Optional[ShapeTensor]:
    """SUM, REDUCE_MAX, REDUCE_MIN or REDUCE_PROD of a shape vector (a tensor's element count, as
    tf.signal.frame and Keras' Flatten compute it) as index arithmetic; None for tensor data."""
    st = ctx.values.get(node.inputs[0])
    if not isinstance(st, ShapeTensor) or st.scalar or op not in _INDEX_REDUCE or not st.dims:
        return None
    if {norm_axis(a, 1) for a in _ints(ctx, node.inputs[1], f"{node.op_type} axes")} != {0}:
        return None
    total = st.dims[0]
    for d in st.dims[1:]:
        total = index_op(ctx, _INDEX_REDUCE[op], total, d)
    return ShapeTensor([total]) if node.opt("KeepDims") else ShapeTensor([total], scalar=True)


def _reduce(op: Optional[OpDef]) -> Callable[[TfliteContext, OpReader], Converted]:
    def convert(ctx: TfliteContext, node: OpReader) -> Converted:
        st = _reduce_shape(ctx, node, op)
        if st is not None:
            return st
        x = ctx.tensor(node.inputs[0])
        axes = sorted({norm_axis(a, x.type.rank) for a in _ints(ctx, node.inputs[1], f"{node.op_type} axes")})
        from ....lowering.reduce import mean_over, reduce_chain
        y = mean_over(ctx, x, axes) if op is None else reduce_chain(ctx, op, x, axes)
        if node.opt("KeepDims") or not axes:
            return y
        return ctx.b.emit(Op.COLLAPSE_DIMS, y, attrs=A.IndicesAttrs(tuple(axes)))
    return convert


for _name, _op in (("MEAN", None), ("SUM", Op.REDUCE_SUM), ("REDUCE_MAX", Op.REDUCE_MAX),
                   ("REDUCE_MIN", Op.REDUCE_MIN), ("REDUCE_PROD", Op.REDUCE_PRODUCT)):
    converter(_name, options="ReducerOptions")(_reduce(_op))
