"""CAST: float to int rounds half to even and saturates; bool rules; integer truncation; float narrowing."""
from __future__ import annotations

import numpy as np

from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.ops import Op

from .helpers import run_op, tensor


def cast(x, dtype: DType):
    return run_op(Op.CAST, [np.asarray(x)], A.CastAttrs(dtype))


def test_float_to_int8_rounds_half_to_even_and_saturates():
    x = np.array([-300, -128.5, -127.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999, 126.5, 127.5, 1e9,
                  np.inf, -np.inf], dtype=np.float32)
    want = [-128, -128, -128, -2, -2, 0, 0, 2, 2, 2, 126, 127, 127, 127, -128]
    got = cast(x, DType.INT8)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, want)


def test_float_to_int32_saturates_at_the_int32_range():
    got = cast(np.array([3e9, -3e9, 2.5e9, 0.5], np.float32), DType.INT32)
    np.testing.assert_array_equal(got, [2**31 - 1, -2**31, 2**31 - 1, 0])


def test_integer_narrowing_truncates_and_widening_sign_extends():
    np.testing.assert_array_equal(cast(np.array([300, -129, 127], np.int32), DType.INT8), [44, 127, 127])
    np.testing.assert_array_equal(cast(np.array([-1, 100], np.int8), DType.INT32), [-1, 100])


def test_bool_casts():
    np.testing.assert_array_equal(cast(np.array([True, False]), DType.INT8), [1, 0])
    np.testing.assert_array_equal(cast(np.array([True, False]), DType.FP32), [1.0, 0.0])
    np.testing.assert_array_equal(cast(np.array([0, 3, -1], np.int32), DType.BOOL), [False, True, True])
    np.testing.assert_array_equal(cast(np.array([0.0, -0.0, 0.5], np.float32), DType.BOOL), [False, False, True])


def test_int_to_float_and_float_narrowing():
    np.testing.assert_array_equal(cast(np.array([-7, 2**24 + 1], np.int32), DType.FP32), [-7.0, 2.0**24])
    got = cast(np.array([1.0, 65536.0, 1.0 + 2.0**-11], np.float32), DType.FP16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, [1.0, np.inf, 1.0])        # overflow -> inf; tie -> even


def test_cast_to_bf16_rounds_to_eight_significant_bits():
    x = np.array([1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 1.0 + 2.0**-7], np.float32)
    got = run_op(Op.CAST, [x], A.CastAttrs(DType.BF16), result_type=tensor(DType.BF16, x.shape))
    np.testing.assert_array_equal(got, [1.0, 1.0 + 2.0**-6, 1.0 + 2.0**-7])
