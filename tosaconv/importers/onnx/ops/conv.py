"""Converters for ONNX Conv and ConvTranspose (1-D and 2-D, NCHW) to TOSA.

Each op becomes TRANSPOSE to NHWC, the TOSA convolution, TRANSPOSE back.
Conv with ``group == 1`` is CONV2D (weights OIHW transposed to OHWI once, in
numpy, when they are constants); ``group == C`` with one input channel per
group is DEPTHWISE_CONV2D (weights ``[KH, KW, C, M]``); any other group count
is one CONV2D per group on a channel slice, joined by CONCAT. Pads and the
exact-division rule are handled by :mod:`.nn`. ConvTranspose is
TRANSPOSE_CONV2D with ``out_pad = [-top, -bottom + output_padding_h, -left,
-right + output_padding_w]``; ``output_shape`` and SAME auto_pad are turned
into those pads. A missing bias becomes zeros.
"""
from __future__ import annotations

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....symbolic.constraints import Kind
from ....symbolic.expr import mul, sub
from ..reader import ConvertError
from ..registry import converter
from .common import reshape, slice_
from .nn import drop_1d, fit_window, lift_1d, read_window, spatial, to_nchw, to_nhwc


def _acc_type(x) -> DType:
    if not x.type.dtype.is_float:
        raise ConvertError(f"{x.type.dtype.value} convolution is not supported (ONNX Conv is float-only; "
                           "quantized models use ConvInteger or QLinearConv)")
    return DType.FP32


def _weight(ctx, name: str, dtype, rank: int):
    """The weight as a 4-D numpy array when constant, else as a 4-D IR value."""
    w = ctx.const(name)
    if w is not None:
        w = w.astype(dtype.numpy)
        return w if rank == 4 else w[:, :, None, :]
    v = ctx.tensor(name)
    if not v.type.is_static:
        raise ConvertError(f"weight '{name}' has symbolic dims {v.type}; convolution weights need a static shape")
    return v if rank == 4 else reshape(ctx, v, [*v.type.shape[:2], 1, v.type.shape[2]])


def _rearrange(ctx, w, shape, perm):
    """Reshape then transpose a weight: in numpy for constants, with IR ops otherwise."""
    if isinstance(w, np.ndarray):
        return ctx.b.const(np.ascontiguousarray(w.reshape(shape).transpose(perm)))
    return ctx.b.emit(Op.TRANSPOSE, reshape(ctx, w, shape), attrs=A.TransposeAttrs(tuple(perm)))


def _rows(ctx, w, start: int, count: int):
    """Rows ``start:start+count`` of the leading axis of a weight or bias."""
    if isinstance(w, np.ndarray):
        return w[start:start + count]
    shape = list(w.type.shape)
    sizes = [count] + shape[1:]
    starts = [start] + [0] * (len(shape) - 1)
    return ctx.b.emit(Op.SLICE, w, attrs=A.SliceAttrs(tuple(starts), tuple(sizes)))


def _bias(ctx, node, out_channels: int, dtype):
    name = node.input(2)
    if name is None:
        return np.zeros((out_channels,), dtype.numpy)
    c = ctx.const(name)
    return c.astype(dtype.numpy) if c is not None else ctx.tensor(name)


def _as_value(ctx, v):
    return ctx.b.const(v) if isinstance(v, np.ndarray) else v


def _shape_of(w) -> tuple:
    return tuple(w.shape) if isinstance(w, np.ndarray) else tuple(w.type.shape)


@converter("Conv", since=1)
def convert_conv(ctx, node):
    x = ctx.tensor(node.inputs[0])
    rank, dtype, acc = x.type.rank, x.type.dtype, _acc_type(x)
    nhwc = to_nhwc(ctx, lift_1d(ctx, x, "Conv"))
    w = _weight(ctx, node.inputs[1], dtype, rank)
    o, i_per_group, _, _ = _shape_of(w)
    group = node.attr("group")
    ctx.require(Kind.EQ, nhwc.type.shape[3], i_per_group * group, "Conv input channels = weight channels * group")
    window = read_window(node, rank, _shape_of(w)[6 - rank:])
    nhwc, pad = fit_window(ctx, nhwc, window, 0.0)
    attrs = A.Conv2dAttrs(pad, window.stride, window.dilation, acc)
    y = _grouped(ctx, nhwc, w, _bias(ctx, node, o, dtype), group, attrs)
    return drop_1d(ctx, to_nchw(ctx, y), rank)


