"""Bit-exactness of the quantized programs against the official TOSA reference model.

Each model is imported with symbolic dims, specialized at two bindings and emitted as TOSA 1.0;
the reference model runs the ``.tosa`` and its integer outputs must EQUAL our numpy
interpreter's run of the same static program (``harness.check_reference_model``; float outputs,
such as DynamicQuantizeLinear's scale, within 1e-5). This covers every integer path the
quantization converters emit: int8 CONV2D / DEPTHWISE_CONV2D / MATMUL with zero points and int32
biases, per-channel RESCALE, RESCALE to and from unsigned storage, the int32 ADD of rescaled
inputs, int16 MATMUL with an int48 accumulator rescaled to int32, the clamps in int32, and the
float QuantizeLinear (corrected division, CAST rounding, saturation).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tosaconv.emit import read_tosa

from .harness import F32, check_reference_model, const, convert, info, make_model, one_node, rand, run_graph
from .harness import specialize_and_emit
from .quant_models import (I8, I32, U8, qdq_add, qdq_conv, qdq_gemm, qdq_matmul, qdq_matmul_large_ratio,
                           qdq_two_convs, qint)


def _check(model, feed_sets, tmp_path):
    graph = convert(model)
    for i, feeds in enumerate(feed_sets):
        static, tosa = specialize_and_emit(graph, {k: np.shape(v) for k, v in feeds.items()})
        got = run_graph(read_tosa(tosa), feeds)
        assert any(g.dtype.kind == "i" for g in got)
        check_reference_model(tosa, static, feeds, got, tmp_path / str(i))


def _float_feeds(*shapes, names=("x",), low=-3.0, high=3.0):
    return [{n: rand(*s, low=low, high=high, seed=7 * i + j) for j, (n, s) in enumerate(zip(names, ss))}
            for i, ss in enumerate(shapes)]


QDQ = {
    "conv_uint8_per_channel": (lambda: qdq_conv(U8, True, strides=[2, 1]), [[(2, 3, 9, 7)], [(1, 3, 6, 11)]]),
    "conv_int8_per_tensor": (lambda: qdq_conv(I8, False), [[(1, 3, 5, 5)], [(3, 3, 4, 8)]]),
    "depthwise_int8": (lambda: qdq_conv(I8, True, cin=4, cout=8, group=4), [[(2, 4, 9, 7)], [(1, 4, 5, 12)]]),
    "matmul_uint8_per_channel": (lambda: qdq_matmul(U8, True), [[(2, 5, 16)], [(3, 2, 16)]]),
    "gemm_int8_per_channel": (lambda: qdq_gemm(I8, True), [[(40, 16)], [(7, 16)]]),
    "conv_clip_int8": (lambda: qdq_conv(I8, True, activation=(-0.3, 0.8)), [[(1, 3, 5, 5)], [(2, 3, 7, 4)]]),
    "two_convs_uint8": (lambda: qdq_two_convs(U8), [[(2, 3, 9, 7)], [(1, 3, 6, 12)]]),
    "matmul_large_ratio": (qdq_matmul_large_ratio, [[(30, 16)], [(9, 16)]]),
}


@pytest.mark.parametrize("name", sorted(QDQ))
def test_qdq_model(name, tmp_path):
    build, shapes = QDQ[name]
    _check(build(), _float_feeds(*shapes), tmp_path)


@pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
def test_qdq_add(act, tmp_path):
    _check(qdq_add(act), _float_feeds([(2, 3, 40), (1, 3, 1)], [(5, 3, 17), (1, 3, 1)], names=("x", "x2")),
           tmp_path)


def test_qlinear_conv_and_matmul(tmp_path):
    rng = np.random.default_rng(3)
    inits = [const("xs", np.float32(0.05)), const("xz", np.int8(3)), const("w", qint(6, 4, 3, 3, seed=2)),
             const("ws", rng.uniform(0.002, 0.01, 6).astype(np.float32)), const("wz", np.zeros(6, np.int8)),
             const("ys", np.float32(0.2)), const("yz", np.int8(-4)), const("B", rng.integers(-500, 500, 6, np.int32)),
             const("b", qint(7, 5, seed=4)), const("bs", np.float32(0.01)), const("bz", np.int8(2)),
             const("zs", np.float32(0.3)), const("zz", np.int8(1))]
    nodes = [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "B"], ["c"],
                              pads=[1, 1, 1, 1]),
             helper.make_node("QLinearMatMul", ["c", "ys", "yz", "b", "bs", "bz", "zs", "zz"], ["y"])]
    model = make_model(nodes, [info("x", I8, ["N", 4, "H", 7])], [info("y", I8, None)], inits, opset=13)
    _check(model, [{"x": qint(2, 4, 5, 7, seed=1)}, {"x": qint(1, 4, 8, 7, seed=2)}], tmp_path)


def test_dynamic_quantize_then_integer_ops(tmp_path):
    """int16 MATMUL (run-time zero point), exact int32 results, and DynamicQuantizeLinear's own outputs."""
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
             helper.make_node("MatMulInteger", ["xq", "w", "xz"], ["acc"]),
             helper.make_node("ConvInteger", ["img", "k", "kz"], ["conv"], pads=[1, 1, 1, 1])]
    model = make_model(nodes, [info("x", F32, ["N", 24]), info("img", I8, ["N", 2, 5, "W"])],
                       [info("xq", U8, None), info("xs", F32, None), info("xz", U8, None), info("acc", I32, None),
                        info("conv", I32, None)],
                       [const("w", qint(24, 6, seed=4)), const("k", qint(3, 2, 3, 3, seed=5)),
                        const("kz", np.int8(-2))],
                       opset=13)
    feeds = [{"x": rand(3, 24, seed=1), "img": qint(3, 2, 5, 6, seed=2)},
             {"x": rand(1, 24, low=0.1, high=4, seed=3), "img": qint(1, 2, 5, 9, seed=4)}]
    _check(model, feeds, tmp_path)


