"""The converter for TFLite's TRANSPOSE_CONV (inputs: output_shape, weights
OHWI, input NHWC, optional bias) to one TOSA TRANSPOSE_CONV2D.

TFLite's weights are already TOSA's OHWI layout. The output size is
``output_shape`` (H and W must be constants there; N may come from a shape
chain); the padding is TFLite's ``ComputePaddingHeightWidth`` applied to that
output size (SAME: the input size it implies is ``ceil(out / stride)``,
VALID: ``(out - k + stride) / stride``; the top/left pad is half the total,
floored; the input size must be the implied one, as LiteRT checks). So the
full transposed output ``(in - 1) * stride + k`` loses
``pad`` rows at the start and whatever exceeds the output size at the end (a
negative amount grows it with bias-only rows), which the shared
``transpose_out_pad``/``cut_rows`` turn into TOSA out_pad plus a SLICE when needed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.conv_weights import acc_type, as_value, bias, shape_of, weight
from ....lowering.window import cut_rows, transpose_out_pad
from ....symbolic.constraints import Kind
from ..reader import ConvertError
from ..registry import converter
from ..schema import tflite
from .common import float_input, fused

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import TfliteContext
    from ..node import OpReader


@converter("TRANSPOSE_CONV", options="TransposeConvOptions")
def convert_transpose_conv(ctx: TfliteContext, node: OpReader) -> Converted:
    x = float_input(ctx, node, 2)
    dtype, acc = x.type.dtype, acc_type(x)
    w = weight(ctx, node.inputs[1], dtype, 4)
    out_pad, cut, stride = transpose_geometry(ctx, node, x, shape_of(w))
    b = bias(ctx, node.input(3), shape_of(w)[0], dtype)
    y = ctx.b.emit(Op.TRANSPOSE_CONV2D, x, as_value(ctx, w), as_value(ctx, b),
                   attrs=A.TransposeConv2dAttrs(out_pad, stride, acc))
    return fused(ctx, node, cut_rows(ctx, y, cut))


def transpose_geometry(ctx: TfliteContext, node: OpReader, x: Value, w_shape: Sequence[Dim]) -> tuple:
    """TFLite's output size and padding for NHWC ``x`` and OHWI ``w_shape``: (out_pad, cut, stride).

    ``cut`` is what out_pad cannot crop; apply it to the result with ``cut_result``."""
    if x.type.rank != 4:
        raise ConvertError(f"TRANSPOSE_CONV needs a rank 4 (NHWC) input, got rank {x.type.rank}")
    c_out, kh, kw, c_in = w_shape
    ctx.require(Kind.EQ, x.type.shape[3], c_in, "TRANSPOSE_CONV input channels = weight dim 3")
    target = ctx.dims(node.inputs[0]).dims
    if len(target) != 4:
        raise ConvertError(f"TRANSPOSE_CONV output_shape has {len(target)} entries, not 4")
    out_h, out_w = target[1].type.value, target[2].type.value
    if not (isinstance(out_h, int) and isinstance(out_w, int)):
        raise ConvertError("TRANSPOSE_CONV output height and width must be constants (the padding depends on them)")
    ctx.require(Kind.EQ, target[0].type.value, x.type.shape[0], "TRANSPOSE_CONV output batch = input batch")
    ctx.require(Kind.EQ, target[3].type.value, c_out, "TRANSPOSE_CONV output channels = weight dim 0")
    padding = node.opt("Padding")
    if padding not in (tflite.Padding.SAME, tflite.Padding.VALID):
        raise ConvertError(f"padding {padding} is neither SAME nor VALID")
    stride = (node.opt("StrideH"), node.opt("StrideW"))
    crops = []
    h, w_in = x.type.shape[1], x.type.shape[2]
    for size, out, k, s, axis in ((h, out_h, kh, stride[0], 1), (w_in, out_w, kw, stride[1], 2)):
        implied = -(-out // s) if padding == tflite.Padding.SAME else (out - k + s) // s
        ctx.require(Kind.EQ, size, implied, f"TRANSPOSE_CONV input dim {axis} fits output_shape and padding")
        begin = max(((implied - 1) * s + k - out) // 2, 0)
        crops.append((begin, (implied - 1) * s + k - begin - out))
    out_pad, cut = transpose_out_pad(crops, (0, 0), (kh, kw))
    return out_pad, cut, stride


cut_result = cut_rows
