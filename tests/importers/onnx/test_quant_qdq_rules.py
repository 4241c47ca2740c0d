"""The all-integer QDQ rules: every op between DequantizeLinear and QuantizeLinear that has an integer
TOSA form becomes integer TOSA, and agrees with onnxruntime run node by node (ONNX's own definition:
dequantize, float op, quantize) to one unit on a few elements; the official reference model runs the
emitted program bit for bit like our interpreter.

Each model quantizes its float input(s) (that QuantizeLinear is float: ``--int-io`` removes it), runs
``DQ -> op -> Q`` and returns the quantized tensor. The static program must hold no float op beyond the
input quantization.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tosaconv import api

from .harness import check_reference_model, const, convert, rand, run_graph, run_onnxruntime, specialize_and_emit
from .harness import info as vinfo
from .quant_models import I8, U8, ZERO_POINTS, finish, quantized_input
from .test_quant_qdq_ops import assert_within_one_lsb

F = TensorProto.FLOAT
SHAPE = (2, 4, 6, 5)


def _unary(op_type: str, act: int, out_scale: float = 0.02, extra=(), inits=(), opset: int = 13, **attrs):
    x_inits, x_nodes = quantized_input("x", act, 0.03, ZERO_POINTS[act][0])
    node = helper.make_node(op_type, ["x_d", *extra], ["c"], **attrs)
    return finish(x_nodes + [node], x_inits + list(inits), [vinfo("x", F, list(SHAPE))], act, out_scale, opset=opset)


def _binary(op_type: str, act: int, out_scale: float = 0.05, shape2=SHAPE, **attrs):
    a_inits, a_nodes = quantized_input("x", act, 0.03, ZERO_POINTS[act][0])
    b_inits, b_nodes = quantized_input("x2", act, 0.017, ZERO_POINTS[act][0] - 7)
    node = helper.make_node(op_type, ["x_d", "x2_d"], ["c"], **attrs)
    inputs = [vinfo("x", F, list(SHAPE)), vinfo("x2", F, list(shape2))]
    return finish(a_nodes + b_nodes + [node], a_inits + b_inits, inputs, act, out_scale)


def _hard_swish_by_hand(act: int):
    """PaddleOCR's hard-swish: x * Clip(x + 3, 0, 6) / 6 with the 3 a dequantized rank-0 constant."""
    x_inits, x_nodes = quantized_input("x", act, 0.03, ZERO_POINTS[act][0])
    inits = x_inits + [const("three", np.int8(100)), const("three_s", np.float32(0.03)),
                       const("lo", np.float32(0)), const("hi", np.float32(6)), const("six", np.float32(6))]
    nodes = x_nodes + [helper.make_node("DequantizeLinear", ["three", "three_s"], ["three_d"]),
                       helper.make_node("Add", ["x_d", "three_d"], ["p"]),
                       helper.make_node("Clip", ["p", "lo", "hi"], ["cl"]),
                       helper.make_node("Mul", ["x_d", "cl"], ["m"]),
                       helper.make_node("Div", ["m", "six"], ["c"])]
    return finish(nodes, inits, [vinfo("x", F, list(SHAPE))], act, 0.02)


