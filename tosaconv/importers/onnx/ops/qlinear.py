"""Converters for QLinearConv, QLinearMatMul, ConvInteger and MatMulInteger.

Each op is converted as the QDQ pattern ONNX defines it by: its integer
inputs are dequantized (and recorded as DequantizeLinear results; scale 1
for the ``*Integer`` ops), the float Conv or MatMul converter builds the
float op, so layout, padding, groups and batch broadcasting are decided in
one place, and the QDQ folding (:mod:`.qdq_fold`) turns it into integer
TOSA. A QLinear op whose scales or zero points are known only at run time
stays float (dequantize, compute, QuantizeLinear), which is ONNX's
definition up to float rounding. ConvInteger and MatMulInteger must be exact,
so they are integer or refused: a MatMul with run-time zero points subtracts
them in int16 and runs an int16 MATMUL (int48 accumulator, rescaled to int32
exactly); a ConvInteger with a run-time zero point, per-channel zero points
whose centered weights do not fit int8, or a grouped (not depthwise)
convolution is refused, because TOSA convolutions take one constant zero
point per operand.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....lowering.limits import Limit, LimitKind
from ..registry import converter, publish
from .conv import convert_conv
from ....lowering.matmul import matmul
from .qdq_fold import integer_accumulator
from .qlinear_base import bias_scale, dequantize_input, float_node, requantize, unit_dequantize
from .qtypes import INT32, QParams, read_qtensor
from .quant import recorded_dequantize

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader


@converter("QLinearConv", since=10)
def convert_qlinear_conv(ctx: ImportContext, node: NodeReader) -> Converted:
    x, x_params = dequantize_input(ctx, node, 0, 1, 2)
    w, w_params = dequantize_input(ctx, node, 3, 4, 5, axis=0)
    b = _bias(ctx, node, x_params, w_params) if node.input(8) else None
    y = convert_conv(ctx, float_node(ctx, node, "Conv", [x, w, b]))
    return requantize(ctx, node, y, 6, 7)


def _bias(ctx: ImportContext, node: NodeReader, x_params: QParams, w_params: QParams) -> Value:
    """The int32 bias, dequantized with scale ``x_scale * w_scale`` (per output channel)."""
    name = node.input(8)
    data = read_qtensor(ctx, name, INT32)
    scale = bias_scale(ctx, x_params, w_params)
    count = scale.size if isinstance(scale, np.ndarray) else int(np.prod(scale.type.static_shape()))
    return recorded_dequantize(ctx, data, QParams(scale, None, 0 if count > 1 else None))


@converter("QLinearMatMul", since=10)
def convert_qlinear_matmul(ctx: ImportContext, node: NodeReader) -> Converted:
    a, _ = dequantize_input(ctx, node, 0, 1, 2, axis=-2)
    b, _ = dequantize_input(ctx, node, 3, 4, 5, axis=-1)
    return requantize(ctx, node, matmul(ctx, a, b), 6, 7)


@converter("MatMulInteger", since=10)
def convert_matmul_integer(ctx: ImportContext, node: NodeReader) -> Converted:
    a = unit_dequantize(ctx, node, 0, 2, -2)
    b = unit_dequantize(ctx, node, 1, 3, -1)
    return integer_accumulator(ctx, matmul(ctx, a, b), "MatMulInteger")


CONV_INTEGER_ZP = publish("ConvInteger", Limit(
    "zero-point-from-data", LimitKind.INPUT, "x_zero_point", ("computed from tensor data at run time",),
    "TOSA CONV2D takes its input zero point as a constant", "make x_zero_point an initializer"))


@converter("ConvInteger", since=10)
def convert_conv_integer(ctx: ImportContext, node: NodeReader) -> Converted:
    if node.input(2) and ctx.const(node.input(2)) is None:
        raise CONV_INTEGER_ZP.refuse(f"ConvInteger x_zero_point '{node.input(2)}'")
    x = unit_dequantize(ctx, node, 0, 2, 1)
    w = unit_dequantize(ctx, node, 1, 3, 0)
    y = convert_conv(ctx, float_node(ctx, node, "Conv", [x, w]))
    return integer_accumulator(ctx, y, "ConvInteger")
