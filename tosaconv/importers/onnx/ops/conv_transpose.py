"""The converter for ONNX ConvTranspose (1-D, 2-D and 3-D, NCHW) to TOSA.

1-D and 2-D: TRANSPOSE to NHWC, one TRANSPOSE_CONV2D per group (weights
``[C_in, O/group, KH, KW]`` become OHWI per group; groups are input-channel
slices joined by CONCAT), TRANSPOSE back. TOSA's ``out_pad = [-top, -bottom +
output_padding_h, -left, -right + output_padding_w]``; ONNX's pads, SAME
auto_pad and ``output_shape`` are all turned into those (begin, end) crops,
and a crop of a kernel size or more, which out_pad cannot express, is cut by a
SLICE afterwards. Dilations dilate the kernel itself (zeros between its taps,
:func:`~tosaconv.lowering.conv_weights.dilate`), which is exact, so the kernel size in every
formula is ``(k-1)*d + 1``. 3-D goes through CONV3D (:mod:`.conv3d`). A missing
bias becomes zeros.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence, Union

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.conv_weights import acc_type, as_value, bias, dilate, rearrange, rows, shape_of, weight
from ....lowering.dims import slice_
from ....lowering.window import cut_rows, drop_1d, lift_1d, to_nchw, to_nhwc, transpose_out_pad
from ....symbolic.constraints import Kind
from ....symbolic.expr import mul, sub
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish
from .conv3d import conv_transpose3d

if TYPE_CHECKING:
    import numpy as np
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader


SYMBOLIC_OUTPUT_SHAPE = Limit(
    "output-shape-symbolic", LimitKind.ATTRIBUTE, "output_shape", ("given, with a symbolic spatial input size",),
    "the pads depend on the size", "bind the symbol first (--bind or --input-shape)")
_, CONV_RANK = publish("ConvTranspose", SYMBOLIC_OUTPUT_SHAPE, Limit(
    "rank", LimitKind.INPUT, "X", ("of rank other than 3, 4 or 5 (4-D or higher spatial)",),
    "TOSA has 2-D and 3-D convolutions only (1-D is lifted to 2-D)", ""))


@converter("ConvTranspose", since=1)
def convert_conv_transpose(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    rank, dtype, acc = x.type.rank, x.type.dtype, acc_type(x)
    if rank not in (3, 4, 5):
        raise CONV_RANK.refuse(f"ConvTranspose input of rank {rank}")
    w = weight(ctx, node.inputs[1], dtype, rank)
    c_in, out_per_group = shape_of(w)[:2]
    group = node.attr("group")
    if c_in % group:
        raise ConvertError(f"ConvTranspose weight with {c_in} input channels cannot be split into {group} groups")
    ctx.require(Kind.EQ, x.type.shape[1], c_in, "ConvTranspose input channels = weight dim 0")
    n = max(rank, 4) - 2
    stride, dilation, extra = (_lifted(node.attr(a, None), rank, n, fill) for a, fill in
                               (("strides", 1), ("dilations", 1), ("output_padding", 0)))
    for i, d in enumerate(dilation):
        w = dilate(ctx, w, 2 + i, d)
    span = shape_of(w)[2:]
    sizes = ((1,) if rank == 3 else ()) + tuple(x.type.shape[2:])
    crops = _crops(node, rank, sizes, span, stride, extra)
    b = bias(ctx, node.input(2), out_per_group * group, dtype)
    if rank == 5:
        return conv_transpose3d(ctx, x, w, b, group, stride, (1, 1, 1), crops, extra, acc)
    nhwc = to_nhwc(ctx, lift_1d(ctx, x, "ConvTranspose"))
    out_pad, cut = transpose_out_pad(crops, extra, span)
    attrs = A.TransposeConv2dAttrs(out_pad, stride, acc)
    y = _grouped(ctx, nhwc, w, b, group, attrs)
    return drop_1d(ctx, to_nchw(ctx, cut_rows(ctx, y, cut)), rank)


def _lifted(values: Optional[Sequence[int]], rank: int, n: int, fill: int) -> tuple:
    """A per-axis attribute with ``n`` entries (a lifted 1-D op gets ``fill`` for H)."""
    values = tuple(int(v) for v in values) if values else (fill,) * (rank - 2)
    if len(values) != rank - 2:
        raise ConvertError(f"ConvTranspose attribute {list(values)} does not have {rank - 2} entries")
    return (fill,) * (n - len(values)) + values


def _grouped(ctx: ImportContext, x: Value, w: Union[np.ndarray, Value], b: Union[np.ndarray, Value], group: int, attrs: A.TransposeConv2dAttrs) -> Value:
    c_in, out_per_group, kh, kw = shape_of(w)
    per_group = c_in // group
    parts = []
    for g in range(group):
        xs = x if group == 1 else _channels(ctx, x, g * per_group, per_group)
        wg = rearrange(ctx, rows(ctx, w, g * per_group, per_group), (per_group, out_per_group, kh, kw), (1, 2, 3, 0))
        bg = as_value(ctx, rows(ctx, b, g * out_per_group, out_per_group))
        parts.append(ctx.b.emit(Op.TRANSPOSE_CONV2D, xs, wg, bg, attrs=attrs))
    return parts[0] if group == 1 else ctx.b.emit(Op.CONCAT, *parts, attrs=A.AxisAttrs(3))


def _channels(ctx: ImportContext, x: Value, start: int, count: int) -> Value:
    n, h, w, _ = x.type.shape
    return slice_(ctx, x, [0, 0, 0, start], [n, h, w, count])


def _crops(node: NodeReader, rank: int, sizes: Sequence[Dim], span: Sequence[int], stride: Sequence[int], extra: Sequence[int]) -> list:
    """(begin, end) rows ONNX removes from the full transposed-convolution output, per axis."""
    n = len(sizes)
    auto_pad = node.attr("auto_pad", "NOTSET")
    output_shape = node.attr("output_shape", None)
    if output_shape:
        targets = _lifted(output_shape[-(rank - 2):], rank, n, 1)
        return [_from_target(sizes[i], span[i], stride[i], extra[i], targets[i], auto_pad, i + rank - n)
                for i in range(n)]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return [_split_total(extra[i] + span[i] - stride[i], auto_pad == "SAME_UPPER") for i in range(n)]
    if auto_pad == "VALID":
        return [(0, 0)] * n
    pads = node.attr("pads", None) or (0,) * (2 * (rank - 2))
    if len(pads) != 2 * (rank - 2):
        raise ConvertError(f"ConvTranspose pads {list(pads)} do not have {2 * (rank - 2)} entries")
    begin, end = _lifted(pads[:rank - 2], rank, n, 0), _lifted(pads[rank - 2:], rank, n, 0)
    return list(zip(begin, end))


def _from_target(size: Dim, k: int, s: int, extra: int, target: int, auto_pad: str, axis: int) -> tuple:
    total = sub(mul(sub(size, 1), s) + extra + k, target)
    if not isinstance(total, int):
        raise SYMBOLIC_OUTPUT_SHAPE.refuse(f"ConvTranspose output_shape on symbolic input axis {axis}")
    return _split_total(total, auto_pad == "SAME_UPPER")


def _split_total(total: int, upper: bool) -> tuple:
    """ONNX (and its reference, flooring): SAME_UPPER puts the odd pad at the end, otherwise at
    the beginning. A negative total grows the output there, with rows that hold just the bias."""
    small, large = total // 2, total - total // 2
    return (small, large) if upper else (large, small)
