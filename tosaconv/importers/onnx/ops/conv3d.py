"""3-D convolutions as TOSA CONV3D: ONNX Conv and ConvTranspose on NCDHW input.

Conv: TRANSPOSE to NDHWC, the input fitted on each spatial axis as the 2-D
converters fit H and W (pads, SAME, TOSA's exact division, DYN_SLICE on
symbolic sizes), one CONV3D per group (weights OIDHW become
``[O, KD, KH, KW, I]``) joined by CONCAT, TRANSPOSE back.

ConvTranspose has no 3-D TOSA op. It is a correlation of the input spread by
the stride (``s - 1`` zeros after each element: RESHAPE, PAD, RESHAPE, cut)
with the flipped kernel (dilated first, so ``K = (k-1)*d + 1``), padded by
``K-1-begin`` before and ``K-1-end+output_padding`` after, where begin and end
are ONNX's pads (negative amounts cut the spread input instead): one CONV3D of
stride 1 per group, weights ``W[i, o, K-1-t]`` at ``[o, t, i]``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence, Union

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.conv_weights import as_value, dilate, flip, rearrange, rows, shape_of
from ....lowering.dims import reshape, slice_
from ....symbolic.constraints import Kind
from ....symbolic.expr import mul, sub
from ..reader import ConvertError
from .windows_nd import fit_channels_last, nd_window

if TYPE_CHECKING:
    import numpy as np
    from ....ir.dtypes import DType
    from ....ir.graph import Value
    from ..context import ImportContext
    from ..reader import NodeReader

TO_NDHWC, TO_NCDHW = (0, 2, 3, 4, 1), (0, 4, 1, 2, 3)


def _transpose(ctx: ImportContext, x: Value, perm: tuple[int, ...]) -> Value:
    return ctx.b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(perm))


def conv3d(ctx: ImportContext, node: NodeReader, x: Value, w: Union[np.ndarray, Value], bias: Union[np.ndarray, Value], group: int, acc: DType) -> Value:
    """ONNX Conv on NCDHW input."""
    o, per_group, *kernel = shape_of(w)
    y = _transpose(ctx, x, TO_NDHWC)
    ctx.require(Kind.EQ, y.type.shape[4], per_group * group, "Conv input channels = weight channels * group")
    window = nd_window(node, kernel)
    y, pad = fit_channels_last(ctx, y, window, 0.0)
    attrs = A.Conv3dAttrs(pad, window.stride, window.dilation, acc)
    return _transpose(ctx, _grouped(ctx, y, w, bias, group, attrs, (0, 2, 3, 4, 1)), TO_NCDHW)


def conv_transpose3d(ctx: ImportContext, x: Value, w: Union[np.ndarray, Value], bias: Union[np.ndarray, Value], group: int, stride: Sequence[int], dilation: Sequence[int], crops: Sequence[Sequence[int]], extra: Sequence[int], acc: DType) -> Value:
    """ONNX ConvTranspose on NCDHW input; ``crops`` are ONNX's (begin, end) pads per axis and
    ``extra`` its output_padding."""
    for i, d in enumerate(dilation):
        w = dilate(ctx, w, 2 + i, d)
    span = shape_of(w)[2:]
    y = _transpose(ctx, x, TO_NDHWC)
    pad = []
    for i, s in enumerate(stride):
        y = _spread(ctx, y, 1 + i, s)
        before, after = span[i] - 1 - crops[i][0], span[i] - 1 - crops[i][1] + extra[i]
        y = _cut(ctx, y, 1 + i, max(-before, 0), max(-after, 0))
        pad += [max(before, 0), max(after, 0)]
    attrs = A.Conv3dAttrs(tuple(pad), (1, 1, 1), (1, 1, 1), acc)
    w = flip(ctx, w, (2, 3, 4))
    return _transpose(ctx, _grouped(ctx, y, w, bias, group, attrs, (1, 2, 3, 4, 0), transposed=True), TO_NCDHW)


def _grouped(ctx: ImportContext, y: Value, w: Union[np.ndarray, Value], bias: Union[np.ndarray, Value], group: int, attrs: A.Conv3dAttrs, perm: tuple[int, ...], transposed: bool = False) -> Value:
    """One CONV3D per group on its channel slice; ``transposed``: weight rows are input channels."""
    rows_per_group = shape_of(w)[0] // group
    if shape_of(w)[0] % group:
        raise ConvertError(f"a weight with {shape_of(w)[0]} leading channels cannot be split into {group} groups")
    in_per_group = shape_of(w)[0] // group if transposed else shape_of(w)[1]
    out_per_group = shape_of(w)[1] if transposed else rows_per_group
    parts = []
    for g in range(group):
        xs = _channels(ctx, y, g * in_per_group, in_per_group) if group > 1 else y
        wg = rows(ctx, w, g * rows_per_group, rows_per_group)
        weights = rearrange(ctx, wg, shape_of(wg), perm)
        bg = as_value(ctx, rows(ctx, bias, g * out_per_group, out_per_group))
        parts.append(ctx.b.emit(Op.CONV3D, xs, weights, bg, attrs=attrs))
    return parts[0] if group == 1 else ctx.b.emit(Op.CONCAT, *parts, attrs=A.AxisAttrs(4))


def _channels(ctx: ImportContext, x: Value, start: int, count: int) -> Value:
    shape = list(x.type.shape)
    return slice_(ctx, x, [0] * (len(shape) - 1) + [start], shape[:-1] + [count])


def _spread(ctx: ImportContext, y: Value, axis: int, s: int) -> Value:
    """``s - 1`` zeros after each element along ``axis`` (none after the last)."""
    if s == 1:
        return y
    shape = list(y.type.shape)
    size = shape[axis]
    spread = reshape(ctx, y, shape[:axis + 1] + [1] + shape[axis + 1:])
    padding = [0] * (2 * (len(shape) + 1))
    padding[2 * (axis + 1) + 1] = s - 1
    spread = ctx.b.emit(Op.PAD, spread, attrs=A.PadAttrs(tuple(padding), 0.0))
    spread = reshape(ctx, spread, shape[:axis] + [mul(size, s)] + shape[axis + 1:])
    return _cut(ctx, spread, axis, 0, s - 1)


def _cut(ctx: ImportContext, y: Value, axis: int, begin: int, end: int) -> Value:
    """Drop ``begin`` leading and ``end`` trailing elements along ``axis``."""
    if not (begin or end):
        return y
    shape = list(y.type.shape)
    sizes = shape[:axis] + [sub(shape[axis], begin + end)] + shape[axis + 1:]
    starts = [0] * axis + [begin] + [0] * (len(shape) - axis - 1)
    return slice_(ctx, y, starts, sizes)

