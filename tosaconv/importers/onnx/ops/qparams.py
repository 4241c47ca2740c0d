"""Scale and zero-point operands of the ONNX quantization ops: reading them and broadcasting them.

ONNX has three granularities. *Per tensor*: a scalar (or one-element) scale.
*Per axis*: a 1-D scale of the length of ``axis`` of the data (from version
13; a version-10 node that sets ``axis``, as onnxruntime's quantizer writes
for QDQ models at opsets 10 to 12, is read the same way). *Blocked*
(opset 21): a scale of the data's rank whose ``axis`` dim is
``ceil(size / block_size)``; each scale covers ``block_size`` consecutive
elements. :func:`broadcast` turns any of them into a tensor that broadcasts
against the data: constants in numpy, run-time values with RESHAPE (and, for
blocks, TILE then SLICE, which needs the blocked axis to be static).
Zero points follow their scale; constants are read as their true integer
values (uint8 200 stays 200).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from ....lowering.dims import norm_axis, reshape
from ....symbolic.constraints import Kind
from ..reader import ConvertError
from .qtypes import QParams

if TYPE_CHECKING:
    from ....ir.types import TensorType
    from ..context import ImportContext
    from ..reader import NodeReader
    from .qtypes import Param


def read_params(ctx: ImportContext, node: NodeReader, scale_index: int, zp_index: int, data_type: TensorType, axis: Optional[int] = None) -> QParams:
    """The (scale, zero point) operands of ``node`` for data of IR type ``data_type``.

    ``axis`` is the axis of a 1-D scale for ops that have no ``axis`` attribute (QLinearConv's
    per-output-channel weights); otherwise the node's attribute is used."""
    scale = _operand(ctx, node.input(scale_index), is_float=True)
    if scale is None:
        raise ConvertError("the scale operand is missing")
    zp = _operand(ctx, node.input(zp_index), is_float=False)
    block = node.attr("block_size") if _has_attr(node, "block_size") else 0
    rank = _rank(scale)
    if block:
        return _blocked(ctx, scale, zp, _axis(node, data_type.rank), block, data_type)
    if rank > 1:
        raise ConvertError(f"a scale of rank {rank} needs block_size (blocked quantization)")
    count = _size(scale)
    if count == 1:
        if zp is not None and _size(zp) != 1:
            raise ConvertError(f"a per-tensor scale with {_size(zp)} zero points")
        return QParams(scale, zp)
    axis = _axis(node, data_type.rank) if axis is None else norm_axis(axis, data_type.rank)
    if zp is not None and _size(zp) not in (1, count):
        raise ConvertError(f"{count} scales but {_size(zp)} zero points")
    ctx.require(Kind.EQ, data_type.shape[axis], count, f"per-axis scale length = data dim {axis}")
    return QParams(scale, zp, axis)


def unit_params(ctx: ImportContext, zp_name: Optional[str], data_type: TensorType, axis: int) -> QParams:
    """Scale 1 and the zero point ``zp_name``: a scalar, or one per index of ``axis`` (ConvInteger,
    MatMulInteger)."""
    zp = _operand(ctx, zp_name, is_float=False)
    count = 1 if zp is None else _size(zp)
    if count == 1:
        return QParams(np.ones((), np.float32), zp)
    axis = norm_axis(axis, data_type.rank)
    ctx.require(Kind.EQ, data_type.shape[axis], count, f"zero point length = data dim {axis}")
    return QParams(np.ones((count,), np.float32), zp, axis)


def _has_attr(node: NodeReader, name: str) -> bool:
    return node.schema is not None and name in node.schema.attributes


def _axis(node: NodeReader, rank: int) -> int:
    # QuantizeLinear/DequantizeLinear 10 have no ``axis`` (per-axis scales came with version 13), yet
    # onnxruntime's quantizer writes ``axis`` on them for the per-channel weights and biases of QDQ
    # models at opsets 10 to 12 (onnxruntime itself then refuses the model: "Unrecognized attribute:
    # axis"). A 1-D scale has no meaning but the per-axis one the quantizer computed it for, so an
    # ``axis`` the node sets is read as in version 13; without one, a 1-D scale is refused.
    if not _has_attr(node, "axis") and not node.has("axis"):
        raise ConvertError(f"{node.op_type} version {node.version} has no axis attribute and takes only "
                           "per-tensor scales (set 'axis' for per-axis scales, as onnxruntime reads it, or "
                           "export the model at opset 13 or later)")
    return norm_axis(node.attr("axis"), rank)


