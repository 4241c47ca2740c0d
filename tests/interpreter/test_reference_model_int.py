"""Cross-check integer kernels against the official TOSA reference model, bit for bit.

Each test runs one op through our evaluator and through ``tosa_reference_model``
(from tosa-tools, a test extra) on seeded random data, and
requires identical integers. This checks our reading of the spec against
the spec's own implementation rather than against itself.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.ops import Op

from .helpers import one_op_graph, run_op
from .reference_model import OneOp

RNG = np.random.default_rng(1234)
OP = OneOp.enum


def _ints(dtype, shape, lo=None, hi=None):
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return RNG.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


RESCALE_CASES = [
    # in dtype, out dtype, scale32, rounding, per_channel, in_unsigned, out_unsigned, in_zp, out_zp, shift range
    ("i8", "i8", True, "SINGLE_ROUND", False, False, False, -3, 7, (30, 40)),
    ("i8", "i8", True, "DOUBLE_ROUND", False, False, False, 11, -9, (33, 45)),
    ("i32", "i8", True, "DOUBLE_ROUND", False, False, False, 0, 4, (40, 50)),
    ("i32", "i16", True, "SINGLE_ROUND", True, False, False, 0, 0, (30, 48)),
    ("i16", "i16", False, "SINGLE_ROUND", False, False, False, 0, 0, (12, 20)),
    ("i8", "i8", True, "SINGLE_ROUND", False, True, False, 128, -5, (28, 34)),
    ("i8", "i8", True, "SINGLE_ROUND", False, False, True, -2, 128, (28, 34)),
    ("i16", "i16", True, "SINGLE_ROUND", False, True, False, 32768, 0, (28, 34)),
    ("i48", "i32", False, "SINGLE_ROUND", False, False, False, 0, 0, (30, 40)),
    ("i8", "i32", True, "SINGLE_ROUND", True, False, False, 5, 0, (10, 16)),
]
_NP = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i48": np.int64}
_IR = {"i8": DType.INT8, "i16": DType.INT16, "i32": DType.INT32, "i48": DType.INT48}


def _ref_dtype(one, name):
    return {"i8": one.dtype.INT8, "i16": one.dtype.INT16, "i32": one.dtype.INT32, "i48": one.dtype.INT48}[name]


def _rescale_input(in_t):
    if in_t == "i48":
        return _ints(np.int64, (3, 8), -(1 << 40), 1 << 40)
    if in_t == "i32":
        return _ints(np.int32, (3, 8), -(1 << 28), 1 << 28)
    return _ints(_NP[in_t], (3, 8))


@pytest.mark.parametrize("case", RESCALE_CASES, ids=[f"{c[0]}-{c[1]}-{c[3]}-{i}" for i, c in enumerate(RESCALE_CASES)])
def test_rescale_matches_reference(tmp_path, case):
    in_t, out_t, scale32, rounding, per_channel, u_in, u_out, in_zp, out_zp, (s_lo, s_hi) = case
    x = _rescale_input(in_t)
    channels = x.shape[-1] if per_channel else 1
    mult_hi = (1 << 31) - 1 if scale32 else (1 << 15) - 1
    multiplier = RNG.integers(mult_hi // 2, mult_hi, size=channels)
    shift = RNG.integers(s_lo, s_hi, size=channels, endpoint=True)
    attrs = A.RescaleAttrs(tuple(int(m) for m in multiplier), tuple(int(s) for s in shift), in_zp, out_zp,
                           scale32, rounding, per_channel, u_in, u_out, _IR[out_t])
    ours = run_op(Op.RESCALE, [x], attrs, types={0: _IR[in_t]})

    one = OneOp(tmp_path)
    one.input(x, _ref_dtype(one, in_t))
    one.const(multiplier, one.dtype.INT32 if scale32 else one.dtype.INT16, np.int32 if scale32 else np.int16)
    one.const(shift, one.dtype.INT8, np.int8)
    one.const([_wrap(in_zp, in_t)], _ref_dtype(one, in_t), _NP[in_t])
    one.const([_wrap(out_zp, out_t)], _ref_dtype(one, out_t), _NP[out_t])
    attr = one.attribute()
    attr.RescaleAttribute(scale32, getattr(OP("RoundingMode"), rounding), per_channel, u_in, u_out)
    theirs = one.run(OP("Op").RESCALE, x.shape, _ref_dtype(one, out_t), attr)
    np.testing.assert_array_equal(ours, theirs.astype(ours.dtype))


def _wrap(value: int, name: str) -> int:
    bits = {"i8": 8, "i16": 16, "i32": 32, "i48": 48}[name]
    return ((value + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))


def _binary_ref(tmp_path, op_name, a, b, dtype, out_dtype, attr_fn, extra_const=None):
    one = OneOp(tmp_path).input(a, dtype).input(b, dtype)
    if extra_const is not None:
        one.const(*extra_const)
    attr = one.attribute()
    attr_fn(attr)
    return one.run(getattr(OP("Op"), op_name), np.broadcast_shapes(a.shape, b.shape), out_dtype, attr)


@pytest.mark.parametrize("shift", [0, 1, 7, 15])
def test_mul_int32_shift_matches_reference(tmp_path, shift):
    a = _ints(np.int32, (4, 16), -(1 << 15), 1 << 15)
    b = _ints(np.int32, (4, 16), -(1 << 15), 1 << 15)
    ours = run_op(Op.MUL, [a, b], A.MulAttrs(shift))
    one = OneOp(tmp_path)
    theirs = _binary_ref(tmp_path, "MUL", a, b, one.dtype.INT32, one.dtype.INT32, lambda at: at.MulAttribute(),
                         ([shift], one.dtype.INT8, np.int8))
    np.testing.assert_array_equal(ours, theirs)


def test_mul_int8_widens_like_reference(tmp_path):
    a, b = _ints(np.int8, (2, 9)), _ints(np.int8, (2, 9))
    ours = run_op(Op.MUL, [a, b], A.MulAttrs(0))
    one = OneOp(tmp_path)
    theirs = _binary_ref(tmp_path, "MUL", a, b, one.dtype.INT8, one.dtype.INT32, lambda at: at.MulAttribute(),
                         ([0], one.dtype.INT8, np.int8))
    np.testing.assert_array_equal(ours, theirs)


def test_intdiv_matches_reference(tmp_path):
    a = _ints(np.int32, (5, 12), -1000, 1000)
    b = _ints(np.int32, (5, 12), -37, 37)
    b[b == 0] = 3
    ours = run_op(Op.INTDIV, [a, b])
    one = OneOp(tmp_path)
    theirs = _binary_ref(tmp_path, "INTDIV", a, b, one.dtype.INT32, one.dtype.INT32, lambda at: at.IntDivAttribute())
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("np_type,bits", [(np.int8, 8), (np.int16, 16), (np.int32, 32)])
def test_arithmetic_right_shift_round_matches_reference(tmp_path, np_type, bits):
    a = _ints(np_type, (3, 20))
    b = _ints(np_type, (3, 20), 0, bits - 1)
    ours = run_op(Op.ARITHMETIC_RIGHT_SHIFT, [a, b], A.ArithmeticRightShiftAttrs(True))
    one = OneOp(tmp_path)
    ref_t = {8: one.dtype.INT8, 16: one.dtype.INT16, 32: one.dtype.INT32}[bits]
    theirs = _binary_ref(tmp_path, "ARITHMETIC_RIGHT_SHIFT", a, b, ref_t, ref_t,
                         lambda at: at.ArithmeticRightShiftAttribute(True))
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("in_type,table_len", [(np.int8, 256), (np.int16, 513)])
def test_table_matches_reference(tmp_path, in_type, table_len):
    x = _ints(in_type, (4, 64))
    table_type = np.int8 if in_type == np.int8 else np.int16
    if table_type == np.int8:
        entries = _ints(np.int8, (table_len,))
    else:   # neighbouring entries must differ by an int16 (the spec's slope REQUIRE)
        entries = np.cumsum(_ints(np.int16, (table_len,), -120, 120)).astype(np.int16)
    ours = run_op(Op.TABLE, [x], A.TableAttrs(entries))
    one = OneOp(tmp_path)
    ref_in = one.dtype.INT8 if in_type == np.int8 else one.dtype.INT16
    one.input(x, ref_in).const(entries, ref_in, table_type)
    attr = one.attribute()
    attr.TableAttribute()
    out_t = one.dtype.INT8 if in_type == np.int8 else one.dtype.INT32
    theirs = one.run(OP("Op").TABLE, x.shape, out_t, attr)
    np.testing.assert_array_equal(ours, theirs)


def test_cast_float_to_int8_matches_reference(tmp_path):
    x = np.array([-300.0, -128.5, -127.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4999, 126.5, 127.5, 1e9, -0.0],
                 dtype=np.float32)
    ours = run_op(Op.CAST, [x], A.CastAttrs(DType.INT8))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.FP32)
    attr = one.attribute()
    attr.CastAttribute()
    theirs = one.run(OP("Op").CAST, x.shape, one.dtype.INT8, attr)
    np.testing.assert_array_equal(ours, theirs)


def _conv_zps(one, in_zp, w_zp, np_type, ref_type):
    one.const([in_zp], ref_type, np_type).const([w_zp], ref_type, np_type)


def test_conv2d_int8_matches_reference(tmp_path):
    x, w = _ints(np.int8, (2, 10, 8, 3)), _ints(np.int8, (4, 3, 2, 3))
    bias = _ints(np.int32, (4,), -1000, 1000)
    a = A.Conv2dAttrs((1, 2, 0, 1), (2, 1), (1, 2), DType.INT32, input_zp=-7, weight_zp=3)
    ours = run_op(Op.CONV2D, [x, w, bias], a)
    one = OneOp(tmp_path)
    one.input(x, one.dtype.INT8).input(w, one.dtype.INT8).input(bias, one.dtype.INT32)
    _conv_zps(one, -7, 3, np.int8, one.dtype.INT8)
    attr = one.attribute()
    attr.Conv2dAttribute([1, 2, 0, 1], [2, 1], [1, 2], False, one.dtype.INT32)
    theirs = one.run(OP("Op").CONV2D, ours.shape, one.dtype.INT32, attr)
    np.testing.assert_array_equal(ours, theirs)


def test_depthwise_conv2d_int8_matches_reference(tmp_path):
    x, w = _ints(np.int8, (1, 7, 6, 3)), _ints(np.int8, (3, 2, 3, 2))
    bias = _ints(np.int32, (6,), -1000, 1000)
    a = A.Conv2dAttrs((1, 1, 2, 0), (1, 2), (2, 1), DType.INT32, input_zp=5, weight_zp=-2)
    ours = run_op(Op.DEPTHWISE_CONV2D, [x, w, bias], a)
    one = OneOp(tmp_path)
    one.input(x, one.dtype.INT8).input(w, one.dtype.INT8).input(bias, one.dtype.INT32)
    _conv_zps(one, 5, -2, np.int8, one.dtype.INT8)
    attr = one.attribute()
    attr.DepthwiseConv2dAttribute([1, 1, 2, 0], [1, 2], [2, 1], False, one.dtype.INT32)
    theirs = one.run(OP("Op").DEPTHWISE_CONV2D, ours.shape, one.dtype.INT32, attr)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("out_pad", [(0, 0, 0, 0), (-1, 1, 2, -2), (1, -2, -1, 0)])
def test_transpose_conv2d_int8_matches_reference(tmp_path, out_pad):
    x, w = _ints(np.int8, (1, 4, 5, 2)), _ints(np.int8, (3, 3, 3, 2))
    bias = _ints(np.int32, (3,), -100, 100)
    a = A.TransposeConv2dAttrs(out_pad, (2, 3), DType.INT32, input_zp=-1, weight_zp=2)
    ours = run_op(Op.TRANSPOSE_CONV2D, [x, w, bias], a)
    one = OneOp(tmp_path)
    one.input(x, one.dtype.INT8).input(w, one.dtype.INT8).input(bias, one.dtype.INT32)
    _conv_zps(one, -1, 2, np.int8, one.dtype.INT8)
    attr = one.attribute()
    attr.TransposeConv2dAttribute(list(out_pad), [2, 3], False, one.dtype.INT32)
    theirs = one.run(OP("Op").TRANSPOSE_CONV2D, ours.shape, one.dtype.INT32, attr)
    np.testing.assert_array_equal(ours, theirs)


def test_conv2d_int16_int48_matches_reference(tmp_path):
    x, w = _ints(np.int16, (1, 5, 5, 4)), _ints(np.int8, (2, 3, 3, 4))
    bias = _ints(np.int64, (2,), -(1 << 40), 1 << 40)
    ours = run_op(Op.CONV2D, [x, w, bias], A.Conv2dAttrs((1, 1, 1, 1), (1, 1), (1, 1), DType.INT48))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.INT16).input(w, one.dtype.INT8).input(bias, one.dtype.INT48)
    one.const([0], one.dtype.INT16, np.int16).const([0], one.dtype.INT8, np.int8)
    attr = one.attribute()
    attr.Conv2dAttribute([1, 1, 1, 1], [1, 1], [1, 1], False, one.dtype.INT48)
    theirs = one.run(OP("Op").CONV2D, ours.shape, one.dtype.INT48, attr)
    np.testing.assert_array_equal(ours, theirs)


def test_matmul_int8_matches_reference(tmp_path):
    a, b = _ints(np.int8, (2, 5, 7)), _ints(np.int8, (2, 7, 3))
    ours = run_op(Op.MATMUL, [a, b], A.MatMulAttrs(a_zp=-4, b_zp=9))
    one = OneOp(tmp_path)
    one.input(a, one.dtype.INT8).input(b, one.dtype.INT8)
    one.const([-4], one.dtype.INT8, np.int8).const([9], one.dtype.INT8, np.int8)
    attr = one.attribute()
    attr.MatMulAttribute()
    theirs = one.run(OP("Op").MATMUL, ours.shape, one.dtype.INT32, attr)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("pad", [(0, 0, 0, 0), (1, 1, 1, 1), (2, 0, 1, 1)])
def test_avg_pool2d_int8_matches_reference(tmp_path, pad):
    x = _ints(np.int8, (2, 7, 9, 3))
    a = A.AvgPool2dAttrs((3, 3), (2, 2), pad, DType.INT32, input_zp=-6, output_zp=4)
    ours = run_op(Op.AVG_POOL2D, [x], a)
    one = OneOp(tmp_path)
    one.input(x, one.dtype.INT8)
    one.const([-6], one.dtype.INT8, np.int8).const([4], one.dtype.INT8, np.int8)
    attr = one.attribute()
    attr.AvgPool2dAttribute([3, 3], [2, 2], list(pad), one.dtype.INT32)
    theirs = one.run(OP("Op").AVG_POOL2D, ours.shape, one.dtype.INT8, attr)
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("mode", ["NEAREST", "BILINEAR"])
@pytest.mark.parametrize("params", [((4, 2, 4, 2), (-1, -1), (1, 1)), ((5, 3, 3, 5), (0, 2), (-2, 2)),
                                    ((2, 1, 2, 1), (0, 0), (0, 0))])
def test_resize_int8_matches_reference(tmp_path, mode, params):
    scale, offset, border = params
    x = _ints(np.int8, (1, 5, 6, 2))
    attrs = A.ResizeAttrs(scale, offset, border, mode)
    out_t = DType.INT8 if mode == "NEAREST" else DType.INT32
    graph_out = one_op_graph(Op.RESIZE, [x], attrs)[0].outputs[0].type
    ours = run_op(Op.RESIZE, [x], attrs, result_type=graph_out.with_dtype(out_t))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.INT8)
    one.shape(scale).shape(offset).shape(border)
    attr = one.attribute()
    attr.ResizeAttribute(getattr(OP("ResizeMode"), mode))
    ref_out = one.dtype.INT8 if mode == "NEAREST" else one.dtype.INT32
    theirs = one.run(OP("Op").RESIZE, ours.shape, ref_out, attr)
    np.testing.assert_array_equal(ours, theirs)


def test_negate_int8_zero_points_matches_reference(tmp_path):
    x = _ints(np.int8, (4, 32))
    ours = run_op(Op.NEGATE, [x], A.NegateAttrs(input_zp=-20, output_zp=17))
    one = OneOp(tmp_path)
    one.input(x, one.dtype.INT8)
    one.const([-20], one.dtype.INT8, np.int8).const([17], one.dtype.INT8, np.int8)
    attr = one.attribute()
    attr.NegateAttribute()
    theirs = one.run(OP("Op").NEGATE, x.shape, one.dtype.INT8, attr)
    np.testing.assert_array_equal(ours, theirs)


def test_logical_right_shift_int8_matches_reference(tmp_path):
    a, b = _ints(np.int8, (3, 16)), _ints(np.int8, (3, 16), 0, 7)
    ours = run_op(Op.LOGICAL_RIGHT_SHIFT, [a, b])
    one = OneOp(tmp_path)
    theirs = _binary_ref(tmp_path, "LOGICAL_RIGHT_SHIFT", a, b, one.dtype.INT8, one.dtype.INT8,
                         lambda at: at.LogicalRightShiftAttribute())
    np.testing.assert_array_equal(ours, theirs)


def test_clz_matches_reference(tmp_path):
    x = np.concatenate([_ints(np.int32, (30,)), np.array([0, -1, 1, 2**30, -2**31], np.int32)])
    ours = run_op(Op.CLZ, [x])
    one = OneOp(tmp_path)
    one.input(x, one.dtype.INT32)
    attr = one.attribute()
    attr.ClzAttribute()
    theirs = one.run(OP("Op").CLZ, x.shape, one.dtype.INT32, attr)
    np.testing.assert_array_equal(ours, theirs)
