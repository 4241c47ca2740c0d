"""Float scales as TOSA RESCALE parameters: one exact ``(multiplier, shift)`` helper for every importer.

RESCALE multiplies by ``multiplier / 2**shift`` in integer arithmetic
(``apply_scale_32``: a 32-bit multiplier, a shift in [2, 62];
``apply_scale_16``: a 16-bit multiplier). A positive scale is split with
``math.frexp`` into ``m * 2**e`` (``0.5 <= m < 1``, exact in binary64); the
multiplier is ``m * 2**(bits-1)`` rounded to nearest (ties to even; Python's
``round`` on a binary64 is exact), so it lies in ``[2**(bits-2), 2**(bits-1))``
and its relative error is below ``2**-(bits-1)``; ``shift = bits - 1 - e``.
Scales too small for a shift of 62 lose multiplier bits (down to a multiplier
of 0); scales of ``2**(bits-3)`` and above cannot be expressed and raise.
The spec also requires ``-(1 << (shift-1)) <= value < (1 << (shift-1))`` for
``apply_scale_32``; :func:`value_bounds` gives that range so a caller can
CLAMP an int32 input first (exact whenever the output saturates beyond it, as
it does for 8- and 16-bit outputs: see :func:`clamp_is_exact`). Importers
choose SINGLE_ROUND (round half up), the closest to a float multiply with
round-to-nearest; TFLite-style DOUBLE_ROUND is the caller's choice.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

MIN_SHIFT, MAX_SHIFT = 2, 62


class ScaleError(ValueError):
    """A scale RESCALE cannot express (not positive and finite, or too large)."""


def multiplier_shift(scale: float, bits: int = 32) -> tuple:
    """``(multiplier, shift)`` with ``multiplier / 2**shift`` the nearest such value to ``scale``."""
    scale = float(scale)
    if not (math.isfinite(scale) and scale > 0.0):
        raise ScaleError(f"a RESCALE scale must be positive and finite, got {scale!r}")
    if bits not in (16, 32):
        raise ValueError(f"RESCALE multipliers have 16 or 32 bits, not {bits}")
    m, e = math.frexp(scale)
    multiplier = round(math.ldexp(m, bits - 1))
    if multiplier == 1 << (bits - 1):          # m rounded up to 1.0
        multiplier, e = multiplier >> 1, e + 1
    shift = bits - 1 - e
    if shift > MAX_SHIFT:
        multiplier, shift = _round_shift(multiplier, shift - MAX_SHIFT), MAX_SHIFT
    if shift < MIN_SHIFT:
        raise ScaleError(f"scale {scale!r} is too large for RESCALE (it must be below "
                         f"{2.0 ** (bits - 1 - MIN_SHIFT)!r} with a {bits}-bit multiplier)")
    return multiplier, shift


def _round_shift(value: int, n: int) -> int:
    """``value / 2**n`` rounded to nearest, ties to even (exact integer arithmetic)."""
    q, r = divmod(value, 1 << n)
    half = 1 << (n - 1)
    return q + (1 if r > half or (r == half and q % 2) else 0)


def multipliers_shifts(scales: ArrayLike, bits: int = 32) -> tuple:
    """Per-channel ``(multipliers, shifts)`` tuples for a 1-D array of scales."""
    pairs = [multiplier_shift(s, bits) for s in np.asarray(scales, dtype=np.float64).reshape(-1)]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def effective_scale(multiplier: int, shift: int) -> float:
    """The scale a ``(multiplier, shift)`` pair applies."""
    return math.ldexp(int(multiplier), -int(shift))


def value_bounds(shifts: ArrayLike) -> tuple:
    """The input range ``apply_scale_32`` accepts for every one of ``shifts``: ``(lo, hi)`` inclusive."""
    s = min(int(x) for x in np.asarray(shifts).reshape(-1))
    return -(1 << (s - 1)), (1 << (s - 1)) - 1


def clamp_is_exact(multipliers: ArrayLike, shifts: ArrayLike, out_bits: int) -> bool:
    """True when clamping an int32 input to :func:`value_bounds` cannot change an output of ``out_bits``
    bits: every value outside the bounds scales beyond the output range (and saturates) anyway."""
    lo, hi = value_bounds(shifts)
    if lo <= -(1 << 31) and hi >= (1 << 31) - 1:
        return True                            # every int32 value is in range: no clamp at all
    limit = 1 << (out_bits + 1)                # beyond the output range plus any zero point and rounding
    smallest = min(effective_scale(m, s) for m, s in zip(np.reshape(multipliers, -1), np.reshape(shifts, -1)))
    return min(-lo, hi + 1) * smallest >= limit
