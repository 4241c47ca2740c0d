"""onnxruntime's optimizer ops (com.microsoft FusedConv, FusedGemm, FusedMatMul, Gelu, FastGelu,
BiasGelu, QuickGelu, BiasAdd, SkipLayerNormalization, SkipSimplifiedLayerNormalization,
EmbedLayerNormalization, and its
default-domain LayerNormalization 1 and SimplifiedLayerNormalization), each built with
``onnx.helper`` and compared with onnxruntime, which implements them, at two or more bindings of
the symbolic dims (the symbolic program and the emitted static .tosa); plus the refusals of what
onnxruntime's kernels do not run either."""
from __future__ import annotations

import math

import numpy as np
import pytest
from onnx import helper

from tosaconv.diagnostics import TosaconvError

from .harness import F32, check_with_onnxruntime, compare_both_paths, const, convert, info, make_model, rand

MS = "com.microsoft"


def ms_model(op, inputs, outputs, inits=(), opset: int = 17, domain: str = MS, **attrs):
    names = [v.name for v in inputs] + [t.name for t in inits]
    node = helper.make_node(op, names, [v.name for v in outputs], name=f"{op.lower()}_node", domain=domain, **attrs)
    model = make_model([node], inputs, outputs, inits, opset)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    return model


def _out(n: int = 1):
    return [info(f"y{i}", F32, None) for i in range(n)]


# -- FusedConv -----------------------------------------------------------------------------

CONV_ACTIVATIONS = [
    ({}, "none"),
    ({"activation": "Relu"}, "relu"),
    ({"activation": "Tanh"}, "tanh"),
    ({"activation": "Sigmoid"}, "sigmoid"),
    ({"activation": "LeakyRelu", "activation_params": [0.2]}, "leaky"),
    ({"activation": "Clip", "activation_params": [-0.5, 0.75]}, "clip"),
    ({"activation": "HardSigmoid", "activation_params": [0.3, 0.4]}, "hardsigmoid"),
]


@pytest.mark.parametrize("act", [a for a, _ in CONV_ACTIVATIONS], ids=[i for _, i in CONV_ACTIVATIONS])
def test_fused_conv_activations(act):
    w = const("w", rand(4, 3, 3, 3, seed=1))
    b = const("b", rand(4, seed=2))
    model = ms_model("FusedConv", [info("x", F32, ["N", 3, "H", "W"])], _out(), [w, b], pads=[1, 1, 1, 1],
                     strides=[1, 2], **act)
    check_with_onnxruntime(model, [{"x": rand(1, 3, 8, 9, seed=3)}, {"x": rand(2, 3, 5, 6, seed=4)}])


def test_fused_conv_with_sum_input_and_groups():
    w = const("w", rand(6, 1, 3, 3, seed=1))
    model = ms_model("FusedConv", [info("x", F32, ["N", 6, "H", "W"]), info("z", F32, ["N", 6, "H", "W"])],
                     _out(), [w], pads=[1, 1, 1, 1], group=6, activation="Relu")
    # the graph inputs are x, z then the initializer w: Conv reads (X, W, B, Z), so reorder the node inputs
    model.graph.node[0].ClearField("input")
    model.graph.node[0].input.extend(["x", "w", "", "z"])
    check_with_onnxruntime(model, [{"x": rand(1, 6, 5, 7, seed=i), "z": rand(1, 6, 5, 7, seed=9)}
                                   for i in range(1)] + [{"x": rand(2, 6, 4, 4, seed=5), "z": rand(2, 6, 4, 4)}])


def test_fused_conv_unknown_activation_is_refused():
    model = ms_model("FusedConv", [info("x", F32, [1, 3, 4, 4])], _out(), [const("w", rand(2, 3, 1, 1))],
                     activation="Elu")
    with pytest.raises(TosaconvError, match=r"FusedConv activation 'Elu' is not one onnxruntime fuses .*"
                                            r"supported: Relu, Tanh, Sigmoid, LeakyRelu, HardSigmoid, Clip"):
        convert(model)


# -- FusedGemm -------------------------------------------------------------------------------

