"""Quantized TFLite LOG_SOFTMAX in TOSA integer ops, bit-exact with LiteRT's reference kernels.

LiteRT's BUILTIN_REF LOG_SOFTMAX (activations.cc ``LogSoftmaxPrepare<kReference>``)
runs ``reference_integer_ops::LogSoftmax`` for int8 and ``reference_ops::LogSoftmax``
for uint8; both compute, per row of the last axis, in gemmlowp fixed point:

1. Prepare: ``PreprocessLogSoftmaxScalingExp(beta=1, input_scale, 5)`` gives the
   SOFTMAX scaling ``(multiplier, left_shift)`` and ``diff_min``
   (:func:`.q_softmax.softmax_scaling`) plus the reverse scaling
   ``QuantizeMultiplierSmallerThanOneExp(2**(31 - left_shift) / multiplier)``.
2. ``d = x - max(row)``; ``q5(d) = MultiplyByQuantizedMultiplier(d, multiplier,
   left_shift)`` (Q5.26); ``sum = sum over d >= diff_min of
   RoundingDivideByPOT(exp_on_negative_values<5>(q5(d)), 12)`` (Q12.19).
3. ``L = log_x_for_x_greater_than_or_equal_to_1<5>(sum)`` (Q5.26).
4. ``adj = max(diff_min - 1, MultiplyByQuantizedMultiplier(L + INT32_MIN,
   reverse_multiplier, -reverse_shift))``.
5. ``out = d > adj ? clamp(RoundingDivideByPOT(q5(d) - L, 22) + zp) : min``
   with ``zp`` 127 (int8) or 255 (uint8).

**TOSA form.** Step 2's exp term depends on ``d`` only: a 256-entry table, as in
:mod:`.q_softmax`. ``q5(d)`` is LOGICAL_LEFT_SHIFT then MUL with shift 31
(gemmlowp's SRDHM) on ``max(d, diff_min)``. Step 3 runs in :class:`FixedPointOps`
on the per-row sum (CLZ, shifts by tensor amounts, MUL with shift 31, the
Newton-Raphson reciprocal of :class:`tosaconv.lowering.int32_ops.Int32Ops`). Plain TOSA ADD/SUB
are exact there because nothing wraps: the mantissa ``r`` lies in
``[~1.52e9, 2**31)`` (``r_b`` equals the mantissa only when ``0.707 * mantissa``
keeps its headroom), so ``q`` is in ``[-5.8e8, 6.9e8]``, every SRDHM shrinks its
operand, and ``denom`` stays in ``[0, 2**31)``, the reciprocal's domain. The
emitted ops equal the numpy transcription :func:`tosaconv.lowering.gemmlowp.log_x_ge_1` on every
sum below ``2**21`` and on 40M random sums; ``L >= 0`` (``L(2**19) = 0``), so
``L + INT32_MIN`` does not wrap.
Step 5's difference is floored at ``L + INT32_MIN + 1``: kept elements never go
below it (the converter checks at import that TFLite's own ``q5(d) - L`` cannot
wrap for the model's scale), and dropped elements are replaced by SELECT.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

import numpy as np

from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering import gemmlowp as G
from ....lowering.int32_ops import Int32Ops, identity_rescale, input_as_int32, int32_to_output
from ....lowering.tables import int32_table
from ..quant import quantize_multiplier, scale, zero_point
from ..reader import ConvertError
from ..registry import converter
from .q_softmax import exp_of_differences, softmax_scaling

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..node import OpReader
    from ..context import TfliteContext

INPUT_BITS, ACCUM_BITS, OUTPUT_BITS = 5, 12, 4
OUT_SCALE = 16.0 / 256
_OUT = {"INT8": (127, -128), "UINT8": (255, 0)}     # (fixed zero point, type minimum)
I32_MAX, I32_MIN = G.I32_MAX, G.I32_MIN
MAX_DEPTH = 4095       # 4096 elements at the row maximum sum to 2**31: the Q12.19 sum would wrap


class FixedPointOps(Int32Ops):
    """:class:`Int32Ops` plus the signed and data-dependent gemmlowp steps the two kernels need."""

    def greater(self, a: Union[Value, int], b: Union[Value, int]) -> Value:
        return self._bin(Op.GREATER, a, b)

    def select(self, cond: Value, a: Union[Value, int], b: Union[Value, int]) -> Value:
        return self.b.emit(Op.SELECT, cond, self._v(a), self._v(b))

    def rdbpot_signed(self, x: Value, exponent: Union[int, Value]) -> Value:
        """gemmlowp ``RoundingDivideByPOT`` (half away from zero) of any ``x > INT32_MIN``.

        For ``exponent > 0`` it is ``floor((x + 2**(e-1) - (x < 0)) / 2**e)``: TOSA's rounding
        ARITHMETIC_RIGHT_SHIFT (half up) of ``x - 1`` for negative ``x``. ``exponent`` is an
        int or a per-row tensor (where a zero exponent must leave ``x`` alone)."""
        if isinstance(exponent, int) and exponent == 0:
            return x
        sign = self.rdbpot_floor(x, 31)                      # -1 for negative x, else 0
        if not isinstance(exponent, int):
            sign = self.bit_and(sign, self.sub(0, self.minimum(exponent, 1)))
        return self.rdbpot(self.add(x, sign), exponent)

    def multiply_by_quantized_multiplier(self, x: Value, multiplier: int, shift: int) -> Value:
        """TFLite's ``MultiplyByQuantizedMultiplier`` with a constant multiplier and exponent."""
        if shift > 0:
            x = self.shift_left(x, shift)
        return self.rdbpot_signed(self.srdhm(x, multiplier), max(-shift, 0))


