"""A numpy transcription of the gemmlowp fixed-point functions TFLite's integer kernels call.

The quantized SOFTMAX, LOG_SOFTMAX, HARD_SWISH, RSQRT... kernels of TFLite
(``tflite/kernels/internal/reference/*.h``) compute with gemmlowp's
``fixedpoint/fixedpoint.h``: ``SaturatingRoundingDoublingHighMul`` (SRDHM),
``RoundingDivideByPOT``, saturating shifts, and ``exp_on_negative_values``
(the reciprocal runs in TOSA ops: :mod:`.int32_ops`). tosaconv evaluates them at import time
to fill TABLE entries (a kernel's per-element work on an int8 input, or on an
int8-ranged difference, is a function of 256 values), so they are restated
here bit for bit on int64 numpy arrays: C's truncating division, the nudges,
the saturation thresholds and int32 wrap-around of plain additions included.
Every function takes and returns int64 arrays holding int32 (or int16) values.
gemmlowp is no TFLite format detail, so any importer that lowers such
fixed-point arithmetic can use it; which kernel calls what stays documented
at the TFLite converters.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


def arr(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def wrap(x: ArrayLike, bits: int = 32) -> np.ndarray:
    """Two's complement wrap-around, as C's int32 (or int16) arithmetic does in practice."""
    half = 1 << (bits - 1)
    return ((arr(x) + half) & ((1 << bits) - 1)) - half


def c_div(n: ArrayLike, d: int) -> np.ndarray:
    """C integer division by a positive ``d`` (truncates toward zero)."""
    n = arr(n)
    q = np.abs(n) // d
    return np.where(n >= 0, q, -q)


def srdhm(a: ArrayLike, b: ArrayLike, bits: int = 32) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` for int32 (or int16 with ``bits=16``)."""
    a, b = arr(a), arr(b)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    ab = a * b
    nudge = np.where(ab >= 0, 1 << (bits - 2), 1 - (1 << (bits - 2)))
    return np.where((a == b) & (a == lo), hi, c_div(ab + nudge, 1 << (bits - 1)))


def rdbpot(x: ArrayLike, exponent: ArrayLike) -> np.ndarray:
    """gemmlowp ``RoundingDivideByPOT``: a right shift rounding half away from zero."""
    x, exponent = arr(x), arr(exponent)
    mask = (np.int64(1) << exponent) - 1
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def sat_shift_left(x: ArrayLike, exponent: int, bits: int = 32) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingMultiplyByPOT<exponent>`` for a positive exponent."""
    x = arr(x)
    threshold = (1 << (bits - 1 - exponent)) - 1
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return np.where(x > threshold, hi, np.where(x < -threshold, lo, x << exponent))


def multiply_by_quantized_multiplier(x: ArrayLike, multiplier: int, shift: int) -> np.ndarray:
    """TFLite's double-rounding ``MultiplyByQuantizedMultiplier`` (x * 2**left wraps like int32)."""
    left, right = max(shift, 0), max(-shift, 0)
    return rdbpot(srdhm(wrap(arr(x) << left), multiplier), right)


def _exp_on_quarter_interval(a: ArrayLike) -> np.ndarray:
    """``exp_on_interval_between_negative_one_quarter_and_0_excl`` (Q0.31 in and out)."""
    constant_term, one_third = 1895147668, 715827883
    x = wrap(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    x4_over_4 = rdbpot(x4, 2)
    poly = rdbpot(wrap(srdhm(wrap(x4_over_4 + x3), one_third) + x2), 1)
    return wrap(constant_term + srdhm(constant_term, wrap(x + poly)))


_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535),
           (3, 720401), (4, 242))


def exp_on_negative_values(a: ArrayLike, integer_bits: int) -> np.ndarray:
    """gemmlowp ``exp_on_negative_values`` of a Q(integer_bits) value: exp(a) in Q0.31."""
    a = arr(a)
    frac = 31 - integer_bits
    quarter = 1 << (frac - 2)
    a_mod = wrap((a & (quarter - 1)) - quarter)
    result = _exp_on_quarter_interval(sat_shift_left(a_mod, integer_bits) if integer_bits else a_mod)
    remainder = wrap(a_mod - a)
    for exponent, multiplier in _BARREL:
        if integer_bits > exponent:
            bit = (remainder & (1 << (frac + exponent))) != 0
            result = np.where(bit, srdhm(result, multiplier), result)
    if integer_bits > 5:
        result = np.where(a < -(1 << (36 - integer_bits)), 0, result)
    return np.where(a == 0, I32_MAX, result)