GEMM_CASES = [
    {"activation": "Relu"},
    {"activation": "LeakyRelu", "activation_alpha": 0.1, "transB": 1, "alpha": 0.5, "beta": 2.0},
    {"activation": "Tanh", "transA": 1},
    {"activation": "Sigmoid"},
    {"activation": "HardSigmoid", "activation_alpha": 0.25, "activation_beta": 0.6},
    {"activation": "Elu", "activation_alpha": 0.7},
    {"activation": "Selu", "activation_alpha": 1.5, "activation_gamma": 1.2},
    {"activation": "Softplus"},
    {"activation": "Softsign"},
    {"activation": "ThresholdedRelu", "activation_alpha": 0.3},
]


@pytest.mark.parametrize("attrs", GEMM_CASES, ids=lambda a: "-".join(f"{k}={v}" for k, v in a.items()))
def test_fused_gemm(attrs):
    b = rand(7, 5, seed=1) if attrs.get("transB") else rand(5, 7, seed=1)
    dims = [5, "M"] if attrs.get("transA") else ["M", 5]
    model = ms_model("FusedGemm", [info("a", F32, dims)], _out(), [const("b", b), const("c", rand(7, seed=2))],
                     **attrs)
    shapes = [(5, 3), (5, 1)] if attrs.get("transA") else [(3, 5), (1, 5)]
    check_with_onnxruntime(model, [{"a": rand(*s, seed=i)} for i, s in enumerate(shapes)])


# -- FusedMatMul -----------------------------------------------------------------------------

MATMUL_CASES = [
    ({}, ["B", "S", 4], (4, 6)),
    ({"alpha": 0.125}, ["B", "S", 4], (4, 6)),
    ({"transB": 1, "alpha": 2.0}, ["B", "S", 4], (6, 4)),
    ({"transA": 1}, ["B", 4, "S"], (4, 6)),
    ({"transBatchA": 1}, ["S", 2, 3, 4], (2, 3, 4, 6)),
    ({"transBatchB": 1}, [2, 3, "S", 4], (4, 2, 3, 6)),
    ({"transBatchB": 1, "transB": 1}, [2, 3, "S", 4], (6, 2, 3, 4)),
    ({"transBatchA": 1, "transA": 1}, [4, 2, 3, "S"], (2, 3, 4, 6)),
]


@pytest.mark.parametrize("attrs,a_dims,b_shape", MATMUL_CASES, ids=lambda v: str(v))
def test_fused_matmul(attrs, a_dims, b_shape):
    model = ms_model("FusedMatMul", [info("a", F32, a_dims)], _out(), [const("b", rand(*b_shape, seed=3))], **attrs)
    feeds = []
    for i, sizes in enumerate(({"B": 2, "S": 3}, {"B": 1, "S": 5})):
        shape = [sizes[d] if isinstance(d, str) else d for d in a_dims]
        feeds.append({"a": rand(*shape, seed=i)})
    check_with_onnxruntime(model, feeds)


def test_fused_matmul_two_runtime_operands():
    model = ms_model("FusedMatMul", [info("a", F32, ["B", "S", 8]), info("b", F32, ["B", "T", 8])], _out(),
                     transB=1, alpha=0.35)
    check_with_onnxruntime(model, [{"a": rand(2, 3, 8), "b": rand(2, 4, 8, seed=1)},
                                   {"a": rand(1, 5, 8, seed=2), "b": rand(1, 2, 8, seed=3)}])


# -- the Gelu family and BiasAdd ---------------------------------------------------------------

def _feeds(dims_sets, names=("x",), low=-5.0, high=5.0):
    return [{n: rand(*s, low=low, high=high, seed=i + j) for j, n in enumerate(names)} for i, s in enumerate(dims_sets)]


@pytest.mark.parametrize("op,attrs", [("Gelu", {}), ("QuickGelu", {}), ("QuickGelu", {"alpha": 1.2}),
                                      ("FastGelu", {})], ids=str)
def test_gelu_family_unary(op, attrs):
    model = ms_model(op, [info("x", F32, ["B", "S", 8])], _out(), **attrs)
    check_with_onnxruntime(model, _feeds([(2, 3, 8), (1, 5, 8)]))


