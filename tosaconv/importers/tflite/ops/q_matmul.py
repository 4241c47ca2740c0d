"""Quantized FULLY_CONNECTED and BATCH_MATMUL.

FULLY_CONNECTED is a 1x1 TOSA CONV2D over the flattened input ``[rows, 1, 1,
K]`` with the ``[O, 1, 1, K]`` weights: CONV2D takes the bias (int32, or int48
for int16x8) and both zero points, which MATMUL + ADD could not do for the
int48 accumulator. Rounding follows reference_integer_ops::FullyConnected /
FullyConnectedPerChannel and reference_ops::FullyConnected (uint8): all end
with ``MultiplyByQuantizedMultiplier`` (int32 or int64 form, see q_accum).
The per-tensor multiplier is GetQuantizedConvolutionMultipler's (scales'
product in float, divided in double), the per-channel one
PopulateConvolutionQuantizationParams' (all double). The per-tensor kernels
subtract the weight zero point; the per-channel kernel does not.

BATCH_MATMUL (reference_ops::BatchMatMul, int8 with int32 accumulators and
int16 with int64 ones) subtracts both zero points, has no fused activation
and uses GetQuantizedConvolutionMultipler; TOSA MATMUL takes the zero points
(int8) and gives int32 (int48 for int16). uint8 has no TFLite kernel.
"""
from __future__ import annotations

import numpy as np
import tflite

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....symbolic.constraints import Kind
from ...onnx.ops.common import reshape
from ...onnx.ops.matmul import _broadcast_batch, _to_batch
from .. import quant
from ..reader import ConvertError
from ..registry import converter
from . import q_accum as Q
from .nn import fc_result, fc_rows, swap_last


@converter("FULLY_CONNECTED", options="FullyConnectedOptions", kind="quantized")
def convert_q_fully_connected(ctx, node):
    if node.opt("WeightsFormat") != tflite.FullyConnectedOptionsWeightsFormat.DEFAULT:
        raise ConvertError("FULLY_CONNECTED with shuffled weights (SHUFFLED4x16INT8) is not supported; "
                           "re-export the model with the default weights format")
    x_info, w_info = node.input_infos[0], node.input_infos[1]
    form = Q.form_of(node, x_info, w_info)
    w0 = ctx.const(node.inputs[1])
    if w0 is None or np.ndim(w0) != 2:
        raise ConvertError("quantized FULLY_CONNECTED needs constant 2-D [out, in] weights")
    o, k = np.shape(w0)
    x, x_zp = Q.activation(ctx, node.inputs[0], x_info)
    w, w_zp, scales = Q.weights(ctx, node, 1, form, o, 0, keep_zp=True)
    out = node.output_infos[0]
    # LiteRT's per-channel and int16x8 kernels: double multipliers and one rounding (found by
    # test_multiplier_formula / test_fully_connected); per-tensor int8/uint8: the legacy path.
    newer = scales.size > 1 or form == "int16x8"
    reals = Q.conv_reals(x_info, scales, out) if newer else Q.legacy_real(x_info, scales[0], out)
    acc_t = DType.INT48 if form == "int16x8" else DType.INT32
    q = Q.QOperands(form, x, x_zp, w, w_zp, reals, acc_t)
    rows = fc_rows(ctx, x, k)
    x4 = reshape(ctx, rows, [rows.type.shape[0], 1, 1, k])
    attrs = A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), acc_t, x_zp, w_zp)
    acc = ctx.b.emit(Op.CONV2D, x4, ctx.b.const(np.ascontiguousarray(w.reshape(o, 1, 1, k))),
                     Q.bias(ctx, node, 2, o, acc_t), attrs=attrs)
    y = Q.finish(ctx, node, acc, q, Q.act_range(node, out), "single" if newer else "double")
    return fc_result(ctx, node, x, reshape(ctx, y, [rows.type.shape[0], o]), k)


BMM_FORMS = {("INT8", "INT8"): "int8", ("INT16", "INT16"): "int16x8"}


@converter("BATCH_MATMUL", options="BatchMatMulOptions", kind="quantized")
def convert_q_batch_matmul(ctx, node):
    a_info, b_info, out = node.input_infos[0], node.input_infos[1], node.output_infos[0]
    form = Q.form_of(node, a_info, b_info, BMM_FORMS)
    a, a_zp = Q.activation(ctx, node.inputs[0], a_info)
    b, b_zp = Q.activation(ctx, node.inputs[1], b_info)
    if node.opt("AdjX"):
        a = swap_last(ctx, a)
    if node.opt("AdjY"):
        b = swap_last(ctx, b)
    (*batch_a, m, k), (*batch_b, k2, n) = a.type.shape, b.type.shape
    ctx.require(Kind.EQ, k, k2, "BATCH_MATMUL inner dims")
    batch = _broadcast_batch(ctx, batch_a, batch_b)
    prod = ctx.b.emit(Op.MATMUL, _to_batch(ctx, a, batch), _to_batch(ctx, b, batch),
                      attrs=A.MatMulAttrs(a_zp, b_zp))
    real = Q.legacy_real(a_info, quant.scale(b_info), out)
    q = Q.QOperands(form, a, a_zp, None, b_zp, real, prod.type.dtype)
    y = Q.finish(ctx, node, prod, q, quant.value_range(out))
    return reshape(ctx, y, [*batch, m, n])