_LOG_2, _SQRT_SQRT_HALF, _SQRT_HALF = 1488522236, 1805811301, 1518500250
_ALPHA_N, _ALPHA_D, _ALPHA_I, _ALPHA_F = 117049297, 127690142, 1057819769, 638450708
_ACC = OUTPUT_BITS + 2                      # log_x's kAccumIntegerBits for 5 output integer bits
_QUARTER = 1 << (29 - _ACC)                 # Rescale<6>(one_quarter)


def log_x_ge_1(ops: FixedPointOps, total: Value) -> Value:
    """``log_x_for_x_greater_than_or_equal_to_1<5>`` of a Q12.19 ``total`` in ``[2**19, 2**31)``.

    Follows tflite/kernels/internal/common.h step by step; every saturation the kernel can
    reach is spelled out, the others are proven absent (module docstring)."""
    ca = ops.clz(total)                                            # 1..12
    mantissa = ops.shift_left(total, ops.sub(ca, 1))              # exact: < 2**31
    r_a = ops.saturating_double(ops.srdhm(mantissa, _SQRT_HALF))
    a_adj = ops.add(ops.shift_left(ops.sub(ACCUM_BITS, ca), 31 - _ACC), _QUARTER)
    hb = ops.sub(ops.clz(ops.srdhm(total, _SQRT_HALF)), 1)         # ca - 1 or ca
    r_b = ops.select(ops.greater(hb, ops.sub(ca, 1)), I32_MAX, mantissa)   # total << ca saturates
    b_adj = ops.sub(ops.shift_left(ops.sub(ACCUM_BITS, hb), 31 - _ACC), _QUARTER)
    r, pow_adj = ops.minimum(r_a, r_b), ops.maximum(a_adj, b_adj)
    p = ops.add(ops.rdbpot_floor(r, 1), (_SQRT_SQRT_HALF >> 1) + 1)   # RoundingHalfSum, r >= 0, odd constant
    q1 = ops.sub(r, _SQRT_SQRT_HALF)
    q = ops.add(q1, q1)
    sq = ops.srdhm(q, q)
    num = ops.add(ops.srdhm(q, r), ops.srdhm(ops.srdhm(q, sq), _ALPHA_N))
    inner = ops.add(ops.add(q, _ALPHA_I), ops.srdhm(sq, _ALPHA_D))
    denom = ops.add(ops.srdhm(p, inner), ops.srdhm(q, _ALPHA_F))
    scaled = ops.srdhm(ops.rdbpot_signed(num, _ACC), ops.one_over_one_plus_x(denom))
    total_log = ops.add(ops.srdhm(pow_adj, _LOG_2), scaled)
    return ops.shift_left(total_log, _ACC - (OUTPUT_BITS + 1))    # Rescale<5>: |value| < 2**30, no saturation


def log_softmax_params(input_scale: float) -> tuple:
    """Prepare's ``(multiplier, left_shift, reverse_multiplier, reverse_shift, diff_min)``."""
    if input_scale * (1 << (31 - INPUT_BITS)) <= 1.0:
        raise ConvertError(f"quantized LOG_SOFTMAX with input scale {input_scale!r} is not supported: TFLite's "
                           "kernel requires scale * 2**26 > 1 (QuantizeMultiplierGreaterThanOne aborts otherwise)")
    multiplier, left_shift, diff_min = softmax_scaling(1.0, input_scale)
    rev_multiplier, rev_exponent = quantize_multiplier((1 << (31 - left_shift)) / float(multiplier))
    return multiplier, left_shift, rev_multiplier, -rev_exponent, diff_min