def _grouped(ctx, x, w, bias, group: int, attrs):
    o, i_per_group, kh, kw = _shape_of(w)
    if group == 1:
        return _conv(ctx, x, w, bias, attrs)
    if i_per_group == 1 and o % group == 0:
        dw = _rearrange(ctx, w, (group, o // group, kh, kw), (2, 3, 0, 1))
        return ctx.b.emit(Op.DEPTHWISE_CONV2D, x, dw, _as_value(ctx, bias), attrs=attrs)
    if o % group:
        raise ConvertError(f"Conv with {o} output channels cannot be split into {group} groups")
    out_per_group = o // group
    parts = []
    for g in range(group):
        xs = _channels(ctx, x, g * i_per_group, i_per_group)
        parts.append(_conv(ctx, xs, _rows(ctx, w, g * out_per_group, out_per_group),
                           _rows(ctx, bias, g * out_per_group, out_per_group), attrs))
    return ctx.b.emit(Op.CONCAT, *parts, attrs=A.AxisAttrs(3))


def _conv(ctx, x, w, bias, attrs):
    o, i, kh, kw = _shape_of(w)
    ohwi = _rearrange(ctx, w, (o, i, kh, kw), (0, 2, 3, 1))
    return ctx.b.emit(Op.CONV2D, x, ohwi, _as_value(ctx, bias), attrs=attrs)


def _channels(ctx, x, start: int, count: int):
    n, h, w, _ = x.type.shape
    return slice_(ctx, x, [0, 0, 0, start], [n, h, w, count])


# -- ConvTranspose ------------------------------------------------------------------

@converter("ConvTranspose", since=1)
def convert_conv_transpose(ctx, node):
    x = ctx.tensor(node.inputs[0])
    rank, dtype, acc = x.type.rank, x.type.dtype, _acc_type(x)
    _check_transpose_attrs(node)
    nhwc = to_nhwc(ctx, lift_1d(ctx, x, "ConvTranspose"))
    w = _weight(ctx, node.inputs[1], dtype, rank)
    c_in, o, kh, kw = _shape_of(w)
    ctx.require(Kind.EQ, nhwc.type.shape[3], c_in, "ConvTranspose input channels = weight dim 0")
    stride = spatial(node.attr("strides", None) or (1,) * (rank - 2), rank, 1)
    extra = spatial(node.attr("output_padding", None) or (0,) * (rank - 2), rank, 0)
    crops = [_crop(node, rank, nhwc.type.shape[1 + i], (kh, kw)[i], stride[i], extra[i], i) for i in range(2)]
    out_pad, cut = _out_pad(crops, extra, (kh, kw))
    weight = _rearrange(ctx, w, (c_in, o, kh, kw), (1, 2, 3, 0))
    y = ctx.b.emit(Op.TRANSPOSE_CONV2D, nhwc, weight, _as_value(ctx, _bias(ctx, node, o, dtype)),
                   attrs=A.TransposeConv2dAttrs(out_pad, stride, acc))
    return drop_1d(ctx, to_nchw(ctx, _cut(ctx, y, cut)), rank)


def _check_transpose_attrs(node):
    if node.attr("group") != 1:
        raise ConvertError(f"ConvTranspose with group={node.attr('group')} is not supported (only group=1)")
    dilations = node.attr("dilations", None) or ()
    if any(d != 1 for d in dilations):
        raise ConvertError(f"ConvTranspose with dilations {list(dilations)} is not supported: "
                           "TOSA TRANSPOSE_CONV2D has no dilation")


def _crop(node, rank: int, size, k: int, s: int, extra: int, axis: int) -> tuple:
    """(begin, end) rows ONNX removes from the full transposed-convolution output."""
    auto_pad = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape", None)
    if output_shape:
        target = spatial(output_shape[-(rank - 2):], rank, 1)[axis]
        total = sub(mul(sub(size, 1), s) + extra + k, target)
        if not isinstance(total, int):
            raise ConvertError(f"ConvTranspose output_shape on symbolic input axis {axis + rank - 2}: "
                               "the pads depend on the size; bind the symbol first")
        return _split_total(total, auto_pad == "SAME_UPPER")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return _split_total(extra + k - s, auto_pad == "SAME_UPPER")
    if auto_pad == "VALID":
        return (0, 0)
    pads = node.attr("pads", None) or (0,) * (2 * (rank - 2))
    return spatial(pads[:rank - 2], rank, 0)[axis], spatial(pads[rank - 2:], rank, 0)[axis]


def _split_total(total: int, upper: bool) -> tuple:
    """ONNX (and its reference, flooring): SAME_UPPER puts the odd pad at the end, otherwise at
    the beginning. A negative total grows the output there, with rows that hold just the bias."""
    small, large = total // 2, total - total // 2
    return (small, large) if upper else (large, small)


def _out_pad(crops, extra, kernel) -> tuple:
    """TOSA out_pad, clamped above -kernel; what the clamp leaves is cut afterwards."""
    pads, cut = [], []
    for (begin, end), e, k in zip(crops, extra, kernel):
        for p in (-begin, e - end):
            pads.append(max(p, 1 - k))
            cut.append(max(p, 1 - k) - p)
    return tuple(pads), tuple(cut)


def _cut(ctx, y, cut):
    """Remove rows that out_pad could not crop (a pad of a kernel size or more)."""
    if not any(cut):
        return y
    n, h, w, c = y.type.shape
    sizes = [n, sub(h, cut[0] + cut[1]), sub(w, cut[2] + cut[3]), c]
    return slice_(ctx, y, [0, cut[0], cut[2], 0], sizes)