@pytest.mark.parametrize("op", ["BiasGelu", "FastGelu"])
def test_gelu_family_with_bias(op):
    model = ms_model(op, [info("x", F32, ["B", "S", 8])], _out(), [const("bias", rand(8, seed=7))])
    check_with_onnxruntime(model, _feeds([(2, 3, 8), (1, 5, 8)]))


def test_bias_add():
    model = ms_model("BiasAdd", [info("x", F32, ["N", "S", 4]), info("skip", F32, ["N", "S", 4])], _out(),
                     [const("bias", rand(4, seed=7))])
    model.graph.node[0].ClearField("input")
    model.graph.node[0].input.extend(["x", "bias", "skip"])
    # onnxruntime has BiasAdd only on CUDA: compare with its definition, X + bias + skip, in numpy
    graph = convert(model)
    for feeds in _feeds([(2, 3, 4), (1, 6, 4)], names=("x", "skip")):
        want = feeds["x"] + rand(4, seed=7) + feeds["skip"]
        compare_both_paths(graph, feeds, [want], 1e-6, 1e-6)


# -- layer normalizations ------------------------------------------------------------------------

def _skip_ln(op, n_out, with_beta=True, with_bias=True, skip_dims=("B", "S", 16), **attrs):
    inits = [const("gamma", rand(16, seed=5))]
    names = ["x", "skip", "gamma"]
    if op == "SkipLayerNormalization":
        inits.append(const("beta", rand(16, seed=6)))
        names.append("beta" if with_beta else "")
    if with_bias:
        inits.append(const("bias", rand(16, seed=8)))
        names.append("bias")
    model = ms_model(op, [info("x", F32, ["B", "S", 16]), info("skip", F32, list(skip_dims))], _out(n_out),
                     [t for t in inits if t.name in names], **attrs)
    model.graph.node[0].ClearField("input")
    model.graph.node[0].input.extend(names)
    return model


@pytest.mark.parametrize("n_out", [1, 4])
@pytest.mark.parametrize("with_beta,with_bias", [(True, True), (False, False), (True, False)])
def test_skip_layer_normalization(n_out, with_beta, with_bias):
    model = _skip_ln("SkipLayerNormalization", n_out, with_beta, with_bias, epsilon=1e-5)
    check_with_onnxruntime(model, _feeds([(2, 3, 16), (1, 5, 16)], names=("x", "skip")), atol=1e-4)


def test_skip_layer_normalization_default_epsilon_and_2d_skip():
    model = _skip_ln("SkipLayerNormalization", 4, skip_dims=("S", 16))
    feeds = [{"x": rand(2, 3, 16, seed=1), "skip": rand(3, 16, seed=2)},
             {"x": rand(1, 5, 16, seed=3), "skip": rand(5, 16, seed=4)}]
    check_with_onnxruntime(model, feeds, atol=1e-4)


def test_skip_simplified_layer_normalization():
    model = _skip_ln("SkipSimplifiedLayerNormalization", 1, epsilon=1e-6)
    model.graph.output.extend([info("inv", F32, None), info("sum", F32, None)])
    model.graph.node[0].output.extend(["", "inv", "sum"])
    check_with_onnxruntime(model, _feeds([(2, 3, 16), (1, 5, 16)], names=("x", "skip")), atol=1e-4)


def test_skip_simplified_mean_output_is_refused():
    model = _skip_ln("SkipSimplifiedLayerNormalization", 2)
    with pytest.raises(TosaconvError, match=r"output 1 \(mean\) is not computed by an RMS normalization"):
        convert(model)


@pytest.mark.parametrize("opset,axis,n_out", [(14, -1, 1), (17, -1, 2), (13, 1, 2)])
def test_simplified_layer_normalization(opset, axis, n_out):
    model = ms_model("SimplifiedLayerNormalization", [info("x", F32, ["B", 4, 6])], _out(n_out),
                     [const("scale", rand(*([4, 6] if axis == 1 else [6]), seed=5))], opset=opset, domain="",
                     axis=axis, epsilon=1e-5)
    check_with_onnxruntime(model, _feeds([(2, 4, 6), (3, 4, 6)]), atol=1e-4)


