"""Converters for TFLite custom ops whose semantics are public and verifiable.

MediaPipe's ``Convolution2DTransposeBias`` (``mediapipe/util/tflite/operations/
transpose_conv_bias.cc``) is TFLite's reference TRANSPOSE_CONV with the bias
added: inputs (input NHWC, weights OHWI, bias [O]); float32 only; its custom
options are the raw C struct ``TfLiteTransposeConvParams`` (int32 padding
(1 SAME, 2 VALID), stride_width, stride_height); no activation is applied.
The output size is its own (no output_shape operand): SAME pads
``max(0, k - (in - 1) % s - 1)`` in total, half (floored) at the start, and
the output is ``s * (in - 1) + k - pad``; VALID pads nothing. That is exactly
builtin TRANSPOSE_CONV (with bias) given that output size, which is how the
tests check it against LiteRT (tests/real_models/tflite_rewrite.py rewrites
the custom op into the builtin op). One TOSA TRANSPOSE_CONV2D with the bias
and a negative out_pad for the crop.

The other MediaPipe custom ops (Landmarks2TransformMatrix,
TransformTensorBilinear, TransformLandmarks, MaxPoolingWithArgmax2D,
MaxUnpooling2D) have no LiteRT kernel to check a conversion against, so they
stay unsupported and are listed by the driver's unsupported-op error.
"""
from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Iterable, Optional

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.conv_weights import acc_type, as_value, bias, shape_of, weight
from ....lowering.window import cut_rows, transpose_out_pad
from ....symbolic.constraints import Kind
from .. import flat
from ..reader import ConvertError
from ..registry import custom_converter
from .common import float_input

if TYPE_CHECKING:
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext

_PADDING = {1: "SAME", 2: "VALID"}   # TfLitePadding (tensorflow/lite/core/c/builtin_op_data.h)


def read_custom_options(data: bytes, indices: Optional[Iterable[int]] = None) -> dict:
    """``{operator index: custom_options bytes}`` of the main subgraph's operators at ``indices`` (the driver
    passes its custom ops; None: every operator) that carry options (schema: Model field 2 subgraphs, SubGraph
    field 3 operators, Operator field 5 custom_options), read directly as the reader reads the rest
    (:mod:`..flat`): the generated classes took ~7 ms for a model of 200 ops, and opening every operator
    again ~0.4 ms."""
    found = {}
    operators = next(flat.root(data).tables(2))
    for i in range(operators.length(3)) if indices is None else indices:
        values = operators.element(3, i).array(5, np.uint8)
        if values is not None and values.size > 0:
            found[i] = values.tobytes()
    return found


def transpose_conv_params(options: bytes, what: str) -> tuple:
    """(padding name, stride_h, stride_w) from a ``TfLiteTransposeConvParams`` struct."""
    if len(options) < 12:
        raise ConvertError(f"{what} has {len(options)} bytes of custom options, not the 12 of "
                           "TfLiteTransposeConvParams (padding, stride_width, stride_height); the model is damaged")
    padding, stride_w, stride_h = struct.unpack_from("<iii", options)
    if padding not in _PADDING:
        raise ConvertError(f"{what} has padding {padding}, which is neither SAME (1) nor VALID (2)")
    if stride_w < 1 or stride_h < 1:
        raise ConvertError(f"{what} has strides ({stride_h}, {stride_w}); both must be >= 1")
    return _PADDING[padding], stride_h, stride_w


def _crop(size: int, k: int, s: int, padding: str) -> tuple:
    """Rows cut from the full transposed output ``(size - 1) * s + k`` at the start and at the end."""
    total = max(0, k - (size - 1) % s - 1) if padding == "SAME" else 0
    return total // 2, total - total // 2


def _custom_options(ctx: TfliteContext, node: OpReader, what: str) -> bytes:
    """The op's custom options: read for the main subgraph only (``ctx.custom_options``, set by the driver)."""
    graphs = getattr(ctx.model, "graphs", None)
    main = graphs[0] if graphs else ctx.model
    if getattr(ctx, "sub", main) is not main or not hasattr(ctx, "custom_options"):
        raise ConvertError(f"{what} is inside an IF/WHILE body; custom ops convert only in the main subgraph")
    return ctx.custom_options.get(node.info.index, b"")


@custom_converter("Convolution2DTransposeBias")
def convert_transpose_conv_bias(ctx: TfliteContext, node: OpReader) -> Converted:
    what = f"custom op Convolution2DTransposeBias '{node.name}'"
    if len(node.inputs) != 3 or None in node.inputs:
        raise ConvertError(f"{what} has {len(node.inputs)} inputs; it takes input, weights and bias")
    padding, stride_h, stride_w = transpose_conv_params(_custom_options(ctx, node, what), what)
    x = float_input(ctx, node, 0)
    if x.type.rank != 4:
        raise ConvertError(f"{what} needs a rank 4 (NHWC) input, got rank {x.type.rank}")
    h, w_in = x.type.shape[1], x.type.shape[2]
    if not (isinstance(h, int) and isinstance(w_in, int)):
        raise ConvertError(f"{what}: input height and width must be static (the SAME padding depends on them "
                           "modulo the stride); bind them first")
    dtype, acc = x.type.dtype, acc_type(x)
    w = weight(ctx, node.inputs[1], dtype, 4)
    c_out, kh, kw, c_in = shape_of(w)
    ctx.require(Kind.EQ, x.type.shape[3], c_in, "Convolution2DTransposeBias input channels = weight dim 3")
    crops = [_crop(h, kh, stride_h, padding), _crop(w_in, kw, stride_w, padding)]
    b = bias(ctx, node.inputs[2], c_out, dtype)
    out_pad, cut = transpose_out_pad(crops, (0, 0), (kh, kw))
    y = ctx.b.emit(Op.TRANSPOSE_CONV2D, x, as_value(ctx, w), as_value(ctx, b),
                   attrs=A.TransposeConv2dAttrs(out_pad, (stride_h, stride_w), acc))
    return cut_rows(ctx, y, cut)
