"""Quantized FULLY_CONNECTED and BATCH_MATMUL.

FULLY_CONNECTED is a 1x1 TOSA CONV2D over the flattened input ``[rows, 1, 1,
K]`` with the ``[O, 1, 1, K]`` weights: CONV2D takes the bias (int32, or int48
for int16x8) and both zero points, which MATMUL + ADD could not do for the
int48 accumulator. The per-tensor kernels subtract the weight zero point; the
per-channel kernel does not.

**FULLY_CONNECTED rounding.** Under BUILTIN_REF, LiteRT runs the overloads of
reference_integer_ops::FullyConnected / FullyConnectedPerChannel (int8, int16)
and reference_ops::FullyConnected (uint8) that take the float scales: every
form computes ``static_cast<int32_t>(round(double(acc) * eff))`` with
``eff = double(s_in) * double(s_w[c]) / double(s_out)``, then adds the output
zero point and clamps. So the product is rounded to a double first and
``round`` then goes half away from zero. (The Q31 ``MultiplyByQuantizedMultiplier``
kernels are only the optimized path's.) The probes in test_q_matmul confirm
each part: ties away from zero, the all-double ``eff`` for per-tensor models,
and ``fl(acc * eff)`` reaching ``k + 1/2`` from below (``acc = 3``,
``eff = fl(1/6)`` gives 1).

No single RESCALE is that function: its multiplier has 31 bits, ``eff`` 53, so
``round(acc * m / 2**s)`` differs from it near half-integers. tosaconv builds
it exactly for every int32 accumulator, on the magnitude ``|acc|`` (round and
the double product are both odd functions):

* ``y(a) = #{k >= 1 : a >= T_k}`` for ``a >= 0``, with ``T_k`` the least ``a``
  with ``fl(a * eff) >= k - 1/2``; :func:`_threshold` computes it exactly.
* A SINGLE_ROUND RESCALE of ``a`` (the nearest 31-bit multiplier, or a
  neighbour if that needs fewer corrections) has the thresholds
  ``T'_k = ceil((k - 1/2) * 2**s / m)``. Where ``T'_k != T_k``, a correction
  ``+[a >= T_k] - [a >= T'_k]`` is added (GREATER_EQUAL against per-channel
  constants, SELECT, REDUCE_SUM). 8-bit outputs practically never need one;
  int16 outputs with multipliers below ~1e-2 need some (their thresholds run
  up to ``32769 / eff``, where 31 bits no longer place them all), and more
  than MAX_TERMS per channel is refused.
* ``|acc|`` is first clamped to ``T_top``, where the output saturates on both
  sides (``top`` = the largest distance from the zero point to a range end,
  plus one), so only ``k <= top`` need checking; then the sign is put back
  (NEGATE, SELECT), the zero point added and the result saturated by a unit
  RESCALE, and a fused activation clamps as CalculateActivationRangeQuantized.

**--npu-fast** replaces all of that by one DOUBLE_ROUND RESCALE, TFLite's
``MultiplyByQuantizedMultiplier`` with the 31-bit multiplier of ``eff``
(what its optimized kernels run). Its two roundings and the multiplier's
``2**-31`` relative error keep it within ``0.5 + 2**-15`` of ``acc * eff``
for every unsaturated output, and LiteRT's value is within ``0.5`` of it
(plus the double product's ``2**-52``), so the two differ by at most 1 in the
last place (tests/importers/tflite/test_npu_fast.py measures it against LiteRT
at the thresholds). On the int16x8 sample it saves Vela about 1.3k cycles.

The int48 accumulator of int16x8 is narrowed to int32 first (q_accum.narrow48);
LiteRT keeps int64 there, so an accumulator beyond int32 whose product would
not saturate anyway is not followed; nor is an accumulator of exactly -2**31
(clamped to -2**31 + 1) in the unlikely event a threshold sits at 2**31, nor
a product beyond int32, which LiteRT casts with undefined behaviour (tosaconv
saturates it).

BATCH_MATMUL (reference_ops::BatchMatMul, int8 with int32 accumulators and
int16 with int64 ones) subtracts both zero points, has no fused activation
and uses GetQuantizedConvolutionMultipler with MultiplyByQuantizedMultiplier;
TOSA MATMUL takes the zero points (int8) and gives int32 (int48 for int16).
uint8 has no TFLite kernel.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....symbolic.constraints import Kind
from ....lowering.dims import reshape
from ....lowering.matmul import broadcast_batch, to_batch
from .. import quant
from ....lowering.int32_ops import identity_rescale
from ..qmath import to_unsigned
from ..reader import ConvertError
from ..registry import converter
from . import q_accum as Q
from ..schema import tflite
from .nn import fc_result, fc_rows, swap_last

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext


@converter("FULLY_CONNECTED", options="FullyConnectedOptions", form="quantized")
def convert_q_fully_connected(ctx: TfliteContext, node: OpReader) -> Converted:
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
    acc_t = DType.INT48 if form == "int16x8" else DType.INT32
    rows = fc_rows(ctx, x, k)
    n = rows.type.shape[0]
    x4 = reshape(ctx, rows, [n, 1, 1, k])
    attrs = A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), acc_t, x_zp, w_zp)
    acc = ctx.b.emit(Op.CONV2D, x4, ctx.b.const(np.ascontiguousarray(w.reshape(o, 1, 1, k))),
                     Q.bias(ctx, node, 2, o, acc_t), attrs=attrs)
    acc = reshape(ctx, Q.narrow48(ctx, acc), [n, o])
    reals = Q.conv_reals(x_info, scales, out)
    if ctx.model.npu_fast:
        q = Q.QOperands(form, x4, x_zp, None, w_zp, reals, DType.INT32)
        return fc_result(ctx, node, x, Q.finish(ctx, node, acc, q, Q.act_range(node, out)), k)
    return fc_result(ctx, node, x, _round_double_product(ctx, node, acc, reals, Q.act_range(node, out)), k)


INT32_MAX = (1 << 31) - 1
MAX_TERMS = 4096           # corrections per channel before the comparison tensor gets too large


def _threshold(k: int, num: int, den: int) -> int:
    """The least ``a >= 0`` with ``fl(a * eff) >= k - 1/2`` (``k >= 1``, ``eff = num / den`` a double).

    The product rounds to nearest, ties to even; it reaches the half-integer ``h`` once ``a * eff``
    is at least ``h`` minus half the spacing of the doubles just below ``h`` (``2**(e - 53)`` in
    ``h``'s binade ``[2**e, 2**(e+1))``, ``2**-55`` below 0.5); ``h``'s significand is even, so that
    midpoint itself rounds up to ``h``. Here ``h - gap`` is ``top_num / 2**55``."""
    odd = 2 * k - 1
    gap = 1 if k == 1 else 1 << odd.bit_length()          # 2**(e - 53) * 2**55, e = bit_length(odd) - 2
    top_num = (odd << 54) - gap
    return -((-top_num * den) // (num << 55))


def _rescale_threshold(k: int, m: int, s: int) -> int:
    """The least ``a >= 0`` that a SINGLE_ROUND RESCALE by ``m / 2**s`` takes to ``k`` or more."""
    return (((2 * k - 1) << (s - 1)) + m - 1) // m


def _plan(real: float, top: int, where: str) -> tuple:
    """RESCALE multiplier and shift, magnitude clamp and corrections ``[(threshold, +-1)]`` that give
    ``round(fl(a * real))`` exactly for ``0 <= a <= clamp`` (see the module docstring). Of the 31-bit
    multipliers next to ``real * 2**shift`` it takes the one needing the fewest corrections (a ratio
    like 1/6 whose double lies just below it makes every tie land on ``k + 1/2``: rounding its
    multiplier up matches them all)."""
    num, den = real.as_integer_ratio()
    shift = min(31 - math.frexp(real)[1], 62)
    if shift < 2:
        raise ConvertError(f"{where}: output multiplier {real!r} (input scale * weight scale / output scale) "
                           "is too large for TOSA's RESCALE (it must be below 2**29); requantize the output")
    m = ((num << shift) * 2 + den) // (2 * den)     # floor(num * 2**shift / den + 1/2), den > 0
    if m >= 1 << 31:
        m, shift = m >> 1, shift - 1
    if m < 2:
        raise ConvertError(f"{where}: output multiplier {real!r} is below 2**-62, too small for TOSA's "
                           "RESCALE; requantize the output with a smaller scale")
    clamp = min(_threshold(top, num, den), INT32_MAX)
    best = (m, shift, clamp, _terms(real, top, m, shift, clamp))
    for other in (m + 1, m - 1):
        if best[3] and other < 1 << 31:
            best = min(best, (other, shift, clamp, _terms(real, top, other, shift, clamp)), key=lambda p: len(p[3]))
    if len(best[3]) > MAX_TERMS:
        raise ConvertError(f"{where}: output multiplier {real!r} is so small that matching LiteRT's "
                           f"double rounding would take {len(best[3])} threshold corrections per output (the "
                           f"limit is {MAX_TERMS}); requantize with a larger output multiplier (a smaller "
                           "output scale)")
    return best


def _terms(real: float, top: int, m: int, shift: int, clamp: int) -> list:
    """The corrections ``(T_k, +1), (T'_k, -1)`` where the RESCALE's threshold ``T'_k`` misses ``T_k``."""
    num, den = real.as_integer_ratio()
    last = top + int(real) + 2                                    # past every threshold up to the clamp
    ks = np.arange(1, last + 1, dtype=np.float64)
    exact, approx = (ks - 0.5) / real, (ks - 0.5) * (2.0 ** shift / m)
    lo, hi = np.minimum(exact, approx), np.maximum(exact, approx)
    pad = hi * 2.0 ** -40 + 2.0 ** -20                            # far above float64's error here
    near = np.nonzero((np.floor(hi + pad) >= np.ceil(lo - pad)) & (lo - pad <= clamp))[0] + 1
    terms = []
    for k in near.tolist():
        t, r = _threshold(k, num, den), _rescale_threshold(k, m, shift)
        if t != r:
            terms += [(t, 1)] * (t <= clamp) + [(r, -1)] * (r <= clamp)
    return terms


def _round_double_product(ctx: TfliteContext, node: OpReader, acc: Value, reals: np.ndarray, bounds: tuple) -> Value:
    """``clamp(round(fl(acc * real)) + zp)`` of the int32 ``[rows, O]`` accumulator into the output tensor."""
    info = node.output_infos[0]
    lo, hi = quant.value_range(info)
    zp = quant.zero_point(info)
    where = f"FULLY_CONNECTED '{info.name}'"
    plans = [_plan(float(r), max(hi - zp, zp - lo) + 1, where) for r in np.reshape(reals, -1)]
    clamp = np.array([[p[2] for p in plans]], np.int32)
    a = ctx.b.emit(Op.MINIMUM, ctx.b.emit(Op.MAXIMUM, acc, ctx.b.const(-clamp)), ctx.b.const(clamp))
    mag = ctx.b.emit(Op.ABS, a)
    attrs = A.RescaleAttrs(tuple(p[0] for p in plans), tuple(p[1] for p in plans), 0, 0, scale32=True,
                           rounding_mode="SINGLE_ROUND", per_channel=len(plans) > 1, output_dtype=DType.INT32)
    ym = _corrected(ctx, a, ctx.b.emit(Op.RESCALE, mag, attrs=attrs), [p[3] for p in plans])
    negative = ctx.b.emit(Op.GREATER, ctx.b.const(np.zeros((1, 1), np.int32)), a)
    y = ctx.b.emit(Op.SELECT, negative, ctx.b.emit(Op.NEGATE, ym, attrs=A.NegateAttrs(0, 0)), ym)
    shift = 128 if quant.unsigned(info) else 0
    y = identity_rescale(ctx, y, quant.QUANT_TYPES[info.type_name], output_zp=zp - shift)   # + zp, saturated
    if tuple(bounds) != (lo, hi):
        y = ctx.b.emit(Op.CLAMP, y, attrs=A.ClampAttrs(bounds[0] - shift, bounds[1] - shift))
    return to_unsigned(ctx, y) if shift else y


def _corrected(ctx: TfliteContext, a: Value, ym: Value, terms: list) -> Value:
    """``ym`` plus ``sum(w * [|a| >= t])`` over each channel's ``(t, w)`` terms (none: ``ym`` itself).

    A correction is a pair ``+[a >= T_k] - [a >= T'_k]``, which is ``+-1`` on ``[min, max)`` of the two
    thresholds; they are almost always neighbours, and then one EQUAL against ``min`` replaces the two
    GREATER_EQUALs (half the comparison tensor, which is what an NPU pays for). The hits are CAST to
    int32 and multiplied by their signs, which Vela fuses into the comparison (a SELECT would cost two
    more passes)."""
    if not max(len(t) for t in terms):
        return ym
    singles = [_as_points(channel) for channel in terms]
    op, columns = (Op.EQUAL, singles) if all(p is not None for p in singles) else (Op.GREATER_EQUAL, terms)
    width = max(len(t) for t in columns)
    at = np.zeros((len(columns), width), np.int32)
    w = np.zeros((len(columns), width), np.int32)                # padding: weight 0
    for c, channel in enumerate(columns):
        for j, (t, sign) in enumerate(channel):
            at[c, j], w[c, j] = t, sign
    n, o = a.type.shape
    # a second ABS of the clamped accumulator: reshaping the RESCALE's own input (two readers) makes Vela
    # insert a copy, which costs far more than the ABS
    mag = reshape(ctx, ctx.b.emit(Op.ABS, a), [n, o, 1])
    hit = ctx.b.emit(op, mag, ctx.b.const(at[None]))
    step = ctx.b.emit(Op.MUL, ctx.b.emit(Op.CAST, hit, attrs=A.CastAttrs(DType.INT32)), ctx.b.const(w[None]),
                      attrs=A.MulAttrs(0))
    total = ctx.b.emit(Op.REDUCE_SUM, step, attrs=A.AxisAttrs(2))
    return ctx.b.emit(Op.ADD, ym, reshape(ctx, total, [n, o]))


def _as_points(channel: list) -> Optional[list]:
    """A channel's ``(t, +-1)`` terms as ``(value, +-1)`` points ``w * [a == value]``, or None when some
    correction covers more than one value (or is a lone term cut by the clamp)."""
    if len(channel) % 2:
        return None
    points = []
    for (t, w1), (r, w2) in zip(channel[::2], channel[1::2]):
        if w1 + w2 or abs(t - r) != 1:
            return None
        points.append((min(t, r), w1 if t < r else w2))
    # both are step functions that change only next to their thresholds: compare them there
    probe = np.array(sorted({t + d for t, _ in channel for d in (-1, 0, 1)}), np.int64)
    steps = sum(w * (probe >= t) for t, w in channel)
    spikes = sum(w * (probe == v) for v, w in points)
    return points if np.array_equal(steps, spikes) else None


BMM_FORMS = {("INT8", "INT8"): "int8", ("INT16", "INT16"): "int16x8"}


@converter("BATCH_MATMUL", options="BatchMatMulOptions", form="quantized")
def convert_q_batch_matmul(ctx: TfliteContext, node: OpReader) -> Converted:
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
    batch = broadcast_batch(ctx, batch_a, batch_b)
    prod = ctx.b.emit(Op.MATMUL, to_batch(ctx, a, batch), to_batch(ctx, b, batch),
                      attrs=A.MatMulAttrs(a_zp, b_zp))
    real = Q.legacy_real(a_info, quant.scale(b_info), out)
    q = Q.QOperands(form, a, a_zp, None, b_zp, real, prod.type.dtype)
    y = Q.finish(ctx, node, prod, q, quant.value_range(out))
    return reshape(ctx, y, [*batch, m, n])
