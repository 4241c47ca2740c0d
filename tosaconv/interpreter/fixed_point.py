"""The spec's fixed-point scaling helpers, vectorized over numpy int64 arrays.

``apply_scale_32``, ``apply_scale_16`` and ``reciprocal_scale`` follow the
TOSA 1.0 pseudocode (``pseudocode/library/scale_helpers.tosac``) bit for bit;
``apply_lookup_s`` is the 513-entry interpolating table lookup used by TABLE
on int16 data. All products fit int64 under the spec's REQUIRE conditions
(a 32-bit value times a 31-bit multiplier plus a rounding term below 2**62),
so plain int64 numpy arithmetic is exact; ``>>`` on signed int64 is an
arithmetic shift, as the spec requires.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .numeric import as_int64, bit_length, check_range

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def apply_scale_32(value: ArrayLike, multiplier: ArrayLike, shift: ArrayLike, double_round: bool = False) -> np.ndarray:
    """``(value * multiplier + round) >> shift`` with the spec's single or double rounding."""
    value, multiplier, shift = as_int64(value), as_int64(multiplier), as_int64(shift)
    _check_scale(multiplier, shift)
    one = np.int64(1)
    rounding = one << (shift - 1)
    if np.any((value < -rounding) | (value >= rounding)):
        raise ValueError("apply_scale_32 needs -(1 << (shift - 1)) <= value < (1 << (shift - 1)); "
                         f"a value of {_first_outside(value, rounding)} breaks it")
    if double_round:
        # The first of the two rounding steps, at bit 30, for shifts beyond 31.
        adjust = np.where(shift > 31, one << 30, 0)
        rounding = rounding + np.where(value >= 0, adjust, -adjust)
    return (value * multiplier + rounding) >> shift


def apply_scale_16(value: ArrayLike, multiplier: ArrayLike, shift: ArrayLike) -> np.ndarray:
    """The 16-bit-multiplier variant: ``(value * multiplier + round) >> shift``."""
    value, multiplier, shift = as_int64(value), as_int64(multiplier), as_int64(shift)
    _check_scale(multiplier, shift)
    rounding = np.int64(1) << (shift - 1)
    result = (value * multiplier + rounding) >> shift
    check_range(result, -(1 << 31), (1 << 31) - 1, "apply_scale_16's scaled result")
    return result


def _check_scale(multiplier: np.ndarray, shift: np.ndarray) -> None:
    check_range(multiplier, 0, np.iinfo(np.int64).max, "a RESCALE multiplier")
    check_range(shift, 2, 62, "a RESCALE shift")


def _first_outside(value: np.ndarray, bound: np.ndarray) -> np.generic:
    bad = (value < -bound) | (value >= bound)
    return np.broadcast_to(value, bad.shape)[bad].flat[0]


def reciprocal_scale(count: ArrayLike) -> tuple:
    """``(multiplier, shift)`` approximating ``1 / count`` for each positive count."""
    count = as_int64(count)
    check_range(count, 1, (1 << 32) - 1, "a reciprocal_scale value")
    k = bit_length(count - 1)            # (1 << k) / 2 < count <= (1 << k)
    numerator = np.int64((1 << 30) + 1) << k
    return numerator // count, 30 + k


def apply_lookup_s(table: np.ndarray, value: ArrayLike) -> np.ndarray:
    """Interpolating lookup in a 513-entry int16 table; the result has 16 + 7 = 23 bits."""
    table = as_int64(table)
    clipped = np.clip(as_int64(value), -32768, 32767)
    index = (clipped + 32768) >> 7
    fraction = clipped & 0x7F
    base = table[index]
    slope = table[index + 1] - base
    check_range(slope, -(1 << 15), (1 << 15) - 1, "a TABLE slope (difference of neighbouring entries)")
    return (base << 7) + slope * fraction