def _check_no_wrap(params: tuple) -> None:
    """Refuse a scale for which TFLite's ``q5(d) - L`` could wrap for a kept element."""
    multiplier, left_shift, rev_m, rev_s, diff_min = params
    d = np.arange(max(diff_min, -255), 1, dtype=np.int64)
    q5 = G.srdhm(d << left_shift, multiplier)
    worst_log = q5 - I32_MIN + 1                      # the smallest L with q5(d) - L < INT32_MIN
    adj = np.maximum(diff_min - 1, G.rdbpot(G.srdhm(G.wrap(worst_log + I32_MIN), rev_m), rev_s))
    max_log = int(G.log_x_ge_1(np.int64(I32_MAX), ACCUM_BITS, INPUT_BITS))
    if np.any((worst_log <= max_log) & (d > adj)):
        raise ConvertError("quantized LOG_SOFTMAX: for this input scale TFLite's kernel can overflow int32 "
                           "in q5(d) - log_sum; requantize the input")


def static_depth(x: Value, op: str, limit: int, why: str) -> int:
    """The last dim of IR value ``x``, which must be static and at most ``limit``."""
    depth = x.type.shape[-1] if x.type.rank else 1
    if not isinstance(depth, int) or depth > limit:
        raise ConvertError(f"quantized {op} needs a static last dim of at most {limit} (got {depth}): {why}")
    return depth


def _check(node: OpReader) -> tuple:
    x, y = node.input_infos[0], node.output_infos[0]
    if x.type_name not in _OUT or y.type_name != x.type_name:
        raise ConvertError(f"quantized LOG_SOFTMAX from {x.type_name} to {y.type_name} is not supported: "
                           "LiteRT's kernel takes int8 or uint8 with the same output type")
    zp = _OUT[y.type_name][0]
    if scale(y) != OUT_SCALE or zero_point(y) != zp:
        raise ConvertError(f"quantized LOG_SOFTMAX on {y.type_name} needs output scale 16/256 and zero point "
                           f"{zp} (TFLite refuses scale {scale(y)!r}, zero point {zero_point(y)}); "
                           "requantize the output")
    return x, y


@converter("LOG_SOFTMAX", form="quantized")
def convert_q_log_softmax(ctx: TfliteContext, node: OpReader) -> Converted:
    x_info, y_info = _check(node)
    params = log_softmax_params(scale(x_info))
    _check_no_wrap(params)
    multiplier, left_shift, rev_m, rev_s, diff_min = params
    x = ctx.tensor(node.inputs[0])
    static_depth(x, "LOG_SOFTMAX", MAX_DEPTH, "TFLite's Q12.19 sum of exps can wrap beyond that")
    ops, axis = FixedPointOps(ctx, x.type.rank), x.type.rank - 1
    values = input_as_int32(ctx, x, x_info.type_name)
    diff = ops.sub(values, ops.reduce(Op.REDUCE_MAX, values, axis))
    index = identity_rescale(ctx, diff, DType.INT8, output_zp=127)
    exps = G.rdbpot(exp_of_differences(1.0, scale(x_info)), ACCUM_BITS)   # Rescale<12>, 0 below diff_min
    total = ops.reduce(Op.REDUCE_SUM, int32_table(ctx, index, exps), axis)
    log_sum = log_x_ge_1(ops, total)
    floor_q5 = ops.add(log_sum, I32_MIN)                           # L + INT32_MIN (L >= 0: no wrap)
    adj = ops.maximum(ops.multiply_by_quantized_multiplier(floor_q5, rev_m, -rev_s), diff_min - 1)
    q5 = ops.srdhm(ops.shift_left(ops.maximum(diff, diff_min), left_shift), multiplier)
    shifted = ops.sub(ops.maximum(q5, ops.add(floor_q5, 1)), log_sum)
    zp, lowest = _OUT[y_info.type_name]
    out = ops.add(ops.rdbpot_signed(shifted, 31 - INPUT_BITS - OUTPUT_BITS), zp)
    return int32_to_output(ctx, ops.select(ops.greater(diff, adj), out, lowest), y_info.type_name)
