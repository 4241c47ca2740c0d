"""QDQ models against onnxruntime: the folding of DequantizeLinear -> Conv / depthwise Conv / MatMul /
Gemm / Add -> QuantizeLinear into integer TOSA, per tensor and per output channel, int8 and uint8
activations, on symbolic dims fed at two sizes.

Why results may differ by one unit: tosaconv computes the exact integer accumulator and
requantizes it with RESCALE, a 32-bit fixed-point multiply that rounds half *up*;
onnxruntime either computes the float graph (rounding errors in the float accumulation, then
round half to even) or its own fused kernel (a float32 scale multiply, round half to even).
The two agree except where the exact result lies within float rounding of ``k + 0.5``, and
there by exactly one unit. So each comparison asserts ``max |diff| <= 1`` and that at most
``MAX_ONE_LSB_FRACTION`` of the elements differ at all (measured: well under 1%).
Each test also checks that the fold happened (integer CONV2D / MATMUL in the static program
and no float one), and that a pattern the fold does not take still matches.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv import api

from .harness import convert, rand, run_graph, run_onnxruntime
from .quant_models import (I8, U8, op_histogram, output_core, qdq_add, qdq_conv, qdq_gemm, qdq_matmul,
                           qdq_matmul_large_ratio, qdq_two_convs)

MAX_ONE_LSB_FRACTION = 0.02


def assert_within_one_lsb(got, want, what: str = "output"):
    """Integer outputs equal up to one unit on a few elements (see the module docstring)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    diff = np.abs(got.astype(want.dtype).astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1, f"{what}: max |diff| {diff.max()} > 1"
    assert (diff > 0).mean() <= MAX_ONE_LSB_FRACTION, f"{what}: {(diff > 0).mean():.1%} of elements differ"


def compare(model, feed_sets):
    graph = convert(model)
    for i, feeds in enumerate(feed_sets):
        (got,), (want,) = run_graph(graph, feeds), run_onnxruntime(model, feeds, optimize=False)
        assert_within_one_lsb(got, want, f"feed set {i} {[np.shape(v) for v in feeds.values()]}")
    return graph


def _folded(graph, bindings, op: str, operand_dtype: str = "i8"):
    """The output is computed by an integer ``op`` (the float one was folded away)."""
    core = output_core(graph, bindings)
    assert (core.op.name, core.operands[0].type.dtype.value) == (op, operand_dtype), core
    if op != "ADD":      # float ADDs remain in the QuantizeLinear of the float model input
        assert (op, "f32") not in op_histogram(graph, bindings)
    return core


CONV_SHAPES = [(2, 3, 9, 7), (1, 3, 6, 11)]


@pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_qdq_conv(act, per_channel, bias):
    model = qdq_conv(act, per_channel, bias=bias, strides=[2, 1])
    graph = compare(model, [{"x": rand(*s, low=-3, high=3, seed=i)} for i, s in enumerate(CONV_SHAPES)])
    _folded(graph, {"N": 2, "H": 9, "W": 7}, "CONV2D")


@pytest.mark.parametrize("activation", ["Relu", (-0.3, 0.8)], ids=["relu", "clip"])
@pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
def test_qdq_conv_relu_and_clip(act, activation):
    """A Relu or Clip between Conv and QuantizeLinear is an int8 CLAMP after the RESCALE."""
    model = qdq_conv(act, True, activation=activation)
    graph = compare(model, [{"x": rand(*s, low=-3, high=3, seed=i)} for i, s in enumerate(CONV_SHAPES)])
    _folded(graph, {"N": 2, "H": 9, "W": 7}, "CONV2D")
    assert ("CLAMP", "i8") in op_histogram(graph, {"N": 2, "H": 9, "W": 7})


@pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
def test_qdq_depthwise_conv(act):
    model = qdq_conv(act, True, cin=4, cout=8, group=4)
    shapes = [(2, 4, 9, 7), (1, 4, 5, 12)]
    graph = compare(model, [{"x": rand(*s, low=-3, high=3, seed=i)} for i, s in enumerate(shapes)])
    _folded(graph, {"N": 1, "H": 5, "W": 12}, "DEPTHWISE_CONV2D")


@pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_qdq_matmul(act, per_channel):
    graph = compare(qdq_matmul(act, per_channel), [{"x": rand(2, 5, 16, seed=1)}, {"x": rand(3, 9, 16, seed=2)}])
    _folded(graph, {"N": 2, "S": 5}, "MATMUL")


def test_qdq_matmul_with_a_large_requantization_ratio():
    """sx * sw / sy = 2 needs a RESCALE shift of 29: the int32 accumulator is clamped into its range first."""
    graph = compare(qdq_matmul_large_ratio(), [{"x": rand(30, 16, seed=1)}, {"x": rand(9, 16, low=-0.5, seed=2)}])
    _folded(graph, {"N": 9}, "MATMUL")
    static = api.specialize(graph, {"N": 9})
    (matmul,) = [op for op in static.ops if op.op.name == "MATMUL"]
    assert [op.op.name for op in static.ops if matmul.result in op.operands] == ["MAXIMUM"]


@pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_qdq_gemm_with_alpha_beta_and_float_bias(act, per_channel):
    graph = compare(qdq_gemm(act, per_channel), [{"x": rand(40, 16, seed=1)}, {"x": rand(7, 16, seed=2)}])
    _folded(graph, {"N": 7}, "MATMUL")


@pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
def test_qdq_add_with_broadcast(act):
    feeds = [{"x": rand(2, 3, 40, seed=i), "x2": rand(1, 3, 1, seed=9 + i)} for i in range(2)]
    feeds[1]["x"] = rand(5, 3, 17, seed=4)
    graph = compare(qdq_add(act), feeds)
    core = _folded(graph, {"N": 2, "W": 40}, "ADD", "i32")
    assert [v.producer.op.name for v in core.operands] == ["RESCALE", "RESCALE"]


@pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
def test_two_qdq_convs_pass_integers_directly(act):
    """The second fold reads the first one's int8 result: no float op and no RESCALE back and forth."""
    graph = compare(qdq_two_convs(act), [{"x": rand(2, 3, 9, 7, low=-3, high=3, seed=1)},
                                          {"x": rand(1, 3, 6, 12, low=-3, high=3, seed=2)}])
    static = api.specialize(graph, {"N": 1, "H": 6, "W": 12})
    convs = [op for op in static.ops if op.op.name == "CONV2D"]
    assert [c.operands[0].type.dtype.value for c in convs] == ["i8", "i8"]
    between = convs[1].operands[0].producer
    while between.op.name in ("TRANSPOSE", "SLICE"):
        between = between.operands[0].producer
    assert between.op.name == "CLAMP", between       # the Relu of the first conv, in int8


def test_grouped_conv_is_not_folded_and_stays_correct():
    """group=2 with 2 input channels per group is neither CONV2D nor DEPTHWISE: the float path is used."""
    model = qdq_conv(U8, True, cin=4, cout=6, group=2)
    graph = compare(model, [{"x": rand(1, 4, 8, 8, low=-3, high=3, seed=3)}, {"x": rand(2, 4, 5, 6, seed=4)}])
    hist = op_histogram(graph, {"N": 1, "H": 8, "W": 8})
    assert hist.get(("CONV2D", "f32"), 0) == 2 and ("CONV2D", "i8") not in hist, hist
    assert output_core(graph, {"N": 1, "H": 8, "W": 8}).op.name == "CAST"     # the float QuantizeLinear
