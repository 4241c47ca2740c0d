"""Converters for TFLite's shape ops: SHAPE, RESHAPE, PACK, UNPACK, SQUEEZE,
EXPAND_DIMS, CONCATENATION, TRANSPOSE, DEQUANTIZE (float16 weights) and DENSIFY.

SHAPE gives a ShapeTensor of Index values (GET_DIM for symbolic dims), and
PACK of scalar shape elements, CONCATENATION of shape vectors and RESHAPE's
shape operand keep them as Index values, so a ``SHAPE -> STRIDED_SLICE ->
PACK -> RESHAPE`` chain becomes a RESHAPE with explicit ``shape_symbols``
that decays to a static RESHAPE once the symbols are bound. A ``-1`` entry is
resolved here (element count divided by the other entries), never left to
the backend. RESHAPE, SQUEEZE, EXPAND_DIMS and TRANSPOSE of RFFT2D's complex
result move its real and imaginary parts alike (:func:`.common.complex_parts`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape, slice_
from ....lowering.shapes import reshape_with_hole
from ....lowering.weight_casts import keeps_narrow
from ....symbolic.constraints import Kind
from ....symbolic.expr import same
from ..context import ShapeTensor
from ..qhelpers_data import keeps_quant
from ..reader import ConvertError
from ..registry import converter
from .common import activation, complex_parts

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader


@converter("SHAPE", options="ShapeOptions", form="any")
def convert_shape(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    return ShapeTensor([ctx.dim_value(x, i) for i in range(x.type.rank)])


@converter("RESHAPE", options="ReshapeOptions", form="any")
@complex_parts
def convert_reshape(ctx: TfliteContext, node: OpReader) -> Converted:
    st = ctx.shape_tensor(node.inputs[0])
    if isinstance(ctx.values.get(node.inputs[0]), ShapeTensor):
        target = _target(ctx, node)
        if len(target) <= 1:
            return ShapeTensor(st.dims, scalar=len(target) == 0)
    x = ctx.tensor(node.inputs[0])
    return reshape_with_hole(ctx, x, list(_target(ctx, node)), "RESHAPE")


def _target(ctx: TfliteContext, node: OpReader) -> list:
    """The new shape as Index values: input 1 when given (a shape tensor or constant), else the option."""
    key = node.input(1)
    if key is not None:
        return list(ctx.dims(key).dims)
    return [ctx.b.index(v) for v in node.opt("NewShape")]


@converter("PACK", options="PackOptions", form="any")
@keeps_quant(inputs=None)
def convert_pack(ctx: TfliteContext, node: OpReader) -> Converted:
    keys = node.inputs
    shapes = [ctx.shape_tensor(k) for k in keys]
    if node.opt("Axis") in (0, -1) and all(s is not None and s.scalar for s in shapes) and \
            any(isinstance(ctx.values.get(k), ShapeTensor) for k in keys):
        return ShapeTensor([s.dims[0] for s in shapes])
    xs = [ctx.tensor(k) for k in keys]
    axis = norm_axis(node.opt("Axis"), xs[0].type.rank + 1)
    xs = [ctx.b.emit(Op.EXPAND_DIMS, x, attrs=A.IndicesAttrs((axis,))) for x in xs]
    return xs[0] if len(xs) == 1 else ctx.b.emit(Op.CONCAT, *xs, attrs=A.AxisAttrs(axis))


@converter("UNPACK", options="UnpackOptions", form="any")
@keeps_quant
def convert_unpack(ctx: TfliteContext, node: OpReader) -> Converted:
    st = ctx.values.get(node.inputs[0])
    if isinstance(st, ShapeTensor) and not st.scalar:
        return [ShapeTensor([d], scalar=True) for d in st.dims]
    x = ctx.tensor(node.inputs[0])
    axis = norm_axis(node.opt("Axis"), x.type.rank)
    count = x.type.shape[axis]
    if not isinstance(count, int):
        raise ConvertError(f"UNPACK along axis {axis} of symbolic size {count} is not supported")
    outs = []
    for i in range(count):
        starts = [0] * x.type.rank
        starts[axis] = i
        sizes = list(x.type.shape)
        sizes[axis] = 1
        part = slice_(ctx, x, starts, sizes)
        outs.append(ctx.b.emit(Op.COLLAPSE_DIMS, part, attrs=A.IndicesAttrs((axis,))))
    return outs


@converter("SQUEEZE", options="SqueezeOptions", form="any")
@complex_parts
def convert_squeeze(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    axes = node.opt("SqueezeDims")
    if not axes:
        axes = [i for i, d in enumerate(x.type.shape) if same(d, 1)]
    axes = tuple(sorted(norm_axis(a, x.type.rank) for a in axes))
    for a in axes:
        if not same(x.type.shape[a], 1):
            ctx.require(Kind.EQ, x.type.shape[a], 1, "SQUEEZE removes only dims of size 1")
            return reshape(ctx, x, [d for i, d in enumerate(x.type.shape) if i not in axes])
    return ctx.b.emit(Op.COLLAPSE_DIMS, x, attrs=A.IndicesAttrs(axes)) if axes else x


@converter("EXPAND_DIMS", form="any")
@complex_parts
@keeps_quant
def convert_expand_dims(ctx: TfliteContext, node: OpReader) -> Converted:
    axis = ctx.const(node.inputs[1])
    if axis is None:
        raise ConvertError("EXPAND_DIMS needs a constant axis")
    st = ctx.values.get(node.inputs[0])
    if isinstance(st, ShapeTensor) and st.scalar:
        return ShapeTensor(st.dims)
    x = ctx.tensor(node.inputs[0])
    a = norm_axis(int(np.asarray(axis).reshape(-1)[0]), x.type.rank + 1)
    return ctx.b.emit(Op.EXPAND_DIMS, x, attrs=A.IndicesAttrs((a,)))


@converter("CONCATENATION", options="ConcatenationOptions")
def convert_concatenation(ctx: TfliteContext, node: OpReader) -> Converted:
    keys = node.inputs
    shapes = [ctx.shape_tensor(k) for k in keys]
    if all(s is not None and not s.scalar for s in shapes) and \
            any(isinstance(ctx.values.get(k), ShapeTensor) for k in keys):
        return ShapeTensor([d for s in shapes for d in s.dims])
    y = concat(ctx, node, [ctx.tensor(k) for k in keys])
    return activation(ctx, y, node.opt("FusedActivationFunction"))


def concat(ctx: TfliteContext, node: OpReader, xs: Sequence[Value]) -> Value:
    """``xs`` joined along CONCATENATION's axis (the ledger records that the other dims agree); operands
    with no elements along it are left out."""
    axis = norm_axis(node.opt("Axis"), xs[0].type.rank)
    for x in xs[1:]:
        for i, (a, b) in enumerate(zip(xs[0].type.shape, x.type.shape)):
            if i != axis:
                ctx.require(Kind.EQ, a, b, f"CONCATENATION operands agree on dim {i}")
    xs = [x for x in xs if not same(x.type.shape[axis], 0)] or xs[:1]   # TOSA has no empty operands
    return xs[0] if len(xs) == 1 else ctx.b.emit(Op.CONCAT, *xs, attrs=A.AxisAttrs(axis))


@converter("TRANSPOSE", form="any")
@complex_parts
def convert_transpose(ctx: TfliteContext, node: OpReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    perm = ctx.const(node.inputs[1])
    if perm is None:
        raise ConvertError("TRANSPOSE needs a constant permutation")
    perm = tuple(int(p) for p in np.asarray(perm).reshape(-1))
    if perm == tuple(range(x.type.rank)):
        return x
    return ctx.b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(perm))


_TO_FP32 = A.CastAttrs(DType.FP32)   # one object for every fp16 weight's CAST (the builder finds it by identity)


@converter("DEQUANTIZE")
def convert_dequantize(ctx: TfliteContext, node: OpReader) -> Converted:
    """float16 weights behind DEQUANTIZE stay an FP16 CONST and a CAST to FP32 (small ones, and all with
    ``--fp32-weights``, fold to a float32 constant); int8 dequantization is a later phase."""
    c = ctx.const(node.inputs[0])
    info = node.input_infos[0]
    if info.type_name == "FLOAT16":
        if c is not None and not keeps_narrow(np.asarray(c)):
            ctx.set_const(node.outputs[0], np.asarray(c, np.float32))
            return None
        return ctx.b.emit(Op.CAST, ctx.tensor(node.inputs[0]), attrs=_TO_FP32)
    raise ConvertError(f"DEQUANTIZE of {info.type_name} (quantized) tensors is not supported yet; "
                       "only float16 weights dequantize")


@converter("DENSIFY", options="DensifyOptions", form="any")
def convert_densify(ctx: TfliteContext, node: OpReader) -> Converted:
    """The reader already densified the sparse constant, so DENSIFY passes it on (float or int8 alike)."""
    c = ctx.const(node.inputs[0])
    if c is None:
        raise ConvertError("DENSIFY of a tensor computed at run time is not supported (only sparse constants)")
    ctx.set_const(node.outputs[0], c)
    return None

