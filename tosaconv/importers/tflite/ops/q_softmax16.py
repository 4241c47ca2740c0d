"""Quantized int16 TFLite SOFTMAX in TOSA integer ops, bit-exact with ``reference_ops::SoftmaxInt16``.

LiteRT's BUILTIN_REF SOFTMAX for int16 input and output (activations.cc
``SoftmaxPrepare``, tflite/kernels/internal/reference/softmax.h
``SoftmaxInt16``) works per row of the last axis:

1. Prepare: two 513-entry int16 LUTs from ``LUTPopulate<int16_t>`` with
   ``double`` arithmetic (common.h ``LUTPopulateInt16``: 512 segments, each
   sample rounded and biased by half its midpoint error, plus a last entry):
   ``exp`` on ``[-10, 0]`` and ``1 / (1 + x)`` on ``[0, 1]``, both with output
   range ``[-1, 1]``. The input multiplier is ``QuantizeMultiplier(float(scale *
   beta) / (10 / 65535))`` (the product of two floats is a float).
2. ``d = x - max(row)``; ``sym = clamp(MultiplyByQuantizedMultiplier(d) + 32767)``
   to int16; ``E = lookup(exp_lut, sym)``, where ``generic_int16_table_lookup``
   is ``lut[256 + (v >> 7)] + ((slope * (v & 127) + 64) >> 7)``.
3. ``sum = sum(E)``; ``c = clz(sum)``; ``s = ((sum << (c - 1)) + 2**13) >> 14``;
   ``R = lookup(one_over_one_plus_x_lut, clamp(s - 98304))``.
4. ``out = clamp((E * R + 2**(30 - c)) >> (31 - c), 0, 32767)``.

**TOSA form.** TOSA's int16 TABLE reads ``table[(v + 32768) >> 7]`` and
interpolates over the same 128-step segments with 7 fraction bits left in its
int32 result, so TFLite's lookup is exactly TABLE followed by a rounding
ARITHMETIC_RIGHT_SHIFT by 7 (round half up is ``+ 64 >> 7``). Step 2's
scaling is a DOUBLE_ROUND RESCALE (TFLite's double rounding, see
:mod:`..quant`); step 3's shifts stay below ``2**31`` because ``sum << (c - 1)``
has its top bit at 30, and the rounding shift avoids ``+ 2**13`` overflowing;
``E * R < 2**30``. Refused as LiteRT refuses them: zero points other than 0
and an output scale other than 1/32768 (within 0.1%). Also refused: ``scale *
beta >= 5`` (TFLite's ``d << shift`` overflows int32 there).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.int32_ops import Int32Ops, identity_rescale
from ..qmath import F32, fit_rescale_input
from ..quant import quantize_multiplier, rescale, scale, zero_point
from ..reader import ConvertError

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

_RANGE = 32767 - (-32768)


def lut_populate_int16(transform: Callable[[float], float], input_scale: float, input_zp: int, output_scale: float, output_zp: int) -> np.ndarray:
    """common.h ``LUTPopulateInt16<double>``: the 513 int16 entries, in double with C's round."""
    input_min = input_scale * (-32768 - input_zp)
    input_max = input_scale * (32767 - input_zp)
    output_min = output_scale * (-32768 - output_zp)
    output_max = output_scale * (32767 - output_zp)
    step = (input_max - input_min) / 512
    half_step = step / 2
    inv = float(65536) / (output_max - output_min)
    entries = []
    for i in range(512):
        val = transform(input_min + i * step)
        mid = transform(input_min + i * step + half_step)
        nxt = transform(input_min + (i + 1) * step)
        sample = _round(val * inv)
        interpolated = _round((nxt * inv + _round(val * inv)) / 2)
        bias = _round((interpolated - _round(mid * inv)) / 2)
        entries.append(min(max(sample - bias, -32768.0), 32767.0))
    entries.append(min(max(_round(transform(input_max) * inv), -32768.0), 32767.0))
    return np.array(entries, dtype=np.float64).astype(np.int16)


