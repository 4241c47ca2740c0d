"""The TFLite importer's batched forms of per-value work, against the per-value forms they replace.

``quant.tosa_multipliers`` (numpy's ``frexp`` over a per-channel weight's reals) must give what
``tosa_multiplier`` gives real by real, errors included; ``q_add_terms._same_sums`` (only the rows and
columns where a candidate term differs) must decide as the comparison of all 65,536 scaled sums does,
ValueError included. Both truths are computed here by the plain per-value code on the same inputs.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.importers.tflite.ops import q_add_terms as Q
from tosaconv.importers.tflite.quant import tosa_multiplier, tosa_multipliers


def _one_by_one(reals: np.ndarray) -> object:
    try:
        return [tosa_multiplier(r) for r in np.asarray(reals, np.float64).reshape(-1)]
    except Exception as e:
        return (type(e), str(e))


def _batched(reals: np.ndarray) -> object:
    try:
        return tosa_multipliers(reals)
    except Exception as e:
        return (type(e), str(e))


@pytest.mark.parametrize("seed", range(4))
def test_tosa_multipliers_equal_tosa_multiplier_real_by_real(seed):
    rng = np.random.default_rng(seed)
    for it in range(300):
        n = int(rng.integers(0, 160))
        reals = rng.random(n) * 2.0 ** rng.integers(-40, 3, n)
        if it % 3 == 0:
            reals = np.clip(reals, 1e-7, 0.99)          # all in range: the batched path
        if n and it % 5 == 0:
            reals[0] = np.nextafter(1.0, 0.0)           # rounds up to 2**31: the carry
        if n and it % 7 == 0:
            reals[n // 2] = (0.0, np.nan, np.inf, -1.0, 8.0)[it % 5]   # refused or special, one by one
        if it % 11 == 0:
            reals = reals.astype(np.float32)
        assert _batched(reals) == _one_by_one(reals)


def _full(got: tuple, terms: tuple, sign: int, m: int, shift: int) -> object:
    try:
        want = Q._scaled_sums(terms[0], terms[1], sign, m, shift)
        return bool(np.array_equal(Q._scaled_sums(got[0], got[1], sign, m, shift), want))
    except ValueError:
        return "ValueError"


def _rows_and_columns(got: tuple, terms: tuple, sign: int, m: int, shift: int) -> object:
    try:
        Q._check_sums(terms[0], terms[1], sign, m, shift)
        return Q._same_sums(got, terms, sign, m, shift)
    except ValueError:
        return "ValueError"


def test_same_sums_decides_as_all_sums_do():
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(1500):
        shift, m = int(rng.integers(20, 50)), int(rng.integers(1 << 29, 1 << 31))
        mag = int(rng.integers(1, 1 << int(rng.integers(10, shift))))
        ta, tb = (rng.integers(-mag, mag, 256).astype(np.int64) for _ in range(2))
        a, b = ta.copy(), tb.copy()
        a[rng.integers(0, 256, int(rng.integers(0, 6)))] += 1
        b[rng.integers(0, 256, int(rng.integers(0, 3)))] -= 1
        sign = int(rng.choice([-1, 1]))
        want = _full((a, b), (ta, tb), sign, m, shift)
        assert _rows_and_columns((a, b), (ta, tb), sign, m, shift) == want
        seen.add(want)
    assert seen == {True, False, "ValueError"}    # every outcome was exercised