CASES = {
    "Sigmoid": lambda a: _unary("Sigmoid", a, 1 / 256),
    "Tanh": lambda a: _unary("Tanh", a, 1 / 128),
    "HardSigmoid": lambda a: _unary("HardSigmoid", a, 1 / 256, alpha=0.2, beta=0.5),
    "HardSwish": lambda a: _unary("HardSwish", a, opset=14),
    "LeakyRelu": lambda a: _unary("LeakyRelu", a, alpha=0.1),
    "Relu": lambda a: _unary("Relu", a),
    "Erf": lambda a: _unary("Erf", a, 1 / 128),
    "Exp": lambda a: _unary("Exp", a, 0.2),
    "Softplus": lambda a: _unary("Softplus", a),
    "hard_swish_by_hand": _hard_swish_by_hand,
    "Reshape": lambda a: _unary("Reshape", a, 0.03, extra=["shape"], inits=[const("shape", np.array([2, -1], np.int64))]),
    "Transpose": lambda a: _unary("Transpose", a, 0.05, perm=[0, 2, 3, 1]),
    "MaxPool": lambda a: _unary("MaxPool", a, 0.04, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    "AveragePool": lambda a: _unary("AveragePool", a, 0.03, kernel_shape=[2, 2], strides=[2, 2]),
    "GlobalAveragePool": lambda a: _unary("GlobalAveragePool", a, 0.004),
    "ReduceMean": lambda a: _unary("ReduceMean", a, 0.004, axes=[2, 3]),
    "Softmax": lambda a: _unary("Softmax", a, 1 / 256, axis=-1),
    "Mul": lambda a: _binary("Mul", a, 0.1),
    "Sub": lambda a: _binary("Sub", a),
    "Max": lambda a: _binary("Max", a, 0.04, shape2=(1, 4, 1, 1)),
    "Min": lambda a: _binary("Min", a, 0.04),
    "Concat": lambda a: _binary("Concat", a, 0.04, axis=1),
    "MatMul": lambda a: _binary("MatMul", a, 0.3, shape2=(2, 4, 5, 3)),
    "Where": lambda a: _where(a),
    "Div_then_GlobalAveragePool": lambda a: _div_then("GlobalAveragePool", a),
    "Div_then_Resize": lambda a: _div_then("Resize", a),
}


def _div_then(op_type: str, act: int):
    """A float Div by a constant left between quantized ops (as onnxruntime's quantizer leaves a hard-swish's
    ``/ 6``), then an op that has an integer form: the Div only scales the dequantization."""
    x_inits, x_nodes = quantized_input("x", act, 0.03, ZERO_POINTS[act][0])
    inits = x_inits + [const("six", np.float32(6.0)), const("scales", np.array([1, 1, 2, 2], np.float32))]
    extra = ["", "scales"] if op_type == "Resize" else []
    nodes = x_nodes + [helper.make_node("Div", ["x_d", "six"], ["d"]),
                       helper.make_node(op_type, ["d", *extra], ["c"], **({"mode": "nearest"} if extra else {}))]
    return finish(nodes, inits, [vinfo("x", F, list(SHAPE))], act, 0.0041)   # no exact ties with 0.03 / 6


def _where(act: int):
    """Where(x > 0.5, x, x2): the condition is computed in float from the dequantized x (as a model does)."""
    a_inits, a_nodes = quantized_input("x", act, 0.03, ZERO_POINTS[act][0])
    b_inits, b_nodes = quantized_input("x2", act, 0.017, ZERO_POINTS[act][0] - 7)
    nodes = a_nodes + b_nodes + [helper.make_node("Greater", ["x_d", "half"], ["cond"]),
                                 helper.make_node("Where", ["cond", "x_d", "x2_d"], ["c"])]
    inputs = [vinfo("x", F, list(SHAPE)), vinfo("x2", F, list(SHAPE))]
    return finish(nodes, a_inits + b_inits + [const("half", np.float32(0.5))], inputs, act, 0.04)


def _float_ops(graph, bindings=None) -> list:
    """Float ops of the static program other than the quantization of the model's float inputs."""
    static = api.specialize(graph, bindings or {})
    return [op for op in static.ops if op.location.op_type != "QuantizeLinear" and op.op.name != "CONST"
            and any(getattr(v.type, "dtype", None) is not None and v.type.dtype.is_float
                    for v in [*op.operands, *op.results])]


def _feeds(model, seed: int) -> dict:
    return {i.name: rand(*[d.dim_value for d in i.type.tensor_type.shape.dim], low=-3, high=3, seed=seed + k)
            for k, i in enumerate(model.graph.input)}


@pytest.mark.parametrize("act", [I8, U8], ids=["int8", "uint8"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_qdq_op_is_integer_and_agrees(case, act):
    model = CASES[case](act)
    graph = convert(model)
    assert not _float_ops(graph), f"float ops left: {[str(op) for op in _float_ops(graph)]}"
    for seed in (1, 2):
        feeds = _feeds(model, seed)
        (got,), (want,) = run_graph(graph, feeds), run_onnxruntime(model, feeds, optimize=False)
        if case in MEANS:
            _assert_mean_within_one_lsb(got, want, f"{case} seed {seed}")
        else:
            assert_within_one_lsb(got, want, f"{case} seed {seed}")


# Means land on exact halves often (a window of 4 gives k/4): tosaconv's exact sum rounds those to even,
# while onnxruntime's float32 mean of dequantized values lands a rounding error to either side of them,
# so more elements may differ, by one unit.
MEANS = ("AveragePool", "GlobalAveragePool", "ReduceMean", "Div_then_GlobalAveragePool")


def _assert_mean_within_one_lsb(got, want, what: str):
    want = np.asarray(want)
    diff = np.abs(np.asarray(got).astype(want.dtype).astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1, f"{what}: max |diff| {diff.max()} > 1"
    assert (diff > 0).mean() <= 0.25, f"{what}: {(diff > 0).mean():.1%} of elements differ"


@pytest.mark.parametrize("case", ["Sigmoid", "hard_swish_by_hand", "AveragePool", "GlobalAveragePool", "Softmax",
                                  "Mul", "Max", "Concat", "MatMul", "Where"])
def test_qdq_integer_program_runs_bit_exact_on_reference_model(case, tmp_path):
    model = CASES[case](U8 if case in ("Mul", "Concat") else I8)
    graph = convert(model)
    feeds = _feeds(model, 3)
    static, tosa = specialize_and_emit(graph, {k: v.shape for k, v in feeds.items()})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)


def test_exact_ties_round_to_even_like_onnx():
    """x + 1 with equal scales puts every result on an exact tie; ONNX rounds those to even."""
    x_inits, x_nodes = quantized_input("x", I8, 0.25, 0)
    inits = x_inits + [const("one", np.int8(2)), const("one_s", np.float32(0.25))]
    nodes = x_nodes + [helper.make_node("DequantizeLinear", ["one", "one_s"], ["one_d"]),
                       helper.make_node("Mul", ["x_d", "one_d"], ["c"])]
    model = finish(nodes, inits, [vinfo("x", F, list(SHAPE))], I8, 0.25)
    graph = convert(model)
    feeds = {"x": rand(*SHAPE, low=-10, high=10, seed=4)}
    np.testing.assert_array_equal(run_graph(graph, feeds)[0], run_onnxruntime(model, feeds, optimize=False)[0])


def test_float_island_says_why():
    """An op with no integer form (a Div of two tensors; unary ones such as Sin become TABLEs) stays float, and the report's float islands say why, at the op and
    at the QuantizeLinear that could not be folded."""
    graph = convert(_binary("Div", I8))
    assert _float_ops(graph), "a Div of two quantized tensors has no integer lowering and must stay float"
    reasons = graph.float_reasons
    div = [r for loc, r in reasons.items() if loc.startswith("Div")]
    assert div and "two different quantized tensors" in div[0], reasons
    assert any(loc.startswith("QuantizeLinear") and "quantizes a float result" in r for loc, r in reasons.items())


def test_conv_bias_near_the_int32_limit(tmp_path):
    """onnxruntime's quantizer gives a channel whose weights are all near zero a tiny weight scale and an
    int32 bias near 2**31: the accumulator plus that bias could overflow int32, so the bias is added after
    a first RESCALE (still all-integer), and results agree with onnxruntime."""
    x_inits, x_nodes = quantized_input("x", I8, 0.03, 3)
    rng = np.random.default_rng(9)
    w = rng.integers(-127, 128, (4, 4, 3, 3)).astype(np.int8)
    w_scale = np.array([0.004, 1e-9, 0.006, 0.005], np.float32)
    b = np.array([1200, -2147268831, -300, 2147000000], np.int32)
    inits = x_inits + [const("w", w), const("w_s", w_scale), const("w_z", np.zeros(4, np.int8)),
                       const("b", b), const("b_s", (np.float32(0.03) * w_scale).astype(np.float32))]
    nodes = x_nodes + [
        helper.make_node("DequantizeLinear", ["w", "w_s", "w_z"], ["w_d"], axis=0),
        helper.make_node("DequantizeLinear", ["b", "b_s"], ["b_d"], axis=0),
        helper.make_node("Conv", ["x_d", "w_d", "b_d"], ["c"], pads=[1, 1, 1, 1])]
    model = finish(nodes, inits, [vinfo("x", F, list(SHAPE))], I8, 0.05)
    graph = convert(model)
    assert not _float_ops(graph), [str(op) for op in _float_ops(graph)]
    for seed in (1, 2):
        feeds = _feeds(model, seed)
        assert_within_one_lsb(run_graph(graph, feeds)[0], run_onnxruntime(model, feeds, optimize=False)[0])
    static, tosa = specialize_and_emit(graph, {k: v.shape for k, v in feeds.items()})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)
