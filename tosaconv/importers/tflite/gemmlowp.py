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
"""
from __future__ import annotations

import numpy as np

I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1


def arr(x) -> np.ndarray:
    return np.asarray(x, dtype=np.int64)


def wrap(x, bits: int = 32) -> np.ndarray:
    """Two's complement wrap-around, as C's int32 (or int16) arithmetic does in practice."""
    half = 1 << (bits - 1)
    return ((arr(x) + half) & ((1 << bits) - 1)) - half


def c_div(n, d: int) -> np.ndarray:
    """C integer division by a positive ``d`` (truncates toward zero)."""
    n = arr(n)
    q = np.abs(n) // d
    return np.where(n >= 0, q, -q)


def srdhm(a, b, bits: int = 32) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingDoublingHighMul`` for int32 (or int16 with ``bits=16``)."""
    a, b = arr(a), arr(b)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    ab = a * b
    nudge = np.where(ab >= 0, 1 << (bits - 2), 1 - (1 << (bits - 2)))
    return np.where((a == b) & (a == lo), hi, c_div(ab + nudge, 1 << (bits - 1)))


def rdbpot(x, exponent) -> np.ndarray:
    """gemmlowp ``RoundingDivideByPOT``: a right shift rounding half away from zero."""
    x, exponent = arr(x), arr(exponent)
    mask = (np.int64(1) << exponent) - 1
    threshold = (mask >> 1) + (x < 0)
    return (x >> exponent) + ((x & mask) > threshold)


def sat_shift_left(x, exponent: int, bits: int = 32) -> np.ndarray:
    """gemmlowp ``SaturatingRoundingMultiplyByPOT<exponent>`` for a positive exponent."""
    x = arr(x)
    threshold = (1 << (bits - 1 - exponent)) - 1
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return np.where(x > threshold, hi, np.where(x < -threshold, lo, x << exponent))


def multiply_by_quantized_multiplier(x, multiplier: int, shift: int) -> np.ndarray:
    """TFLite's double-rounding ``MultiplyByQuantizedMultiplier`` (x * 2**left wraps like int32)."""
    left, right = max(shift, 0), max(-shift, 0)
    return rdbpot(srdhm(wrap(arr(x) << left), multiplier), right)


def _exp_on_quarter_interval(a) -> np.ndarray:
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


def exp_on_negative_values(a, integer_bits: int) -> np.ndarray:
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

