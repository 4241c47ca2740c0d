"""Quantized CONV_2D, DEPTHWISE_CONV_2D and TRANSPOSE_CONV: one TOSA convolution with zero points,
an int32 (int48 for int16x8) accumulator, then :func:`q_accum.finish`.

Rounding: every kernel followed here ends with ``MultiplyByQuantizedMultiplier``
(reference_integer_ops::ConvPerChannel / DepthwiseConvPerChannel /
TransposeConv, reference_ops::Conv / DepthwiseConv (uint8, kAwayFromZero) /
TransposeConv); the int32 form is a DOUBLE_ROUND RESCALE, the int64 form of
the int16x8 kernels the 16-bit RESCALE (see q_accum). Multipliers: int8 and
int16x8 use PopulateConvolutionQuantizationParams (``in * w[c] / out`` in
double); the uint8 kernels use GetQuantizedConvolutionMultipler (``in * w``
in float, then ``/ out`` in double). The geometry (SAME/VALID windows,
symbolic H/W, TRANSPOSE_CONV's output size) is the float converters'.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ..registry import converter
from . import q_accum as Q
from .nn import conv_groups, conv_window, depthwise_channels, grouped_conv

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader


def operands(ctx: TfliteContext, node: OpReader, xi: int, wi: int, channels: int, axis: int) -> Q.QOperands:
    """The activation (input ``xi``) and weights (input ``wi``, ``channels`` along ``axis``) of a conv."""
    x_info, w_info = node.input_infos[xi], node.input_infos[wi]
    form = Q.form_of(node, x_info, w_info)
    x, x_zp = Q.activation(ctx, node.inputs[xi], x_info)
    w, w_zp, scales = Q.weights(ctx, node, wi, form, channels, axis)
    out = node.output_infos[0]
    reals = Q.legacy_real(x_info, scales[0], out) if form == "uint8" else Q.conv_reals(x_info, scales, out)
    return Q.QOperands(form, x, x_zp, w, w_zp, reals, DType.INT48 if form == "int16x8" else DType.INT32)


def _channels(ctx: TfliteContext, node: OpReader, wi: int, axis: int) -> int:
    w = ctx.const(node.inputs[wi])
    return int(np.shape(w)[axis]) if w is not None else 0


@converter("CONV_2D", options="Conv2DOptions", form="quantized")
def convert_q_conv_2d(ctx: TfliteContext, node: OpReader) -> Converted:
    q = operands(ctx, node, 0, 1, _channels(ctx, node, 1, 0), 0)
    o, kh, kw, _ = q.w.shape
    groups = conv_groups(ctx, q.x, q.w)
    x, attrs = conv_window(ctx, node, q.x, (kh, kw), q.acc, float(q.x_zp))
    attrs = replace(attrs, input_zp=q.x_zp, weight_zp=q.w_zp)
    bounds = Q.act_range(node, node.output_infos[0])

    def finish(acc: Value, start: int, count: int) -> Value:
        reals = q.reals if np.size(q.reals) == 1 else q.reals[start:start + count]
        return Q.finish(ctx, node, acc, replace(q, reals=reals), bounds)
    return grouped_conv(ctx, x, q.w, Q.bias(ctx, node, 2, o, q.acc), attrs, groups, finish)


@converter("DEPTHWISE_CONV_2D", options="DepthwiseConv2DOptions", form="quantized")
def convert_q_depthwise_conv_2d(ctx: TfliteContext, node: OpReader) -> Converted:
    q = operands(ctx, node, 0, 1, _channels(ctx, node, 1, 3), 3)
    _, kh, kw, cm = q.w.shape
    c = depthwise_channels(ctx, q.x, cm)
    w = ctx.b.const(np.ascontiguousarray(q.w.reshape(kh, kw, c, cm // c)))
    x, attrs = conv_window(ctx, node, q.x, (kh, kw), q.acc, float(q.x_zp))
    attrs = replace(attrs, input_zp=q.x_zp, weight_zp=q.w_zp)
    acc = ctx.b.emit(Op.DEPTHWISE_CONV2D, x, w, Q.bias(ctx, node, 2, cm, q.acc), attrs=attrs)
    return Q.finish(ctx, node, acc, q, Q.act_range(node, node.output_infos[0]))


@converter("TRANSPOSE_CONV", options="TransposeConvOptions", form="quantized")
def convert_q_transpose_conv(ctx: TfliteContext, node: OpReader) -> Converted:
    from .conv_transpose import cut_result, transpose_geometry   # here: the other convs need none (start-up, issue 13)
    q = operands(ctx, node, 2, 1, _channels(ctx, node, 1, 0), 0)
    out_pad, cut, stride = transpose_geometry(ctx, node, q.x, q.w.shape)
    attrs = A.TransposeConv2dAttrs(out_pad, stride, q.acc, q.x_zp, q.w_zp)
    acc = ctx.b.emit(Op.TRANSPOSE_CONV2D, q.x, ctx.b.const(q.w), Q.bias(ctx, node, 3, q.w.shape[0], q.acc),
                     attrs=attrs)
    return Q.finish(ctx, node, cut_result(ctx, acc, cut), q, Q.act_range(node, node.output_infos[0]))
