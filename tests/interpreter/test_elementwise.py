"""Elementwise unary, binary and ternary kernels and comparisons, on hand-checked values."""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import KernelError
from tosaconv.ir import attrs as A
from tosaconv.ir.ops import Op

from .helpers import run_op

NAN = np.float32(np.nan)


def i32(*values):
    return np.array(values, dtype=np.int32)


def f32(*values):
    return np.array(values, dtype=np.float32)


def test_mul_int32_shift_rounds_half_up_with_an_int64_product():
    a, b = i32(3, -3, 3, -3, 1 << 20), i32(5, 5, 5, 5, 1 << 20)
    # 15 -> (15+1)>>1 = 8, -15 -> -14>>1 = -7; with shift 2: (15+2)>>2 = 4, (-15+2)>>2 = -4
    np.testing.assert_array_equal(run_op(Op.MUL, [a[:2], b[:2]], A.MulAttrs(1)), [8, -7])
    np.testing.assert_array_equal(run_op(Op.MUL, [a[2:4], b[2:4]], A.MulAttrs(2)), [4, -4])
    np.testing.assert_array_equal(run_op(Op.MUL, [a[4:], b[4:]], A.MulAttrs(20)), [1 << 20])


def test_mul_without_shift_keeps_the_low_32_bits():
    np.testing.assert_array_equal(run_op(Op.MUL, [i32(1 << 16, 7), i32(1 << 16, -6)]), [0, -42])


def test_mul_int8_gives_int32():
    got = run_op(Op.MUL, [np.array([-128, 127], np.int8), np.array([-128, 127], np.int8)])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [16384, 16129])


def test_mul_shift_on_int8_is_rejected():
    with pytest.raises(KernelError, match="shift"):
        run_op(Op.MUL, [np.array([1], np.int8), np.array([1], np.int8)], A.MulAttrs(3))


def test_intdiv_truncates_toward_zero():
    got = run_op(Op.INTDIV, [i32(7, -7, 7, -7, 1, -1), i32(2, 2, -2, -2, 3, 3)])
    np.testing.assert_array_equal(got, [3, -3, -3, 3, 0, 0])


def test_intdiv_by_zero_names_the_op():
    with pytest.raises(KernelError, match="while running INTDIV at TestOp 'under_test': INTDIV by zero"):
        run_op(Op.INTDIV, [i32(1), i32(0)])


def test_arithmetic_right_shift_with_and_without_round():
    a, b = i32(5, -5, 6, -6, 7, -7, 9), i32(1, 1, 1, 1, 1, 1, 0)
    plain = run_op(Op.ARITHMETIC_RIGHT_SHIFT, [a, b], A.ArithmeticRightShiftAttrs(False))
    rounded = run_op(Op.ARITHMETIC_RIGHT_SHIFT, [a, b], A.ArithmeticRightShiftAttrs(True))
    np.testing.assert_array_equal(plain, [2, -3, 3, -3, 3, -4, 9])
    np.testing.assert_array_equal(rounded, [3, -2, 3, -3, 4, -3, 9])


def test_shift_amount_out_of_range_is_an_error():
    with pytest.raises(KernelError, match=r"shift amounts must be in \[0, 7\]"):
        run_op(Op.LOGICAL_LEFT_SHIFT, [np.array([1], np.int8), np.array([8], np.int8)])


def test_logical_shifts_work_on_the_unsigned_bit_pattern():
    a = np.array([-1, -128, 64, 3], dtype=np.int8)
    right = run_op(Op.LOGICAL_RIGHT_SHIFT, [a, np.array([1, 7, 1, 0], np.int8)])
    left = run_op(Op.LOGICAL_LEFT_SHIFT, [a, np.array([1, 0, 1, 7], np.int8)])
    np.testing.assert_array_equal(right, [127, 1, 32, 3])
    np.testing.assert_array_equal(left, [-2, -128, -128, -128])


def test_add_and_sub_wrap_int32():
    np.testing.assert_array_equal(run_op(Op.ADD, [i32(2**31 - 1, 5), i32(1, -7)]), [-2**31, -2])
    np.testing.assert_array_equal(run_op(Op.SUB, [i32(-2**31), i32(1)]), [2**31 - 1])


def test_float_ops_broadcast_size_one_dims():
    a = f32(1, 2, 3).reshape(1, 3)
    b = f32(10, 20).reshape(2, 1)
    np.testing.assert_array_equal(run_op(Op.ADD, [a, b]), [[11, 12, 13], [21, 22, 23]])
    np.testing.assert_array_equal(run_op(Op.POW, [f32(2, 9), f32(3, 0.5)]), [8, 3])


def test_fp16_arithmetic_stays_fp16():
    got = run_op(Op.MUL, [np.array([1.5, 2.0], np.float16), np.array([2.0, 0.25], np.float16)])
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, [3.0, 0.5])


