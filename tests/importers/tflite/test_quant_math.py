"""The claims in tosaconv/importers/tflite/quant.py, checked against a plain transcription of TFLite's integer code.

``_tflite_*`` below restate TFLite's ``QuantizeMultiplier`` and gemmlowp's
``SaturatingRoundingDoublingHighMul`` / ``RoundingDivideByPOT`` (the
``MultiplyByQuantizedMultiplier`` of reference kernels built without
TFLITE_SINGLE_ROUNDING) with Python integers and C's truncating division, so
the test does not reuse the module's own reasoning. The TOSA side is the
interpreter's ``apply_scale_32``, which follows the spec's pseudocode.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from tflite.TensorType import TensorType

from tosaconv.importers.tflite.quant import quantize_multiplier, tosa_multiplier, zero_point
from tosaconv.importers.tflite.reader import ConvertError, QuantParams, TensorInfo
from tosaconv.interpreter.fixed_point import apply_scale_32

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def _c_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _srdhm(a: int, b: int) -> int:
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    return _c_div(ab + nudge, 1 << 31)


def _rdbpot(x: int, exponent: int) -> int:
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def _tflite_multiply(x: int, multiplier: int, shift: int) -> int:
    left, right = max(shift, 0), max(-shift, 0)
    return _rdbpot(_srdhm(x * (1 << left), multiplier), right)


def _tflite_quantize_multiplier(real: float) -> tuple:
    if real == 0.0:
        return 0, 0
    q, shift = math.frexp(real)
    fixed = int(math.copysign(math.floor(abs(q * (1 << 31)) + 0.5), q))   # std::round
    if fixed == 1 << 31:
        fixed, shift = fixed // 2, shift + 1
    if shift < -31:
        return 0, 0
    return fixed, shift


REALS = [1e-12, 3.7e-10, 2.0 ** -31, 1e-6, 0.0039215686, 0.0123, 0.25, 0.4999999, 0.5, 0.75, 0.9999999999,
         1.0, 1.5, 3.3, 255.0, 1000.5, 2.0 ** 20 + 0.3]


@pytest.mark.parametrize("real", REALS)
def test_quantize_multiplier_is_tflites(real):
    assert quantize_multiplier(real) == _tflite_quantize_multiplier(real)


def test_quantize_multiplier_rounds_halves_away_from_zero():
    # 0.5 + 2**-32 times 2**31 is 2**30 + 0.5: half-way; ties to even would give 2**30.
    real = 0.5 + 2.0 ** -32
    multiplier, shift = quantize_multiplier(real)
    assert (multiplier, shift) == ((1 << 30) + 1, 0)


@pytest.mark.parametrize("real", REALS)
def test_double_round_rescale_equals_multiply_by_quantized_multiplier(real):
    multiplier, exponent = quantize_multiplier(real)
    _, shift = tosa_multiplier(real)
    bound = 1 << (shift - 1)
    rng = np.random.default_rng(abs(hash(real)) % 2 ** 32)
    lo, hi = max(INT32_MIN, -bound), min(INT32_MAX, bound - 1)
    values = np.concatenate([rng.integers(lo, hi, 4000, endpoint=True),
                             np.arange(-300, 301), [lo, hi, -(1 << 30), (1 << 30) - 1]])
    values = values[(values >= lo) & (values <= hi)]
    tosa = apply_scale_32(values, multiplier, shift, double_round=True)
    want = [_tflite_multiply(int(v), multiplier, exponent) for v in values]
    mismatch = [(int(v), int(t), w) for v, t, w in zip(values, tosa, want) if t != w]
    assert not mismatch, mismatch[:5]


def test_half_way_products_round_like_tflite():
    """Values whose scaled result sits exactly on .5 at either rounding step, both signs."""
    multiplier, exponent = 1 << 30, -3          # real 0.0625: x / 16
    shift = 31 - exponent
    values = np.arange(-64, 65)
    tosa = apply_scale_32(values, multiplier, shift, double_round=True)
    assert [int(t) for t in tosa] == [_tflite_multiply(int(v), multiplier, exponent) for v in values]


def _activation(zero_points: list) -> TensorInfo:
    quant = QuantParams(np.full(len(zero_points), 0.5, np.float32), np.array(zero_points, np.int64))
    return TensorInfo(3, "act", TensorType.INT8, (1, 4), None, quant=quant)


def test_zero_point_of_a_per_tensor_activation():
    assert zero_point(_activation([-7])) == -7
    assert zero_point(_activation([5, 5, 5])) == 5      # one value stored per channel is still one zero point


@pytest.mark.parametrize("zps", [[1, 2, 1], []])
def test_an_activation_without_one_zero_point_is_refused_by_name(zps):
    with pytest.raises(ConvertError, match=r"tensor 'act' has per-channel zero points \[(1, 2)?\]"):
        zero_point(_activation(zps))
