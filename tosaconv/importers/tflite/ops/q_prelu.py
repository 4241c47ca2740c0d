"""Quantized TFLite PRELU in TOSA integer ops, bit-exact with ``reference_ops::Prelu``.

The kernel (tflite/kernels/internal/reference/prelu.h, multipliers from
activations.cc ``PreluPrepare``) computes per element, with ``xi = x - x_zp``::

    xi >= 0:  MultiplyByQuantizedMultiplier(xi, m1, s1) + out_zp       m1 ~ in_scale / out_scale
    else:     MultiplyByQuantizedMultiplier(xi * (alpha - alpha_zp), m2, s2) + out_zp
                                                     m2 ~ in_scale * alpha_scale / out_scale

then clamps. Both reals are float32 expressions converted to double, as in
``Prepare``. Alpha varies per element (usually per channel), so this is no
single-input table: tosaconv takes ``xi`` to int32, multiplies by the
constant ``alpha - alpha_zp`` (int32, broadcast), applies each multiplier
with a DOUBLE_ROUND RESCALE to int32 (== MultiplyByQuantizedMultiplier, see
:mod:`..quant`), SELECTs on ``xi >= 0`` and adds the output zero point while
saturating into the output type. int16 input (with an int8 alpha, as LiteRT
reads it) is routed to :mod:`.q_act16`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.int32_ops import Int32Ops, input_as_int32, int32_to_output
from ..quant import rescale, scale, zero_point
from ..reader import ConvertError
from ..registry import converter
from .q_act16 import convert_prelu16
from .q_lut import eight_bit_io

if TYPE_CHECKING:
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext

F = np.float32


def _alpha(ctx: TfliteContext, node: OpReader, rank: int) -> np.ndarray:
    info = node.input_infos[1]
    alpha = ctx.const(node.inputs[1])
    if alpha is None:
        raise ConvertError("quantized PRELU with a non-constant alpha is not supported: tosaconv needs the "
                           "alpha values at import time; make alpha a constant tensor")
    if info.type_name != node.input_infos[0].type_name:
        raise ConvertError(f"quantized PRELU alpha is {info.type_name} but the input is "
                           f"{node.input_infos[0].type_name}; TFLite requires the same type")
    values = np.asarray(alpha).astype(np.int64) - zero_point(info)
    if values.ndim > rank:
        raise ConvertError(f"PRELU alpha of rank {values.ndim} does not broadcast to an input of rank {rank}")
    return values.reshape((1,) * (rank - values.ndim) + values.shape).astype(np.int32)


@converter("PRELU", form="quantized")
def convert_q_prelu(ctx: TfliteContext, node: OpReader) -> Converted:
    if node.input_infos[0].type_name == "INT16":
        return convert_prelu16(ctx, node)
    x_info, y_info = eight_bit_io(node)
    x = ctx.tensor(node.inputs[0])
    rank = x.type.rank
    ops = Int32Ops(ctx, rank)
    alpha = ctx.b.const(_alpha(ctx, node, rank))
    alpha_scale = scale(node.input_infos[1])
    xi = input_as_int32(ctx, x, x_info.type_name, zero_point(x_info))
    positive = rescale(ctx, xi, float(F(scale(x_info)) / F(scale(y_info))), DType.INT32)
    product = ctx.b.emit(Op.MUL, xi, alpha, attrs=A.MulAttrs(0))
    real = float(F(scale(x_info)) * F(alpha_scale) / F(scale(y_info)))
    negative = rescale(ctx, product, real, DType.INT32)
    is_positive = ctx.b.emit(Op.GREATER_EQUAL, xi, ops.const(0))
    out = ctx.b.emit(Op.SELECT, is_positive, positive, negative)
    return int32_to_output(ctx, out, y_info.type_name, zero_point(y_info))