@pytest.mark.parametrize("op,mode,want", [
    (Op.MAXIMUM, "PROPAGATE", [NAN, NAN, 2, NAN]), (Op.MAXIMUM, "IGNORE", [2, 1, 2, NAN]),
    (Op.MINIMUM, "PROPAGATE", [NAN, NAN, -1, NAN]), (Op.MINIMUM, "IGNORE", [2, 1, -1, NAN]),
])
def test_maximum_minimum_nan_modes(op, mode, want):
    got = run_op(op, [f32(NAN, 1, -1, NAN), f32(2, NAN, 2, NAN)], A.NanModeAttrs(mode))
    np.testing.assert_array_equal(got, want)


def test_integer_maximum_minimum():
    np.testing.assert_array_equal(run_op(Op.MAXIMUM, [i32(-5, 3), i32(2, -8)], A.NanModeAttrs()), [2, 3])
    np.testing.assert_array_equal(run_op(Op.MINIMUM, [i32(-5, 3), i32(2, -8)], A.NanModeAttrs()), [-5, -8])


def test_bitwise_and_logical_ops():
    a, b = i32(0b1100, -1), i32(0b1010, 5)
    np.testing.assert_array_equal(run_op(Op.BITWISE_AND, [a, b]), [0b1000, 5])
    np.testing.assert_array_equal(run_op(Op.BITWISE_OR, [a, b]), [0b1110, -1])
    np.testing.assert_array_equal(run_op(Op.BITWISE_XOR, [a, b]), [0b0110, -6])
    np.testing.assert_array_equal(run_op(Op.BITWISE_NOT, [a]), [-13, 0])
    p, q = np.array([True, True, False]), np.array([True, False, False])
    np.testing.assert_array_equal(run_op(Op.LOGICAL_AND, [p, q]), [True, False, False])
    np.testing.assert_array_equal(run_op(Op.LOGICAL_OR, [p, q]), [True, True, False])
    np.testing.assert_array_equal(run_op(Op.LOGICAL_XOR, [p, q]), [False, True, False])
    np.testing.assert_array_equal(run_op(Op.LOGICAL_NOT, [p]), [False, False, True])


def test_clz_counts_leading_zeros_of_32_bits():
    np.testing.assert_array_equal(run_op(Op.CLZ, [i32(0, 1, -1, 1 << 30, 255)]), [32, 31, 0, 1, 24])


def test_negate_with_zero_points_saturates():
    x = np.array([10, -128, 127], dtype=np.int8)
    # -(10 - 3) - 5 = -12; -(-128 - 3) - 5 = 126; -(127 - 3) - 5 = -129 -> -128
    got = run_op(Op.NEGATE, [x], A.NegateAttrs(input_zp=3, output_zp=-5))
    np.testing.assert_array_equal(got, [-12, 126, -128])
    np.testing.assert_array_equal(run_op(Op.NEGATE, [np.array([-128], np.int8)], A.NegateAttrs()), [127])
    np.testing.assert_array_equal(run_op(Op.NEGATE, [f32(1.5, -0.0)], A.NegateAttrs()), [-1.5, 0.0])


def test_abs():
    got = run_op(Op.ABS, [f32(-0.0, -2.5, 3)])
    np.testing.assert_array_equal(got, [0.0, 2.5, 3])
    assert not np.signbit(got[0])
    np.testing.assert_array_equal(run_op(Op.ABS, [i32(-7, 7, 0)]), [7, 7, 0])


def test_float_unary_special_values():
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(run_op(Op.RECIPROCAL, [f32(0, -0.0, 4)]), [np.inf, -np.inf, 0.25])
        np.testing.assert_array_equal(run_op(Op.LOG, [f32(0, -1, 1)]), [-np.inf, NAN, 0])
    np.testing.assert_array_equal(run_op(Op.RSQRT, [f32(4, 0.25)]), [0.5, 2])
    np.testing.assert_array_equal(run_op(Op.CEIL, [f32(-1.5, 1.2)]), [-1, 2])
    np.testing.assert_array_equal(run_op(Op.FLOOR, [f32(-1.5, 1.2)]), [-2, 1])
    np.testing.assert_allclose(run_op(Op.EXP, [f32(0, 1)]), [1, np.e], rtol=1e-6)
    np.testing.assert_allclose(run_op(Op.SIN, [f32(0, np.pi / 2)]), [0, 1], atol=1e-6)
    np.testing.assert_allclose(run_op(Op.COS, [f32(0, np.pi)]), [1, -1], atol=1e-6)


def test_comparisons_are_false_against_nan_and_ignore_the_sign_of_zero():
    a, b = f32(1, NAN, 0.0, 2), f32(1, NAN, -0.0, 1)
    np.testing.assert_array_equal(run_op(Op.EQUAL, [a, b]), [True, False, True, False])
    np.testing.assert_array_equal(run_op(Op.GREATER, [a, b]), [False, False, False, True])
    np.testing.assert_array_equal(run_op(Op.GREATER_EQUAL, [a, b]), [True, False, True, True])


def test_select_broadcasts_all_three_operands():
    cond = np.array([[True], [False]])
    got = run_op(Op.SELECT, [cond, i32(1, 2, 3).reshape(1, 3), i32(-1).reshape(1, 1)])
    np.testing.assert_array_equal(got, [[1, 2, 3], [-1, -1, -1]])
