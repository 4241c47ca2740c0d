"""The float-scale to RESCALE (multiplier, shift) helper, checked with exact rational arithmetic.

``multiplier / 2**shift`` must be the nearest value with a 32-bit (16-bit) multiplier of full
precision to the scale (so its relative error is below 2**-31, resp. 2**-15), the shift must
stay in the spec's [2, 62], tiny scales must lose multiplier bits rather than break the shift
limit, and what cannot be expressed must raise. A RESCALE built from the pair, run by our
interpreter, must round ``value * scale`` half up (SINGLE_ROUND) exactly.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tosaconv.lowering.quant_scale import (ScaleError, clamp_is_exact, multiplier_shift, multipliers_shifts,
                                            value_bounds)
from tosaconv.interpreter.fixed_point import apply_scale_32

SCALES = [1.0, 0.5, 0.75, 3.0, 1e-3, 0.0039215686, 2.0 ** -31, 7.3e-9, 1234.5, 2.0 ** 28, 0.999999999]


@pytest.mark.parametrize("scale,bits", [(s, b) for b in (32, 16) for s in SCALES if s < 2.0 ** (b - 3)])
def test_multiplier_is_nearest_full_precision(scale, bits):
    m, shift = multiplier_shift(scale, bits)
    assert 2 <= shift <= 62
    assert 1 << (bits - 2) <= m < 1 << (bits - 1)
    exact = Fraction(scale) * 2 ** shift
    assert abs(Fraction(m) - exact) <= Fraction(1, 2)
    assert abs(Fraction(m, 2 ** shift) / Fraction(scale) - 1) < Fraction(1, 2 ** (bits - 2))


def test_scale_just_below_a_power_of_two_rounds_up_to_it():
    m, shift = multiplier_shift(1.0 - 2.0 ** -40)
    assert (m, shift) == (1 << 30, 30)


def test_largest_scales_per_multiplier_width():
    assert multiplier_shift(2.0 ** 28)[1] == 2
    with pytest.raises(ScaleError, match="16-bit"):
        multiplier_shift(2.0 ** 13, 16)


def test_tiny_scale_keeps_shift_62_and_loses_bits():
    m, shift = multiplier_shift(2.0 ** -70)
    assert (m, shift) == (0, 62)
    m, shift = multiplier_shift(3 * 2.0 ** -50)
    assert shift == 62 and Fraction(m, 2 ** 62) == Fraction(3, 2 ** 50)


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan"), float("inf"), 2.0 ** 29])
def test_inexpressible_scales_raise(scale):
    with pytest.raises(ScaleError, match="scale"):
        multiplier_shift(scale)


def test_per_channel_vectors():
    ms, shifts = multipliers_shifts(np.array([0.25, 0.75], np.float32))
    assert ms == (1 << 30, 3 << 29) and shifts == (32, 31)


@pytest.mark.parametrize("scale", [0.0123, 0.5, 0.71, 1.7, 250.0])
def test_rescale_rounds_half_up_exactly(scale):
    """apply_scale_32 with the helper's pair equals floor(v * m / 2**shift + 1/2) in exact arithmetic."""
    m, shift = multiplier_shift(scale)
    lo, hi = value_bounds([shift])
    values = np.unique(np.clip(np.random.default_rng(0).integers(-(1 << 31), 1 << 31, 2000), lo, hi))
    got = apply_scale_32(values, m, shift)
    want = [(Fraction(int(v) * m, 2 ** shift) + Fraction(1, 2)).__floor__() for v in values]
    assert [int(g) for g in got] == want


def test_clamp_before_rescale_is_exact_for_narrow_outputs():
    """Values outside apply_scale_32's range (small shifts) scale far beyond any 8/16-bit output."""
    for scale in (0.5, 0.9, 3.0, 1000.0):
        m, shift = multiplier_shift(scale)
        assert value_bounds([shift])[1] == (1 << (shift - 1)) - 1
        assert clamp_is_exact([m], [shift], 8) and clamp_is_exact([m], [shift], 16)