def sat_shift_left_param(x: ArrayLike, exponent: ArrayLike) -> np.ndarray:
    """TFLite's ``SaturatingRoundingMultiplyByPOTParam`` for exponents ``>= 0`` (scalar or per element)."""
    x, exponent = arr(x), arr(exponent)
    threshold = (np.int64(1) << (31 - exponent)) - 1
    shifted = np.where(x > threshold, I32_MAX, np.where(x < -threshold, I32_MIN, x << exponent))
    return np.where(exponent == 0, x, shifted)


def rounding_half_sum(a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """gemmlowp ``RoundingHalfSum`` for int32: ``(a + b + sign) / 2`` in int64, C division."""
    total = arr(a) + arr(b)
    return c_div(total + np.where(total >= 0, 1, -1), 2)


def one_over_one_plus_x(a: ArrayLike) -> np.ndarray:
    """gemmlowp ``one_over_one_plus_x_for_x_in_0_1`` (Q0.31 in and out), with its saturations."""
    half_denominator = rounding_half_sum(a, I32_MAX)
    x = wrap(1515870810 + srdhm(half_denominator, -1010580540))
    for _ in range(3):
        one_minus = wrap((1 << 29) - srdhm(half_denominator, x))
        x = wrap(x + sat_shift_left(srdhm(x, one_minus), 2))
    return sat_shift_left(x, 1)


def clz32(x: ArrayLike) -> np.ndarray:
    """``CountLeadingZeros`` of the uint32 bits of ``x`` (32 for 0)."""
    bits = arr(x) & 0xFFFFFFFF
    return 32 - np.frexp(bits.astype(np.float64))[1].astype(np.int64)   # exact: bits < 2**53


_LOG_2, _SQRT_SQRT_HALF, _SQRT_HALF = 1488522236, 1805811301, 1518500250
_ALPHA_N, _ALPHA_D, _ALPHA_I, _ALPHA_F = 117049297, 127690142, 1057819769, 638450708


def log_x_ge_1(x: ArrayLike, input_bits: int, output_bits: int) -> np.ndarray:
    """TFLite's ``log_x_for_x_greater_than_or_equal_to_1<output_bits>`` of a Q(input_bits) value (raw)."""
    accum_bits = output_bits + 1
    quarter = rdbpot(1 << 29, accum_bits)
    z_a = arr(x)
    ca = clz32(z_a)
    r_a = sat_shift_left_param(srdhm(sat_shift_left_param(z_a, ca - 1), _SQRT_HALF), 1)
    a_adj = np.clip(sat_shift_left_param(input_bits - ca, 31 - accum_bits) + quarter, I32_MIN, I32_MAX)
    hb = clz32(srdhm(z_a, _SQRT_HALF)) - 1
    r_b = sat_shift_left_param(z_a, hb)
    b_adj = np.clip(sat_shift_left_param(input_bits - hb, 31 - accum_bits) - quarter, I32_MIN, I32_MAX)
    r, pow_adj = np.minimum(r_a, r_b), np.maximum(a_adj, b_adj)
    p = rounding_half_sum(r, _SQRT_SQRT_HALF)
    q = wrap(2 * wrap(r - _SQRT_SQRT_HALF))
    sq = srdhm(q, q)
    num = wrap(srdhm(q, r) + srdhm(srdhm(q, sq), _ALPHA_N))
    denom = wrap(srdhm(p, wrap(wrap(_ALPHA_I + q) + srdhm(_ALPHA_D, sq))) + srdhm(_ALPHA_F, q))
    total = wrap(srdhm(pow_adj, _LOG_2) + srdhm(rdbpot(num, accum_bits), one_over_one_plus_x(denom)))
    return sat_shift_left(total, accum_bits - output_bits)