def _round(x: float) -> float:
    """C's ``std::round`` on a double (halves away from zero)."""
    return math.copysign(math.floor(abs(x) + 0.5), x)


def exp_lut() -> np.ndarray:
    """activations.cc: exp on [-10, 0] (input scale 10/65535, zero point 32767), outputs over [-1, 1]."""
    return lut_populate_int16(math.exp, 10.0 / _RANGE, 32767, 2.0 / _RANGE, 0)


def one_over_one_plus_x_lut() -> np.ndarray:
    """activations.cc: 1 / (1 + x) on [0, 1] (input scale 1/65535, zero point -32768), outputs over [-1, 1]."""
    return lut_populate_int16(lambda v: 1.0 / (1.0 + v), 1.0 / _RANGE, -32768, 2.0 / _RANGE, 0)


def input_rescale(input_scale: float, beta: float) -> float:
    """The real multiplier of ``d``: ``float(scale * beta)`` widened, over ``10 / 65535``."""
    real = float(F32(input_scale) * F32(beta)) / (10.0 / 65535.0)
    if quantize_multiplier(real)[1] >= 16:
        raise ConvertError(f"int16 SOFTMAX with input scale * beta = {real * 10 / 65535:.6g} >= 5 is not "
                           "supported: TFLite's kernel shifts the difference left by 16 or more, overflowing int32")
    return real


def _check(x_info: TensorInfo, y_info: TensorInfo) -> None:
    for info in (x_info, y_info):
        if zero_point(info) != 0:
            raise ConvertError(f"int16 SOFTMAX needs zero point 0 on '{info.name}', got {zero_point(info)} "
                               "(LiteRT's SoftmaxPrepare refuses it)")
    if abs(F32(scale(y_info)) - F32(1.0 / 32768)) > F32(0.001 / 32768):
        raise ConvertError(f"int16 SOFTMAX needs output scale 1/32768 (TFLite refuses {scale(y_info)!r}); "
                           "requantize the output")


def _lookup(ctx: TfliteContext, ops: Int32Ops, sym16: Value, table: np.ndarray) -> Value:
    """TFLite's ``generic_int16_table_lookup``: TOSA TABLE, then the ``+ 64 >> 7`` rounding."""
    return ops.rdbpot(ctx.b.emit(Op.TABLE, sym16, attrs=A.TableAttrs(table)), 7)


def convert_int16(ctx: TfliteContext, node: OpReader) -> Value:
    """SoftmaxInt16 (called by :func:`.q_softmax.convert_q_softmax` for int16 input)."""
    x_info, y_info = node.input_infos[0], node.output_infos[0]
    _check(x_info, y_info)
    real = input_rescale(scale(x_info), float(node.opt("Beta")))
    x = ctx.tensor(node.inputs[0])
    ops, axis = Int32Ops(ctx, x.type.rank), x.type.rank - 1
    values = identity_rescale(ctx, x, DType.INT32)
    diff = fit_rescale_input(ctx, ops.sub(values, ops.reduce(Op.REDUCE_MAX, values, axis)), real, 65535)
    scaled = rescale(ctx, diff, real, DType.INT32)            # MultiplyByQuantizedMultiplier (double rounding)
    sym = ops.maximum(ops.add(scaled, 32767), -32768)         # the int16 clamp (RESCALE's input bound)
    exp = _lookup(ctx, ops, identity_rescale(ctx, sym, DType.INT16), exp_lut())
    total = ops.reduce(Op.REDUCE_SUM, exp, axis)
    headroom = ops.clz(total)
    shifted = ops.rdbpot(ops.shift_left(total, ops.sub(headroom, 1)), 14)
    reciprocal = _lookup(ctx, ops, identity_rescale(ctx, ops.sub(shifted, 98304), DType.INT16),
                         one_over_one_plus_x_lut())
    product = ctx.b.emit(Op.MUL, exp, reciprocal, attrs=A.MulAttrs(0))
    result = ops.maximum(ops.rdbpot(product, ops.sub(31, headroom)), 0)
    return identity_rescale(ctx, result, DType.INT16)
