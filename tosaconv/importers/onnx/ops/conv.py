"""The converter for ONNX Conv (1-D, 2-D and 3-D, NCHW) to TOSA.

Each op becomes TRANSPOSE to NHWC, the TOSA convolution, TRANSPOSE back.
Conv with ``group == 1`` is CONV2D (weights OIHW transposed to OHWI once, in
numpy, when they are constants); ``group == C`` with one input channel per
group is DEPTHWISE_CONV2D (weights ``[KH, KW, C, M]``); any other group count
is one CONV2D per group on a channel slice, joined by CONCAT. Pads and the
exact-division rule are handled by :mod:`tosaconv.lowering.window`. 3-D convolutions are CONV3D
(:mod:`.conv3d`). A missing bias becomes zeros. ConvTranspose is in
:mod:`.conv_transpose`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.conv_weights import acc_type, as_value, bias, rearrange, rows, shape_of, weight
from ....lowering.dims import slice_
from ....lowering.window import drop_1d, fit_window, lift_1d, to_nchw, to_nhwc
from ....symbolic.constraints import Kind
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish
from .conv3d import conv3d
from .window_attrs import read_window

if TYPE_CHECKING:
    import numpy as np
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


CONV_RANK = publish("Conv", Limit(
    "rank", LimitKind.INPUT, "X", ("of rank other than 3, 4 or 5 (4-D or higher spatial)",),
    "TOSA has 2-D and 3-D convolutions only (1-D is lifted to 2-D)", ""))


@converter("Conv", since=1)
def convert_conv(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    rank, dtype, acc = x.type.rank, x.type.dtype, acc_type(x)
    if rank not in (3, 4, 5):
        raise CONV_RANK.refuse(f"Conv input of rank {rank}")
    w = weight(ctx, node.inputs[1], dtype, rank)
    if len(shape_of(w)) != max(rank, 4):
        raise ConvertError(f"Conv weight of shape {list(shape_of(w))} does not match a rank {rank} input")
    b = bias(ctx, node.input(2), shape_of(w)[0], dtype)
    if rank == 5:
        return conv3d(ctx, node, x, w, b, node.attr("group"), acc)
    nhwc = to_nhwc(ctx, lift_1d(ctx, x, "Conv"))
    o, i_per_group, _, _ = shape_of(w)
    group = node.attr("group")
    ctx.require(Kind.EQ, nhwc.type.shape[3], i_per_group * group, "Conv input channels = weight channels * group")
    window = read_window(node, rank, shape_of(w)[6 - rank:])
    nhwc, pad = fit_window(ctx, nhwc, window, 0.0)
    attrs = A.Conv2dAttrs(pad, window.stride, window.dilation, acc)
    y = _grouped(ctx, nhwc, w, b, group, attrs)
    return drop_1d(ctx, to_nchw(ctx, y), rank)


def _grouped(ctx: ImportContext, x: Value, w: Union[np.ndarray, Value], b: Union[np.ndarray, Value], group: int, attrs: A.Conv2dAttrs) -> Value:
    o, i_per_group, kh, kw = shape_of(w)
    if group == 1:
        return _conv(ctx, x, w, b, attrs)
    if i_per_group == 1 and o % group == 0:
        dw = rearrange(ctx, w, (group, o // group, kh, kw), (2, 3, 0, 1))
        return ctx.b.emit(Op.DEPTHWISE_CONV2D, x, dw, as_value(ctx, b), attrs=attrs)
    if o % group:
        raise ConvertError(f"Conv with {o} output channels cannot be split into {group} groups")
    out_per_group = o // group
    parts = []
    for g in range(group):
        xs = _channels(ctx, x, g * i_per_group, i_per_group)
        parts.append(_conv(ctx, xs, rows(ctx, w, g * out_per_group, out_per_group),
                           rows(ctx, b, g * out_per_group, out_per_group), attrs))
    return ctx.b.emit(Op.CONCAT, *parts, attrs=A.AxisAttrs(3))


def _conv(ctx: ImportContext, x: Value, w: Union[np.ndarray, Value], b: Union[np.ndarray, Value], attrs: A.Conv2dAttrs) -> Value:
    o, i, kh, kw = shape_of(w)
    ohwi = rearrange(ctx, w, (o, i, kh, kw), (0, 2, 3, 1))
    return ctx.b.emit(Op.CONV2D, x, ohwi, as_value(ctx, b), attrs=attrs)


def _channels(ctx: ImportContext, x: Value, start: int, count: int) -> Value:
    n, h, w, _ = x.type.shape
    return slice_(ctx, x, [0, 0, 0, start], [n, h, w, count])
