"""QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear on their own, against onnxruntime,
on symbolic dims fed at two sizes: per tensor and per axis, constant and run-time scales and
zero points, int8 / uint8 / int16 / uint16, blocked scales (opset 21), and the requantization
DequantizeLinear -> QuantizeLinear that folds into one RESCALE. The float paths divide exactly
enough to round ties as ONNX does, so they must match onnxruntime exactly; the folded
requantization may differ by one unit (see ``test_quant_qdq_ops``). Also the clear errors for
what TOSA cannot express.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tosaconv.diagnostics import TosaconvError

from .harness import F32, check_with_onnxruntime, const, convert, info, make_model, one_node, rand
from .quant_models import op_histogram, qint
from .test_quant_qdq_ops import compare

I8, U8, I16, U16, I32 = (TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16,
                         TensorProto.INT32)
NUMPY = {I8: np.int8, U8: np.uint8, I16: np.int16, U16: np.uint16, I32: np.int32}
ZP = {I8: -7, U8: 131, I16: -300, U16: 40000}
DIMS, SHAPES = ["N", 3, "W"], [(2, 3, 5), (1, 3, 9)]


def _feeds(low=-4.0, high=4.0):
    return [{"x": rand(*s, low=low, high=high, seed=i)} for i, s in enumerate(SHAPES)]


@pytest.mark.parametrize("elem", [I8, U8, I16, U16], ids=["int8", "uint8", "int16", "uint16"])
def test_quantize_per_tensor(elem):
    scale = 0.031 if elem in (I8, U8) else 0.0003
    inits = [const("s", np.float32(scale)), const("z", np.array(ZP[elem], NUMPY[elem]))]
    model = one_node("QuantizeLinear", [info("x", F32, DIMS)], [info("y", elem, None)], inits, opset=21)
    check_with_onnxruntime(model, _feeds())


@pytest.mark.parametrize("opset", [10, 13, 19, 21])
def test_quantize_dequantize_at_every_opset_version(opset):
    inits = [const("s", np.float32(0.021)), const("z", np.uint8(140))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"]),
             helper.make_node("DequantizeLinear", ["y", "s", "z"], ["d"])]
    model = make_model(nodes, [info("x", F32, DIMS)], [info("y", U8, None), info("d", F32, None)], inits,
                       opset=opset)
    check_with_onnxruntime(model, _feeds())


def test_quantize_ties_round_to_even_like_onnx():
    """x / scale exactly k + 0.5 (and the multiply-by-reciprocal trap -2.5 / fl(5/255))."""
    inits = [const("s", np.float32(5 / 255)), const("z", np.int8(0))]
    model = one_node("QuantizeLinear", [info("x", F32, ["N"])], [info("y", I8, None)], inits, opset=13)
    x = np.array([-2.5, 0.5 * 5 / 255, 1.5 * 5 / 255, 2.5 * 5 / 255, 1.34, -1.0, 2.0], np.float32)
    check_with_onnxruntime(model, [{"x": x}, {"x": x[:4] * 3}])


@pytest.mark.parametrize("axis", [1, -1])
@pytest.mark.parametrize("elem", [I8, U8], ids=["int8", "uint8"])
def test_quantize_and_dequantize_per_axis(axis, elem):
    n = 3 if axis == 1 else 4
    scale = np.linspace(0.01, 0.05, n).astype(np.float32)
    zp = np.arange(n).astype(NUMPY[elem]) + (120 if elem == U8 else -2)
    inits = [const("s", scale), const("z", zp)]
    q = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=axis)
    dq = helper.make_node("DequantizeLinear", ["y", "s", "z"], ["d"], axis=axis)
    model = make_model([q, dq], [info("x", F32, ["N", 3, 4])], [info("y", elem, None), info("d", F32, None)],
                       inits, opset=13)
    check_with_onnxruntime(model, [{"x": rand(2, 3, 4, seed=1)}, {"x": rand(5, 3, 4, seed=2)}])


def test_quantize_with_run_time_scale_and_zero_point():
    inputs = [info("x", F32, DIMS), info("s", F32, [3]), info("z", I8, [3])]
    model = one_node("QuantizeLinear", inputs, [info("y", I8, None)], opset=13, axis=1)
    feeds = [dict(f, s=np.array([0.02, 0.05, 0.1], np.float32), z=np.array([-3, 0, 9], np.int8)) for f in _feeds()]
    check_with_onnxruntime(model, feeds)


@pytest.mark.parametrize("elem", [I8, I32], ids=["int8", "int32"])
def test_dequantize_graph_input(elem):
    zp = [const("z", np.array(-7, NUMPY[elem]))] if elem == I8 else []
    inputs = [info("x", elem, DIMS)]
    model = one_node("DequantizeLinear", inputs, [info("y", F32, None)], [const("s", np.float32(0.013))] + zp,
                     opset=13)
    dtype = NUMPY[elem]
    check_with_onnxruntime(model, [{"x": qint(*s, dtype=dtype, seed=i) // (1 if elem == I8 else 1000)}
                                   for i, s in enumerate(SHAPES)])


def test_dequantize_with_run_time_scale():
    inputs = [info("x", I8, DIMS), info("s", F32, []), info("z", I8, [])]
    model = one_node("DequantizeLinear", inputs, [info("y", F32, None)], opset=13)
    check_with_onnxruntime(model, [{"x": qint(*s, seed=i), "s": np.array(0.07, np.float32), "z": np.array(5, np.int8)}
                                   for i, s in enumerate(SHAPES)])


def test_blocked_quantize_and_dequantize():
    """Opset 21 blocks of 2 along axis 2 of length 5 (the last block is partial)."""
    scale = np.linspace(0.01, 0.09, 9).astype(np.float32).reshape(1, 3, 3)
    inits = [const("s", scale), const("z", np.full((1, 3, 3), -3, np.int8))]
    q = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=2, block_size=2)
    dq = helper.make_node("DequantizeLinear", ["y", "s", "z"], ["d"], axis=2, block_size=2)
    model = make_model([q, dq], [info("x", F32, ["N", 3, 5])], [info("y", I8, None), info("d", F32, None)],
                       inits, opset=21)
    check_with_onnxruntime(model, [{"x": rand(1, 3, 5, seed=1)}, {"x": rand(1, 3, 5, seed=2)}])


def test_requantize_folds_into_one_rescale():
    q1 = helper.make_node("QuantizeLinear", ["x", "s1", "z1"], ["q"])
    dq = helper.make_node("DequantizeLinear", ["q", "s1", "z1"], ["d"])
    resh = helper.make_node("Reshape", ["d", "shape"], ["r"])
    q2 = helper.make_node("QuantizeLinear", ["r", "s2", "z2"], ["y"])
    inits = [const("s1", np.float32(0.02)), const("z1", np.uint8(128)), const("s2", np.float32(0.037)),
             const("z2", np.int8(-4)), const("shape", np.array([-1, 15], np.int64))]
    model = make_model([q1, dq, resh, q2], [info("x", F32, ["N", 3, 5])], [info("y", I8, None)], inits, opset=13)
    graph = compare(model, [{"x": rand(2, 3, 5, seed=1)}, {"x": rand(7, 3, 5, seed=2)}])
    hist = op_histogram(graph, {"N": 2})
    # the second quantize is one int8 -> int8 RESCALE (after the exact uint8 -> signed-form one), no int32 step
    assert hist[("RESCALE", "i8")] == 2 and ("RESCALE", "i32") not in hist and ("MUL", "f32") in hist


def test_dynamic_quantize_linear():
    model = one_node("DynamicQuantizeLinear", [info("x", F32, DIMS)],
                     [info("y", U8, None), info("y_scale", F32, None), info("y_zero_point", U8, None)], opset=13)
    check_with_onnxruntime(model, _feeds(-3.0, 5.0) + [{"x": rand(2, 3, 4, low=0.5, high=2.0, seed=7)}])


# -- refusals ------------------------------------------------------------------------------

def _refused(model, match: str):
    with pytest.raises(TosaconvError, match=match):
        convert(model)


def test_float8_zero_point_is_refused():
    zp = helper.make_tensor("z", TensorProto.FLOAT8E4M3FN, [], [0.0])
    model = one_node("QuantizeLinear", [info("x", F32, DIMS)], [info("y", TensorProto.FLOAT8E4M3FN, None)],
                     [const("s", np.float32(0.1)), zp], opset=19)
    _refused(model, "QuantizeLinear output must be int8, uint8, int16, uint16: TOSA 1.0 has no float8")


def test_int4_data_is_refused():
    data = helper.make_tensor("w", TensorProto.INT4, [4], [1, -2, 3, 7])
    model = make_model([helper.make_node("DequantizeLinear", ["w", "s"], ["y"])], [], [info("y", F32, None)],
                       [data, const("s", np.float32(0.1))], opset=21)
    _refused(model, "DequantizeLinear input must be int8, uint8, int16, uint16 or int32")


def test_blocked_on_symbolic_axis_is_refused():
    model = one_node("QuantizeLinear", [info("x", F32, [2, "W"])], [info("y", I8, None)],
                     [const("s", np.ones((2, 3), np.float32)), const("z", np.zeros((2, 3), np.int8))],
                     opset=21, axis=1, block_size=2)
    _refused(model, "blocked quantization on symbolic axis 1 .*must be static; bind the symbol")


def test_quantize_precision_other_than_float_is_refused():
    model = one_node("QuantizeLinear", [info("x", F32, DIMS)], [info("y", I8, None)],
                     [const("s", np.float32(0.1)), const("z", np.int8(0))], opset=23,
                     precision=TensorProto.FLOAT16)
    _refused(model, "precision FLOAT16: attribute precision = anything but FLOAT .* is not supported")


def test_dynamic_quantize_of_float16_is_refused():
    model = one_node("DynamicQuantizeLinear", [info("x", TensorProto.FLOAT16, DIMS)],
                     [info("y", U8, None), info("s", TensorProto.FLOAT16, None), info("z", U8, None)], opset=13)
    _refused(model, "DynamicQuantizeLinear takes float32 input")