@pytest.mark.parametrize("elem,zp", [(I8, -9), (U8, 200)], ids=["int8", "uint8"])
def test_float_quantize_per_axis_and_blocked(elem, zp, tmp_path):
    dtype = np.int8 if elem == I8 else np.uint8
    inits = [const("s", np.linspace(0.01, 0.05, 3).astype(np.float32)), const("z", np.full(3, zp, dtype)),
             const("bs", np.linspace(0.02, 0.06, 12).astype(np.float32).reshape(2, 2, 3)),
             const("bz", np.full((2, 2, 3), zp, dtype))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=2),
             helper.make_node("QuantizeLinear", ["x2", "bs", "bz"], ["yb"], axis=1, block_size=3)]
    inputs = [info("x", F32, ["N", 4, 3]), info("x2", F32, [2, 5, 3])]     # blocks of 3 on an axis of 5
    model = make_model(nodes, inputs, [info("y", elem, None), info("yb", elem, None)], inits, opset=21)
    _check(model, _float_feeds([(2, 4, 3), (2, 5, 3)], [(5, 4, 3), (2, 5, 3)], names=("x", "x2"), low=-4, high=4),
           tmp_path)


def test_int16_quantize_dequantize(tmp_path):
    inits = [const("s", np.float32(0.0007)), const("z", np.int16(-1200))]
    model = one_node("QuantizeLinear", [info("x", F32, ["N", 8])], [info("y", 5, None)], inits, opset=21)
    _check(model, _float_feeds([(3, 8)], [(6, 8)], low=-30, high=30), tmp_path)


def test_cast_rounds_ties_to_even(tmp_path):
    """ONNX rounds x / scale half to even; TOSA's float-to-int CAST must do the same (checked on exact ties)."""
    inits = [const("s", np.float32(0.5)), const("z", np.int8(0))]
    model = one_node("QuantizeLinear", [info("x", F32, ["N"])], [info("y", I8, None)], inits, opset=13)
    x = np.array([-1.25, -0.75, -0.25, 0.25, 0.75, 1.25, 63.75], np.float32)      # x / 0.5 = k + 0.5
    graph = convert(model)
    static, tosa = specialize_and_emit(graph, {"x": x.shape})
    got = run_graph(read_tosa(tosa), {"x": x})
    np.testing.assert_array_equal(got[0], np.array([-2, -2, 0, 0, 2, 2, 127], np.int8))
    check_reference_model(tosa, static, {"x": x}, got, tmp_path)