def _operand(ctx: ImportContext, name: Optional[str], is_float: bool) -> Optional[Param]:
    if name is None:
        return None
    c = ctx.const(name)
    if c is not None:
        return c.astype(np.float32) if is_float else c.astype(np.int64)
    v = ctx.tensor(name)
    if v.type.dtype.is_float != is_float:
        raise ConvertError(f"'{name}' has element type {v.type.dtype.value}, which does not fit a "
                           f"{'scale' if is_float else 'zero point'}")
    if not v.type.is_static:
        raise ConvertError(f"the {'scale' if is_float else 'zero point'} '{name}' has symbolic dims {v.type}")
    return v


def _rank(p: Param) -> int:
    return p.ndim if isinstance(p, np.ndarray) else p.type.rank


def _size(p: Param) -> int:
    return int(p.size) if isinstance(p, np.ndarray) else int(np.prod(p.type.static_shape(), dtype=np.int64))


def _blocked(ctx: ImportContext, scale: Param, zp: Optional[Param], axis: int, block: int, data_type: TensorType) -> QParams:
    if block < 0:
        raise ConvertError(f"block_size must be positive, got {block}")
    size = data_type.shape[axis]
    if not isinstance(size, int):
        raise ConvertError(f"blocked quantization on symbolic axis {axis} ({size}): the scale is repeated "
                           "to the axis length, which must be static; bind the symbol first")
    shape = np.shape(scale) if isinstance(scale, np.ndarray) else scale.type.static_shape()
    if len(shape) != data_type.rank or shape[axis] != -(-size // block):
        raise ConvertError(f"a blocked scale of shape {list(shape)} does not fit data {data_type} with "
                           f"block_size {block} on axis {axis}")
    for i, d in enumerate(shape):
        if i != axis:
            ctx.require(Kind.EQ, data_type.shape[i], d, f"blocked scale dim {i} = data dim {i}")
    return QParams(scale, zp, axis, block)


# -- broadcasting --------------------------------------------------------------------

def broadcast(ctx: ImportContext, p: Union[Param, np.generic], params: QParams, data_type: TensorType) -> Param:
    """Scale or zero point ``p`` (numpy or IR value) shaped to broadcast against ``data_type``."""
    rank = data_type.rank
    if not isinstance(p, Value):
        p = np.asarray(p)
    if params.block_size:
        return _expand_blocks(ctx, p, params, data_type.shape[params.axis])
    if params.axis is None:
        if isinstance(p, np.ndarray):
            return p.reshape((1,) * rank)
        return reshape(ctx, p, [1] * rank)
    dims = [1] * rank
    dims[params.axis] = _size(p)
    return p.reshape(dims) if isinstance(p, np.ndarray) else reshape(ctx, p, dims)


def _expand_blocks(ctx: ImportContext, p: Param, params: QParams, size: int) -> Param:
    axis, block = params.axis, params.block_size
    if isinstance(p, np.ndarray):
        return np.take(np.repeat(p, block, axis=axis), range(size), axis=axis)
    shape = list(p.type.static_shape())
    split = shape[:axis + 1] + [1] + shape[axis + 1:]
    multiples = [1] * len(split)
    multiples[axis + 1] = block
    tiled = ctx.b.emit(Op.TILE, reshape(ctx, p, split), attrs=A.TileAttrs(tuple(multiples)))
    merged = shape[:axis] + [shape[axis] * block] + shape[axis + 1:]
    flat = reshape(ctx, tiled, merged)
    if merged[axis] == size:
        return flat
    sizes = list(merged)
    sizes[axis] = size
    return ctx.b.emit(Op.SLICE, flat, attrs=A.SliceAttrs((0,) * len(sizes), tuple(sizes)))


def as_float32(ctx: ImportContext, p: Param) -> Param:
    """A float scale as float32 (fp16 run-time scales are widened with CAST)."""
    if isinstance(p, np.ndarray):
        return p.astype(np.float32)
    return p if p.type.dtype == DType.FP32 else ctx.b.emit(Op.CAST, p, attrs=A.CastAttrs(DType.FP32))


def is_value(p: Optional[Param]) -> bool:
    return isinstance(p, Value)