@pytest.mark.parametrize("opset", [11, 14, 16])
def test_onnxruntime_layer_normalization_before_opset_17(opset):
    model = ms_model("LayerNormalization", [info("x", F32, ["B", "S", 8])], _out(3),
                     [const("scale", rand(8, seed=5)), const("bias", rand(8, seed=6))], opset=opset, domain="",
                     epsilon=1e-3)
    check_with_onnxruntime(model, _feeds([(2, 3, 8), (1, 4, 8)]), atol=1e-4)


def test_ops_listing_names_the_onnxruntime_ops():
    from tosaconv.cli.info import supported_ops
    rows = {(r["domain"], r["op_type"]): r for r in supported_ops()}
    for op in ("FusedConv", "FusedGemm", "FusedMatMul", "Gelu", "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd",
               "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization", "Attention",
               "MultiHeadAttention", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM"):
        assert rows[(MS, op)]["versions"] == [1]
    assert rows[("ai.onnx (onnxruntime)", "LayerNormalization")]["opsets"] == [11, 16]
    assert rows[("ai.onnx", "LayerNormalization")]["opsets"][0] == 17
    assert rows[("ai.onnx (onnxruntime)", "SimplifiedLayerNormalization")]["versions"] == [1]


def test_gelu_against_its_definition():
    """com.microsoft Gelu is the exact erf form (computed here independently of onnxruntime)."""
    model = ms_model("Gelu", [info("x", F32, [3])], _out())
    g = convert(model)
    from .harness import run_graph
    x = np.array([-1.0, 0.0, 2.0], np.float32)
    want = 0.5 * x * (1 + np.array([math.erf(v / math.sqrt(2)) for v in x]))
    np.testing.assert_allclose(run_graph(g, {"x": x})[0], want, rtol=1e-6, atol=1e-7)


# -- EmbedLayerNormalization ------------------------------------------------------------------

def _embed_model(segment=True, mask=True, position_ids=False):
    from onnx import TensorProto
    vocab, positions, hidden = 20, 16, 8
    inits = [const("we", rand(vocab, hidden, seed=1)), const("pe", rand(positions, hidden, seed=2)),
             const("se", rand(2, hidden, seed=3)), const("gamma", rand(hidden, seed=4)),
             const("beta", rand(hidden, seed=5))]
    i32 = TensorProto.INT32
    inputs = [info("ids", i32, ["B", "S"])]
    names = ["ids", "", "we", "pe", "", "gamma", "beta", "", ""]
    if segment:
        inputs.append(info("seg", i32, ["B", "S"]))
        names[1], names[4] = "seg", "se"
    if mask:
        inputs.append(info("mask", i32, ["B", "S"]))
        names[7] = "mask"
    if position_ids:
        inputs.append(info("pos", i32, [1, "S"]))
        names[8] = "pos"
    while not names[-1]:
        names.pop()
    out_names = ["y", "mask_index" if mask else "", "sum"]
    outs = [info(n, i32 if n == "mask_index" else F32, None) for n in out_names if n]
    node = helper.make_node("EmbedLayerNormalization", names, out_names, name="embed", domain=MS)
    model = make_model([node], inputs, outs, [t for t in inits if t.name in names], 17)
    model.opset_import.append(helper.make_opsetid(MS, 1))
    return model


def _embed_feeds(b, s, seed, position_ids=False):
    r = np.random.default_rng(seed)
    feeds = {"ids": r.integers(0, 20, (b, s)).astype(np.int32), "seg": r.integers(0, 2, (b, s)).astype(np.int32),
             "mask": (r.uniform(size=(b, s)) > 0.3).astype(np.int32)}
    if position_ids:
        feeds["pos"] = r.permutation(16)[:s].reshape(1, s).astype(np.int32)
    return feeds


@pytest.mark.parametrize("segment,mask,position_ids", [(True, True, False), (False, True, False),
                                                       (True, False, True), (True, True, True)], ids=str)
def test_embed_layer_normalization(segment, mask, position_ids):
    model = _embed_model(segment, mask, position_ids)
    names = {i.name for i in model.graph.input}
    feeds = [{k: v for k, v in _embed_feeds(b, s, i, position_ids).items() if k in names}
             for i, (b, s) in enumerate([(2, 5), (1, 9)])]
    check_with_onnxruntime(model, feeds, atol=1e-4)
