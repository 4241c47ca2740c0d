"""Logic, bitwise and classification ops against onnxruntime on symbolic
input dims run at several shapes, with numpy broadcasting between the
operands: And, Or, Xor (bool), BitwiseAnd/Or/Xor/Not (int8, int16, int32,
int64), GreaterOrEqual and LessOrEqual (float, int8, int16, int32, int64;
TOSA compares int32 and floats only, so narrow integers are widened), Equal,
Greater and Less on int8/int16/bool, IsNaN and IsInf with every combination
of detect_positive / detect_negative on data holding NaN and infinities.
Also the clear error for BitwiseNot on floating-point data.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from tosaconv.diagnostics import TosaconvError

from .harness import BOOL, F32, I32, I64, check_with_onnxruntime, convert, info, one_node, rand

I8, I16 = TensorProto.INT8, TensorProto.INT16
NUMPY = {BOOL: np.bool_, I8: np.int8, I16: np.int16, I32: np.int32, I64: np.int64, F32: np.float32}
SHAPES = [(2, 3, 4), (1, 3, 1), (3, 3, 2)]


def _data(elem, shape, seed):
    rng = np.random.default_rng(seed)
    if elem == BOOL:
        return rng.integers(0, 2, shape).astype(bool)
    if elem == F32:
        return rng.integers(-3, 4, shape).astype(np.float32)    # small integers: many ties
    return rng.integers(-100, 100, shape).astype(NUMPY[elem])


def _binary(op, elem, out_elem, opset):
    """``a`` is [N, 3, W] and ``b`` is [3, 1], so the operands broadcast against each other."""
    return one_node(op, [info("a", elem, ["N", 3, "W"]), info("b", elem, [3, 1])], [info("y", out_elem, None)],
                    opset=opset)


def _binary_feeds(elem):
    return [{"a": _data(elem, s, i), "b": _data(elem, (3, 1), 10 + i)} for i, s in enumerate(SHAPES)]


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
@pytest.mark.parametrize("opset", [11, 21])
def test_logical(op, opset):
    check_with_onnxruntime(_binary(op, BOOL, BOOL, opset), _binary_feeds(BOOL))


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("elem", [I8, I16, I32, I64], ids=["i8", "i16", "i32", "i64"])
def test_bitwise(op, elem):
    check_with_onnxruntime(_binary(op, elem, elem, 18), _binary_feeds(elem))


@pytest.mark.parametrize("elem", [I8, I16, I32, I64], ids=["i8", "i16", "i32", "i64"])
def test_bitwise_not(elem):
    model = one_node("BitwiseNot", [info("x", elem, ["N", 3, "W"])], [info("y", elem, None)], opset=18)
    check_with_onnxruntime(model, [{"x": _data(elem, s, i)} for i, s in enumerate(SHAPES)])


@pytest.mark.parametrize("op", ["GreaterOrEqual", "LessOrEqual", "Equal", "Greater", "Less"])
@pytest.mark.parametrize("elem", [F32, I8, I16, I32, I64], ids=["f32", "i8", "i16", "i32", "i64"])
@pytest.mark.parametrize("opset", [12, 16, 21])
def test_comparisons(op, elem, opset):
    check_with_onnxruntime(_binary(op, elem, BOOL, opset), _binary_feeds(elem))


def test_bool_equality():
    check_with_onnxruntime(_binary("Equal", BOOL, BOOL, 13), _binary_feeds(BOOL))


def _special_values(shape, seed):
    x = rand(*shape, seed=seed)
    flat = x.reshape(-1)
    flat[::3] = np.inf
    flat[1::4] = -np.inf
    flat[2::5] = np.nan
    return x


@pytest.mark.parametrize("opset", [13, 20])
def test_is_nan(opset):
    model = one_node("IsNaN", [info("x", F32, ["N", 3, "W"])], [info("y", BOOL, None)], opset=opset)
    check_with_onnxruntime(model, [{"x": _special_values(s, i)} for i, s in enumerate(SHAPES)])


@pytest.mark.parametrize("positive", [0, 1])
@pytest.mark.parametrize("negative", [0, 1])
@pytest.mark.parametrize("opset", [11, 20])
def test_is_inf(positive, negative, opset):
    model = one_node("IsInf", [info("x", F32, ["N", 3, "W"])], [info("y", BOOL, None)], opset=opset,
                     detect_positive=positive, detect_negative=negative)
    check_with_onnxruntime(model, [{"x": _special_values(s, i)} for i, s in enumerate(SHAPES)])


def test_bitwise_not_of_floats_is_refused():
    model = one_node("BitwiseNot", [info("x", F32, ["N"])], [info("y", F32, None)], opset=18)
    with pytest.raises(TosaconvError, match="BitwiseNot is defined for integers, not f32"):
        convert(model)
