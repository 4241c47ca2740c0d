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

import numpy as np
import onnx

from ....ir import attrs as A
from ....ir.ops import Op
from ..reader import NodeReader
from ..registry import converter
from .conv import convert_conv
from ....lowering.matmul import matmul
from .qdq_fold import fold_quantize, integer_accumulator
from ....lowering.dims import reshape
from .qparams import as_float32, is_value, read_params, unit_params
from .qtypes import INT32, QParams, check_supported, data_type, qtype_of, read_qtensor
from .quant import quantize, recorded_dequantize


def _data(ctx, node, index: int, zp_index: int):
    name = node.inputs[index]
    qtype = qtype_of(ctx, node.input(zp_index)) or qtype_of(ctx, name)
    check_supported(qtype, f"{node.op_type} input {index}")
    return read_qtensor(ctx, name, qtype)


def _dq(ctx, node, index: int, scale_index: int, zp_index: int, axis=None):
    data = _data(ctx, node, index, zp_index)
    params = read_params(ctx, node, scale_index, zp_index, data_type(data), axis=axis)
    return recorded_dequantize(ctx, data, params), params


def _unit_dq(ctx, node, index: int, zp_index: int, axis: int):
    data = _data(ctx, node, index, zp_index)
    return recorded_dequantize(ctx, data, unit_params(ctx, node.input(zp_index), data_type(data), axis))


def _float_node(ctx, node, op_type: str, values) -> NodeReader:
    """A float ``op_type`` node on IR ``values`` (None = absent), with ``node``'s attributes."""
    names = []
    for i, v in enumerate(values):
        names.append("" if v is None else f"{node.name}::{op_type}:{i}")
        if v is not None:
            ctx.values[names[-1]] = v
    proto = onnx.helper.make_node(op_type, names, [f"{node.name}::{op_type}:out"], name=node.name)
    proto.attribute.extend(node.node.attribute)
    return NodeReader(proto, ctx.opset)


def _requantize(ctx, node, y, scale_index: int, zp_index: int):
    qtype = qtype_of(ctx, node.input(zp_index)) or qtype_of(ctx, node.inputs[0])
    check_supported(qtype, f"{node.op_type} output")
    params = read_params(ctx, node, scale_index, zp_index, y.type)
    folded = fold_quantize(ctx, y, params, qtype)
    return folded if folded is not None else quantize(ctx, y, params, qtype)


@converter("QLinearConv", since=10)
def convert_qlinear_conv(ctx, node):
    x, x_params = _dq(ctx, node, 0, 1, 2)
    w, w_params = _dq(ctx, node, 3, 4, 5, axis=0)
    b = _bias(ctx, node, x_params, w_params) if node.input(8) else None
    y = convert_conv(ctx, _float_node(ctx, node, "Conv", [x, w, b]))
    return _requantize(ctx, node, y, 6, 7)


def _bias(ctx, node, x_params: QParams, w_params: QParams):
    """The int32 bias, dequantized with scale ``x_scale * w_scale`` (per output channel)."""
    name = node.input(8)
    data = read_qtensor(ctx, name, INT32)
    scale = _bias_scale(ctx, x_params, w_params)
    count = scale.size if isinstance(scale, np.ndarray) else int(np.prod(scale.type.static_shape()))
    return recorded_dequantize(ctx, data, QParams(scale, None, 0 if count > 1 else None))


def _bias_scale(ctx, x_params: QParams, w_params: QParams):
    if not is_value(x_params.scale) and not is_value(w_params.scale):
        return (x_params.scale.reshape(-1) * w_params.scale.reshape(-1)).astype(np.float32)
    xs, ws = (_flat_f32(ctx, p.scale) for p in (x_params, w_params))
    return ctx.b.emit(Op.MUL, xs, ws, attrs=A.MulAttrs(0))


def _flat_f32(ctx, p):
    p = as_float32(ctx, p)
    if isinstance(p, np.ndarray):
        return ctx.b.const(p.reshape(-1))
    return reshape(ctx, p, [int(np.prod(p.type.static_shape()))])


@converter("QLinearMatMul", since=10)
def convert_qlinear_matmul(ctx, node):
    a, _ = _dq(ctx, node, 0, 1, 2, axis=-2)
    b, _ = _dq(ctx, node, 3, 4, 5, axis=-1)
    return _requantize(ctx, node, matmul(ctx, a, b), 6, 7)


@converter("MatMulInteger", since=10)
def convert_matmul_integer(ctx, node):
    a = _unit_dq(ctx, node, 0, 2, -2)
    b = _unit_dq(ctx, node, 1, 3, -1)
    return integer_accumulator(ctx, matmul(ctx, a, b), "MatMulInteger")


@converter("ConvInteger", since=10)
def convert_conv_integer(ctx, node):
    x = _unit_dq(ctx, node, 0, 2, 1)
    w = _unit_dq(ctx, node, 1, 3, 0)
    y = convert_conv(ctx, _float_node(ctx, node, "Conv", [x, w]))
    return integer_accumulator(ctx, y, "ConvInteger")
