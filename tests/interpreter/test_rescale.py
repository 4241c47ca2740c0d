"""RESCALE, bit for bit: hand-worked cases, plus random data against a plain-int transcription of the spec."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import KernelError
from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.ops import Op

from .helpers import run_op

ONE_32 = 1 << 30     # with shift 30: a scale of exactly 1.0


def rescale(x, out_dtype, multiplier, shift, **kw):
    x = np.asarray(x)
    attrs = A.RescaleAttrs(tuple(np.atleast_1d(multiplier).tolist()), tuple(np.atleast_1d(shift).tolist()),
                           output_dtype=out_dtype, **kw)
    types = {0: DType.INT48} if x.dtype == np.int64 else None
    return run_op(Op.RESCALE, [x], attrs, types=types)


def test_unit_scale_is_identity():
    x = np.arange(-128, 128, dtype=np.int8)
    np.testing.assert_array_equal(rescale(x, DType.INT8, ONE_32, 30), x)


def test_halving_rounds_half_up():
    # (v * 2^30 + 2^30) >> 31 == floor((v + 1) / 2)
    x = np.array([3, -3, 1, -1, 2, -2, 5], dtype=np.int8)
    np.testing.assert_array_equal(rescale(x, DType.INT8, ONE_32, 31), [2, -1, 1, 0, 1, -1, 3])


def test_saturates_to_the_output_range():
    x = np.array([100, -100, 31, -32], dtype=np.int8)
    np.testing.assert_array_equal(rescale(x, DType.INT8, ONE_32, 28), [127, -128, 124, -128])


def test_zero_points():
    x = np.array([10, -128, 127], dtype=np.int8)
    # (10 - 3) + (-5) = 2; (-128 - 3) - 5 = -136 -> -128; (127 - 3) - 5 = 119
    got = rescale(x, DType.INT8, ONE_32, 30, input_zp=3, output_zp=-5)
    np.testing.assert_array_equal(got, [2, -128, 119])


def test_unsigned_input_is_zero_extended():
    x = np.array([200, 0, 255, 128], dtype=np.uint8).view(np.int8)    # stored as int8 bit patterns
    got = rescale(x, DType.INT8, ONE_32, 30, input_zp=128, input_unsigned=True)
    np.testing.assert_array_equal(got, [72, -128, 127, 0])


def test_unsigned_output_saturates_to_0_255_and_keeps_bits():
    x = np.array([-1, 127, -128, 100, -100], dtype=np.int8)
    got = rescale(x, DType.INT8, ONE_32, 29, output_zp=128, output_unsigned=True)
    # x*2 + 128, clipped to [0, 255]: 126, 382->255, -128->0, 328->255, -72->0
    np.testing.assert_array_equal(got.view(np.uint8), [126, 255, 0, 255, 0])


def test_double_round_differs_from_single_round_only_for_large_shifts():
    # 7 * 2^29 / 2^33 = 0.4375: single rounding gives 0, double rounding (first at bit 30) gives 1.
    x = np.array([7, -7], dtype=np.int32)
    single = rescale(x, DType.INT32, 1 << 29, 33, rounding_mode="SINGLE_ROUND")
    double = rescale(x, DType.INT32, 1 << 29, 33, rounding_mode="DOUBLE_ROUND")
    np.testing.assert_array_equal(single, [0, 0])
    np.testing.assert_array_equal(double, [1, -1])
    small = rescale(x, DType.INT32, 1 << 25, 29, rounding_mode="DOUBLE_ROUND")   # shift <= 31: no change
    np.testing.assert_array_equal(small, [0, 0])


def test_inexact_round_is_computed_as_single_round():
    x = np.array([7, -7, 3], dtype=np.int32)
    single = rescale(x, DType.INT32, 1 << 29, 33, rounding_mode="SINGLE_ROUND")
    inexact = rescale(x, DType.INT32, 1 << 29, 33, rounding_mode="INEXACT_ROUND")
    np.testing.assert_array_equal(inexact, single)


def test_scale16():
    x = np.array([1000, -1001, 32767], dtype=np.int16)
    # (v * 2^14 + 2^14) >> 15
    got = rescale(x, DType.INT16, 1 << 14, 15, scale32=False)
    np.testing.assert_array_equal(got, [500, -500, 16384])


def test_int48_input_with_scale16():
    x = np.array([1 << 40, -(1 << 40) - 1], dtype=np.int64)
    got = rescale(x, DType.INT32, 1 << 14, 30, scale32=False)
    np.testing.assert_array_equal(got, [1 << 24, -(1 << 24)])


def test_per_channel_uses_the_last_axis():
    x = np.full((2, 3), 10, dtype=np.int32)
    got = rescale(x, DType.INT32, [ONE_32] * 3, [30, 31, 29], per_channel=True)
    np.testing.assert_array_equal(got, [[10, 5, 20], [10, 5, 20]])


def test_invalid_configurations_are_reported_at_the_op():
    x = np.zeros((2,), dtype=np.int32)
    with pytest.raises(KernelError, match="input_zp must be 0 for i32 input") as e:
        rescale(x, DType.INT8, ONE_32, 30, input_zp=1)
    assert e.value.op_name == "RESCALE"
    with pytest.raises(KernelError, match="DOUBLE_ROUND needs scale32"):
        rescale(np.zeros(2, np.int16), DType.INT16, 1 << 14, 14, scale32=False, rounding_mode="DOUBLE_ROUND")


def spec_rescale(v, multiplier, shift, in_zp, out_zp, double_round, lo, hi):
    """RESCALE of one int8 value with Python ints, transcribed from the pseudocode."""
    value = v - in_zp
    rounding = 1 << (shift - 1)
    if double_round and shift > 31:
        rounding += (1 << 30) if value >= 0 else -(1 << 30)
    result = (value * multiplier + rounding) >> shift
    return min(max(result + out_zp, lo), hi)


@pytest.mark.parametrize("double_round", [False, True])
def test_random_int8_cases_match_a_plain_int_transcription(double_round):
    rng = np.random.default_rng(7)
    for _ in range(20):
        multiplier, shift = int(rng.integers(1 << 29, 1 << 31)), int(rng.integers(25, 45))
        in_zp, out_zp = int(rng.integers(-128, 128)), int(rng.integers(-128, 128))
        x = rng.integers(-128, 128, size=64).astype(np.int8)
        mode = "DOUBLE_ROUND" if double_round else "SINGLE_ROUND"
        got = rescale(x, DType.INT8, multiplier, shift, input_zp=in_zp, output_zp=out_zp, rounding_mode=mode)
        want = [spec_rescale(int(v), multiplier, shift, in_zp, out_zp, double_round, -128, 127) for v in x]
        np.testing.assert_array_equal(got, want)
