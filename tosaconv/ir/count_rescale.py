"""COUNT_RESCALE's parameters once its count is known: the RESCALE TFLite's quantized MEAN applies.

reference_ops::QuantizedMeanOrSum (reduce.cc, PrepareMeanOrSum) folds ``1 / n``
into the multiplier ``m`` (with exponent ``e``) in integers:
``s = min(floor(log2 n), 32, 31 + e)``, ``m' = (m << s) // n`` (int64,
truncated), ``e' = e - s``, then MultiplyByQuantizedMultiplier, which is a
DOUBLE_ROUND RESCALE with shift ``31 - e'``. TOSA requires the RESCALE input
within ``+-2**(shift - 1)`` when the shift is below 32; a sum beyond that
saturates an 8/16-bit output anyway, so it is clamped first. The importer
(static counts), the decay rule and the interpreter kernel (symbolic counts)
all take their numbers from here.
"""
from __future__ import annotations

from typing import Optional

from .attrs import RescaleAttrs
from .dtypes import DType


class CountRescaleError(ValueError):
    """A count whose folded multiplier needs a shift outside TOSA's 2..62."""


def mean_multiplier(multiplier: int, exponent: int, count: int) -> tuple[int, int]:
    """``(m', e')``: ``multiplier * 2**(exponent - 31) / count`` as TFLite folds it."""
    if count < 1:
        raise CountRescaleError(f"a mean over {count} elements")
    s = min(count.bit_length() - 1, 32, 31 + exponent)
    return int((multiplier << s) // count), exponent - s


def rescale_for(multiplier: int, exponent: int, output_zp: int,
                output_dtype: DType) -> tuple[RescaleAttrs, Optional[tuple[int, int]]]:
    """``(RescaleAttrs, input bounds or None)``: the RESCALE of an int32 sum and the clamp it needs first."""
    shift = 31 - exponent
    if not 2 <= shift <= 62:
        raise CountRescaleError(f"the scale ratio needs a RESCALE shift of {shift}, outside TOSA's 2..62")
    attrs = RescaleAttrs((multiplier,), (shift,), 0, output_zp, scale32=True, rounding_mode="DOUBLE_ROUND",
                         output_dtype=output_dtype)
    bounds = (-(1 << (shift - 1)), (1 << (shift - 1)) - 1) if shift < 32 else None
    return attrs, bounds
