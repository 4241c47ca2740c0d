"""Quantized TFLite activations computed in fixed point per element, emitted as one TOSA TABLE.

HARD_SWISH (``reference_ops::HardSwish``, int16 gemmlowp arithmetic),
LEAKY_RELU (``reference_ops::QuantizeLeakyRelu``: two double-rounding
``MultiplyByQuantizedMultiplier`` branches; a negative alpha's branch is
``-MBQM(x, |m|)`` as LiteRT 2.3 computes it) and RSQRT (elementwise.cc
``RsqrtEvalQuantizedInt8`` with ``GetInvSqrtQuantizedMultiplierExp``) compute
each int8/uint8 output from its input alone. tosaconv runs that integer code
for the 256 inputs (numpy, :mod:`tosaconv.lowering.gemmlowp`) and emits the results as a TABLE,
so the rounding of every step is TFLite's own, including the multipliers
``Prepare`` derives from float32 scale arithmetic (restated below in float32).
int16 LEAKY_RELU and RSQRT are routed to :mod:`.q_act16`; LiteRT has no int16
HARD_SWISH.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ....lowering import gemmlowp as G
from ..qtables import emit_int8_table, tflite_values
from ..quant import quantize_multiplier, scale, value_range, zero_point
from ..reader import ConvertError
from ..registry import converter
from .q_act16 import convert_leaky_relu16, convert_rsqrt16
from .q_lut import eight_bit_io

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import TfliteContext
    from ..node import OpReader
    from ..reader import TensorInfo

F = np.float32


def _int16_multiplier(real: float) -> tuple:
    """QuantizeMultiplier, then ``DownScaleInt32ToInt16Multiplier`` (activations.cc HardSwishPrepare)."""
    multiplier, exponent = quantize_multiplier(float(real))
    if multiplier >= (1 << 31) - 1 - (1 << 15):
        return 32767, exponent
    return (multiplier + (1 << 15)) >> 16, exponent


def _sat16(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -32768, 32767)


def hard_swish_values(values: np.ndarray, x: TensorInfo, y: TensorInfo) -> np.ndarray:
    """``reference_ops::HardSwish<int8_t/uint8_t>`` on the TFLite ``values`` of input ``x``."""
    hires_scale = F(1.0 / 128.0) * F(scale(x))
    out_m, out_e = _int16_multiplier(hires_scale / F(scale(y)))
    if out_e > 0:
        raise ConvertError(f"quantized HARD_SWISH needs output scale >= input scale / 128 (TFLite's kernel "
                           f"refuses {scale(y)!r} for input scale {scale(x)!r})")
    relu_m, relu_e = _int16_multiplier(hires_scale / (F(3.0) / F(32768.0)))
    hires = G.wrap(G.wrap(values - zero_point(x), 16) * 128, 16)
    preshift = G.srdhm(hires, out_m, bits=16)
    reluish = _sat16(hires << (relu_e - 1)) if relu_e > 0 else hires
    reluish = G.srdhm(reluish, relu_m, bits=16)
    if relu_e > 0:
        reluish = _sat16(reluish * 2)
    elif relu_e < 0:
        reluish = G.rdbpot(reluish, -relu_e)
    reluish = (reluish + (1 << 15)) >> 1
    product = np.where((reluish == preshift) & (reluish == -32768), 32767, G.c_div(reluish * preshift, 1 << 15))
    out = G.wrap(G.rdbpot(product, -out_e) + zero_point(y), 16)
    return np.clip(out, *value_range(y))


def leaky_relu_values(values: np.ndarray, x: TensorInfo, y: TensorInfo, alpha: float) -> np.ndarray:
    """``reference_ops::QuantizeLeakyRelu`` with LeakyReluPrepare's float32 multipliers."""
    identity = quantize_multiplier(float(F(scale(x)) / F(scale(y))))
    alpha_real = float(F(scale(x)) * F(alpha) / F(scale(y)))
    diff = values - zero_point(x)
    if alpha_real < 0:   # LiteRT 2.3 computes -(|alpha| * x), as for int16 (see q_act16); checked at ties
        negative = -G.multiply_by_quantized_multiplier(diff, *quantize_multiplier(-alpha_real))
    else:
        negative = G.multiply_by_quantized_multiplier(diff, *quantize_multiplier(alpha_real))
    out = np.where(diff >= 0, G.multiply_by_quantized_multiplier(diff, *identity), negative) + zero_point(y)
    return np.clip(out, *value_range(y))


def _inv_sqrt(value: int) -> tuple:
    """``GetInvSqrtQuantizedMultiplierExp(value, kReverseShift)`` for one positive int32."""
    if value <= 1:
        return G.I32_MAX, 0
    shift = 11
    while value >= 1 << 29:
        value //= 4
        shift += 1
    pairs = (32 - value.bit_length() - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    half_input = G.rdbpot(value >> 1, 1)
    x = G.arr(1 << 28)
    for _ in range(5):
        x3 = G.sat_shift_left(G.srdhm(G.srdhm(x, x), x), 6)
        x = G.sat_shift_left(G.wrap(G.srdhm((1 << 28) + (1 << 27), x) - G.srdhm(half_input, x3)), 3)
    inv = int(G.srdhm(x, 1518500250))
    if shift < 0:
        inv, shift = int(G.wrap(inv << -shift)), 0
    return inv, -shift


def rsqrt_values(values: np.ndarray, x: TensorInfo, y: TensorInfo) -> np.ndarray:
    """elementwise.cc ``RsqrtEvalQuantizedInt8`` (kShift 20); inputs below the zero point, which
    TFLite rejects at run time, give the maximum."""
    multiplier, shift = quantize_multiplier(1.0 / float(np.sqrt(F(scale(x))) * F(scale(y))))
    lo, hi = value_range(y)
    out = []
    for diff in (values - zero_point(x)).tolist():
        if diff <= 0:
            out.append(hi)
            continue
        inv, inv_shift = _inv_sqrt(diff)
        data = G.multiply_by_quantized_multiplier(1, inv, inv_shift + 20)
        out.append(int(G.multiply_by_quantized_multiplier(data, multiplier, shift - 20)) + zero_point(y))
    return np.clip(np.array(out, dtype=np.int64), lo, hi)


def _table(ctx: TfliteContext, node: OpReader, compute: Callable[[np.ndarray, TensorInfo, TensorInfo], np.ndarray], types: Sequence[str] = ("INT8", "UINT8")) -> Value:
    x, y = eight_bit_io(node, types)
    return emit_int8_table(ctx, ctx.tensor(node.inputs[0]), y, compute(tflite_values(x), x, y))


@converter("HARD_SWISH", form="quantized")
def convert_q_hard_swish(ctx: TfliteContext, node: OpReader) -> Converted:
    return _table(ctx, node, hard_swish_values)


@converter("LEAKY_RELU", options="LeakyReluOptions", form="quantized")
def convert_q_leaky_relu(ctx: TfliteContext, node: OpReader) -> Converted:
    alpha = float(node.opt("Alpha"))
    if node.input_infos[0].type_name == "INT16":
        return convert_leaky_relu16(ctx, node, alpha)
    return _table(ctx, node, lambda v, x, y: leaky_relu_values(v, x, y, alpha))


@converter("RSQRT", form="quantized")
def convert_q_rsqrt(ctx: TfliteContext, node: OpReader) -> Converted:
    if node.input_infos[0].type_name == "INT16":
        return convert_rsqrt16(ctx, node)     # int16 RSQRT fills a float LUT instead
    return _table(ctx, node, rsqrt_values, types=("INT8",))
