"""QLinearConv, QLinearMatMul, ConvInteger and MatMulInteger against onnxruntime, on symbolic dims
fed at two sizes.

The QLinear ops are requantized with RESCALE, so they may differ from onnxruntime by one unit
on a few elements (see ``test_quant_qdq_ops``); with scales known only at run time they stay
float and likewise agree to one unit. ConvInteger and MatMulInteger are exact integer
arithmetic and must match exactly, including MatMulInteger behind DynamicQuantizeLinear (a
uint8 zero point known only at run time: int16 operands, int48 accumulator). int8 model inputs
are fed directly; uint8 data comes from a QuantizeLinear inside the model (tosaconv refuses
uint8 model inputs). Also the clear errors for the variants TOSA cannot express exactly.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from tosaconv.diagnostics import TosaconvError

from .harness import F32, check_with_onnxruntime, const, convert, info, make_model, rand, run_graph
from .quant_models import I8, I32, U8, output_core, qint
from .test_quant_qdq_ops import assert_within_one_lsb, compare

CONV_SHAPES = [(2, 4, 9, 7), (1, 4, 6, 10)]


def _qlinear_conv_inits(cout: int, cin_per_group: int, per_channel: bool, w_dtype=np.int8):
    rng = np.random.default_rng(1)
    ws = rng.uniform(0.002, 0.01, cout) if per_channel else np.array(0.005)
    return [const("xs", np.float32(0.05)), const("w", qint(cout, cin_per_group, 3, 3, dtype=w_dtype, seed=2)),
            const("ws", ws.astype(np.float32)), const("wz", np.zeros(np.shape(ws), w_dtype)),
            const("ys", np.float32(0.2)), const("B", rng.integers(-500, 500, cout).astype(np.int32))]


@pytest.mark.parametrize("group,cout", [(1, 6), (4, 8)], ids=["conv", "depthwise"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_qlinear_conv_int8(group, cout, per_channel):
    inits = _qlinear_conv_inits(cout, 4 // group, per_channel) + [const("xz", np.int8(3)), const("yz", np.int8(-4))]
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "B"], ["y"],
                            pads=[1, 0, 1, 2], strides=[2, 1], dilations=[1, 2], group=group)
    model = make_model([node], [info("x", I8, ["N", 4, "H", "W"])], [info("y", I8, None)], inits, opset=13)
    graph = compare(model, [{"x": qint(*s, seed=i)} for i, s in enumerate(CONV_SHAPES)])
    assert output_core(graph, {"N": 1, "H": 6, "W": 10}).op.name == ("CONV2D" if group == 1 else "DEPTHWISE_CONV2D")


def test_qlinear_conv_uint8_from_float_input():
    inits = _qlinear_conv_inits(5, 4, True) + [const("xz", np.uint8(128)), const("yz", np.uint8(110))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("QLinearConv", ["xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "B"], ["y"],
                              auto_pad="SAME_UPPER")]
    model = make_model(nodes, [info("x", F32, ["N", 4, "H", "W"])], [info("y", U8, None)], inits, opset=13)
    # onnxruntime's u8s8 QLinearConv saturates int16 sums on x86 CPUs without VNNI, so the onnx
    # package's reference evaluator is the judge here
    graph = convert(model)
    for i, shape in enumerate(CONV_SHAPES):
        feeds = {"x": rand(*shape, low=-6, high=6, seed=i)}
        assert_within_one_lsb(run_graph(graph, feeds)[0], ReferenceEvaluator(model).run(None, feeds)[0])


def _qlinear_matmul(a_elem, b, b_scale, a_dims, runtime_scales: bool = False):
    zp_type = np.int8 if a_elem == I8 else np.uint8
    scales = [] if runtime_scales else [const("as", np.float32(0.04)), const("ys", np.float32(0.08))]
    inits = scales + [const("az", np.array(-3 if a_elem == I8 else 125, zp_type)), const("b", b),
                      const("bs", b_scale), const("bz", np.zeros(np.shape(b_scale), np.int8)),
                      const("yz", np.array(6 if a_elem == I8 else 130, zp_type))]
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    inputs = [info("a", a_elem, a_dims)] + ([info("as", F32, []), info("ys", F32, [])] if runtime_scales else [])
    return make_model([node], inputs, [info("y", a_elem, None)], inits, opset=13)


@pytest.mark.parametrize("per_column", [False, True], ids=["per_tensor", "per_column"])
def test_qlinear_matmul_int8(per_column):
    b_scale = np.linspace(0.005, 0.02, 12).astype(np.float32) if per_column else np.float32(0.01)
    model = _qlinear_matmul(I8, qint(16, 12, seed=3), b_scale, ["N", "S", 16])
    graph = compare(model, [{"a": qint(2, 5, 16, seed=1)}, {"a": qint(3, 2, 16, seed=2)}])
    assert output_core(graph, {"N": 2, "S": 5}).op.name == "MATMUL"


def test_qlinear_matmul_with_run_time_scales_stays_float():
    model = _qlinear_matmul(I8, qint(16, 12, seed=3), np.float32(0.01), ["N", 16], runtime_scales=True)
    scales = {"as": np.array(0.04, np.float32), "ys": np.array(0.08, np.float32)}
    graph = compare(model, [dict(scales, a=qint(9, 16, seed=1)), dict(scales, a=qint(4, 16, seed=2))])
    assert output_core(graph, {"N": 4}).op.name == "CAST"


def _matmul_integer(a_elem, a_dims, b, a_zp, b_zp, runtime_a_zp=False):
    inits = [const("b", b), const("bz", b_zp)] + ([] if runtime_a_zp else [const("az", a_zp)])
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    inputs = [info("a", a_elem, a_dims)] + ([info("az", a_elem, [])] if runtime_a_zp else [])
    return make_model([node], inputs, [info("y", I32, None)], inits, opset=13)


@pytest.mark.parametrize("b_zp", [np.int8(2), np.arange(-3, 3).astype(np.int8)], ids=["scalar", "per_column"])
def test_matmul_integer_exact(b_zp):
    model = _matmul_integer(I8, ["N", "S", 20], qint(20, 6, seed=3), np.int8(-5), b_zp)
    check_with_onnxruntime(model, [{"a": qint(2, 3, 20, seed=1)}, {"a": qint(1, 7, 20, seed=2)}])


def test_matmul_integer_with_run_time_zero_point_is_exact():
    model = _matmul_integer(I8, ["N", 300], qint(300, 6, seed=3), None, np.int8(1), runtime_a_zp=True)
    check_with_onnxruntime(model, [{"a": qint(2, 300, seed=1), "az": np.array(-77, np.int8)},
                                   {"a": qint(5, 300, seed=2), "az": np.array(120, np.int8)}])


def test_dynamic_quantize_then_matmul_integer():
    """ONNX Runtime's dynamic quantization pattern: a uint8 activation and zero point computed at run time."""
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             helper.make_node("MatMulInteger", ["xq", "w", "xz"], ["acc"]),
             helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["accf", "xs"], ["y"])]
    model = make_model(nodes, [info("x", F32, ["N", "S", 64])], [info("acc", I32, None), info("y", F32, None)],
                       [const("w", qint(64, 10, seed=4))], opset=13)
    # exact integers: the onnx package's reference evaluator, since onnxruntime's u8s8 MatMulInteger
    # saturates int16 sums on x86 CPUs without VNNI
    graph = convert(model)
    for feeds in ({"x": rand(2, 3, 64, seed=1)}, {"x": rand(1, 5, 64, low=-0.5, high=3, seed=2)}):
        got, want = run_graph(graph, feeds), ReferenceEvaluator(model).run(None, feeds)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def _conv_integer(w_zp):
    inits = [const("w", qint(4, 3, 2, 2, seed=8) // 2), const("xz", np.int8(5)), const("wz", w_zp)]
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[0, 1, 1, 0])
    return make_model([node], [info("x", I8, ["N", 3, "H", "W"])], [info("y", I32, None)], inits, opset=13)


def test_conv_integer_exact():
    check_with_onnxruntime(_conv_integer(np.int8(-3)), [{"x": qint(2, 3, 6, 5, seed=2)},
                                                        {"x": qint(1, 3, 9, 4, seed=3)}])


def test_conv_integer_per_channel_zero_points_exact():
    """onnxruntime has no per-channel ConvInteger; the onnx package's reference evaluator does."""
    model = _conv_integer(np.array([1, -2, 0, 3], np.int8))
    graph = convert(model)
    for i, shape in enumerate([(2, 3, 6, 5), (1, 3, 9, 4)]):
        feeds = {"x": qint(*shape, seed=i)}
        np.testing.assert_array_equal(run_graph(graph, feeds)[0], ReferenceEvaluator(model).run(None, feeds)[0])


# -- refusals ------------------------------------------------------------------------------

def _refused(model, match: str):
    with pytest.raises(TosaconvError, match=match):
        convert(model)


def test_grouped_conv_integer_is_refused():
    node = helper.make_node("ConvInteger", ["x", "w"], ["y"], group=2)
    model = make_model([node], [info("x", I8, ["N", 4, 5, 5])], [info("y", I32, None)],
                       [const("w", qint(4, 2, 3, 3))], opset=13)
    _refused(model, "ConvInteger cannot be expressed with TOSA integer ops: a grouped convolution")


def test_conv_integer_with_run_time_zero_point_is_refused():
    node = helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"])
    model = make_model([node], [info("x", I8, ["N", 3, 5, 5]), info("xz", I8, [])], [info("y", I32, None)],
                       [const("w", qint(4, 3, 3, 3))], opset=13)
    _refused(model, "ConvInteger x_zero_point 'xz': input x_zero_point computed from tensor data at run time "
                    "is not supported")


def test_matmul_integer_with_per_row_zero_points_is_refused():
    model = _matmul_integer(I8, [4, 6], qint(6, 3), np.arange(4).astype(np.int8), np.int8(0))
    _refused(model, "MatMulInteger cannot be expressed .*per-axis")
