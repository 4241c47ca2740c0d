"""Quantized TFLite SOFTMAX in TOSA integer ops, bit-exact with ``reference_ops::Softmax``.

LiteRT's BUILTIN_REF SOFTMAX for int8/uint8 input (activations.cc
``SoftmaxPrepare<kReference>``, tflite/kernels/internal/reference/softmax.h)
works per row of the last axis, in gemmlowp fixed point:

1. ``PreprocessSoftmaxScaling(beta, input_scale, 5)``: ``real = min(beta *
   scale * 2**26, 2**31 - 1)`` in double, ``QuantizeMultiplierGreaterThanOne``
   -> ``(multiplier, left_shift)``; ``diff_min = -floor(31 * 2**26 /
   2**left_shift)`` (``CalculateInputRadius``).
2. ``d = x - max(row)`` (in ``[-255, 0]``). For ``d >= diff_min``:
   ``E = exp_on_negative_values<5>(SRDHM(d << left_shift, multiplier))`` (Q0.31),
   else the element contributes nothing and outputs the type's minimum.
3. ``sum = sum(RoundingDivideByPOT(E, 12))`` (``Rescale<12>``: Q12.19).
4. ``GetReciprocal(sum, 12)``: ``c = clz(sum)``,
   ``scale = one_over_one_plus_x((sum << c) - 2**31)``, ``num_bits_over_unit = 12 - c``.
5. ``out = RoundingDivideByPOT(SRDHM(scale, E), num_bits_over_unit + 31 - bits)
   + min(OutputT)``, saturated (``bits`` = 8 or 16 for the output type).

**TOSA form.** Step 2 depends on ``d`` only, and ``d`` takes 256 values, so
``E`` (and the ``diff_min`` cut, as ``E = 0``) is a table computed at import
with :mod:`tosaconv.lowering.gemmlowp`: the int32 ``d + 127`` is RESCALEd to an int8 index and
:func:`tosaconv.lowering.tables.int32_table` looks ``E`` up bytewise. The rest is integer
TOSA: REDUCE_MAX/SUB in int32, ARITHMETIC_RIGHT_SHIFT with rounding for
``Rescale<12>`` and the final division (operands are non-negative, where
round-half-up equals gemmlowp's half-away-from-zero), REDUCE_SUM in int32,
CLZ, LOGICAL_LEFT_SHIFT and BITWISE_AND for the normalisation, the
Newton-Raphson reciprocal of :class:`tosaconv.lowering.int32_ops.Int32Ops` (MUL with shift 31
is SRDHM) and a final exact RESCALE that adds ``min(OutputT)`` and saturates.
The output's own scale and zero point do not enter the kernel (LiteRT checks
them for int8 output only: zero point -128, scale 1/256 within 0.1%).

int16 input (with int16 output) runs ``reference_ops::SoftmaxInt16``, a
different kernel with two interpolated LUTs: :mod:`.q_softmax16`.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering import gemmlowp as G
from ....lowering.int32_ops import Int32Ops, identity_rescale, input_as_int32, int32_to_output
from ....lowering.tables import int32_table
from ..quant import quantize_multiplier, scale, zero_point
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

SCALED_DIFF_BITS = 5
ACCUM_BITS = 12
_OUTPUTS = {"INT8": ("INT8", "INT16"), "UINT8": ("UINT8", "INT16"), "INT16": ("INT16",)}   # SoftmaxEval's pairs
_OUT_BITS = {"INT8": 8, "UINT8": 8, "INT16": 16}
_OUT_MIN = {"INT8": -128, "UINT8": 0, "INT16": -32768}


def softmax_scaling(beta: float, input_scale: float) -> tuple:
    """``PreprocessSoftmaxScaling`` and ``CalculateInputRadius``: (multiplier, left_shift, diff_min)."""
    real = min(float(beta) * float(input_scale) * (1 << (31 - SCALED_DIFF_BITS)), (1 << 31) - 1.0)
    multiplier, left_shift = quantize_multiplier(real)
    if left_shift < 0:
        raise ConvertError(f"quantized SOFTMAX with beta * input scale = {beta * input_scale!r} is too small: "
                           "TFLite's kernel requires beta * scale * 2**26 >= 0.5 (it aborts otherwise)")
    radius = math.floor(1.0 * ((1 << SCALED_DIFF_BITS) - 1) * (1 << (31 - SCALED_DIFF_BITS)) / (1 << left_shift))
    return multiplier, left_shift, -radius


def exp_of_differences(beta: float, input_scale: float) -> np.ndarray:
    """Step 2 for ``d = -255..0`` (TABLE order of the index ``d + 127``): Q0.31 exp, 0 below diff_min."""
    multiplier, left_shift, diff_min = softmax_scaling(beta, input_scale)
    diff = np.arange(-255, 1, dtype=np.int64)
    scaled = G.srdhm(G.wrap(diff << left_shift), multiplier)
    return np.where(diff >= diff_min, G.exp_on_negative_values(scaled, SCALED_DIFF_BITS), 0)


def _check_types(node: OpReader) -> tuple[TensorInfo, TensorInfo]:
    x, y = node.input_infos[0], node.output_infos[0]
    if x.type_name not in _OUTPUTS or y.type_name not in _OUTPUTS[x.type_name]:
        raise ConvertError(f"quantized SOFTMAX from {x.type_name} to {y.type_name} is not supported: LiteRT's "
                           "reference kernel takes int8 or uint8 input with the same type or int16 output, "
                           "and int16 input with int16 output")
    if y.type_name == "INT8" and (zero_point(y) != -128 or abs(scale(y) - 1 / 256) > 0.001 / 256):
        raise ConvertError(f"quantized SOFTMAX with int8 output needs scale 1/256 and zero point -128 (TFLite "
                           f"refuses scale {scale(y)!r}, zero point {zero_point(y)}); requantize the output")
    return x, y


@converter("SOFTMAX", options="SoftmaxOptions", form="quantized")
def convert_q_softmax(ctx: TfliteContext, node: OpReader) -> Converted:
    x_info, y_info = _check_types(node)
    if x_info.type_name == "INT16":
        from .q_softmax16 import convert_int16   # here: an int8 SOFTMAX need not load it (start-up, issue 13)
        return convert_int16(ctx, node)
    x = ctx.tensor(node.inputs[0])
    ops, axis = Int32Ops(ctx, x.type.rank), x.type.rank - 1
    values = input_as_int32(ctx, x, x_info.type_name)
    diff = ops.sub(values, ops.reduce(Op.REDUCE_MAX, values, axis))
    index = identity_rescale(ctx, diff, DType.INT8, output_zp=127)
    exp = int32_table(ctx, index, exp_of_differences(float(node.opt("Beta")), scale(x_info)))
    total = ops.reduce(Op.REDUCE_SUM, ops.rdbpot(exp, ACCUM_BITS), axis)
    headroom = ops.clz(total)
    reciprocal = ops.one_over_one_plus_x(ops.bit_and(ops.shift_left(total, headroom), (1 << 31) - 1))
    bits = _OUT_BITS[y_info.type_name]
    exponent = ops.minimum(ops.sub(ACCUM_BITS + 31 - bits, headroom), 31)
    unsaturated = ops.rdbpot(ops.srdhm(reciprocal, exp), exponent)
    return int32_to_output(ctx, unsaturated, y_info.type_name, _OUT_MIN[y_info.type_name])
