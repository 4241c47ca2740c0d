"""LayerNormalization and BatchNormalization against onnxruntime, on
symbolic input dims run at several shapes (one binding a dim to 1).

LayerNormalization: every axis, with and without bias, a custom epsilon, its
Mean and InvStdDev outputs, scale/bias given as graph inputs, and the shared
1/count of the mean and the variance. BatchNormalization: opsets 11, 14 and
15, ranks 2 to 5, statistics folded into one scale and one shift constant at
import, statistics given at run time, and the errors for training mode and
for statistics whose length disagrees with the channel dim.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from tosaconv.diagnostics import ConversionError, ShapeError

from .harness import F32, check_with_onnxruntime, const, convert, info, one_node, rand

LN_SHAPES = [(2, 3, 4), (1, 5, 4), (3, 1, 4)]


def _ln_model(axis, bias=True, outputs=1, **attrs):
    """Scale and bias of shape [1, ..., 1, 4]: per feature, broadcast over the symbolic dims."""
    shape = (1,) * (2 - axis % 3) + (4,)
    inits = [const("scale", rand(*shape, seed=7) + 1.5)] + ([const("bias", rand(*shape, seed=8))] if bias else [])
    outs = [info(n, F32, None) for n in ("y", "mean", "inv_std")[:outputs]]
    x = info("x", F32, ["b", "s", 4])
    return one_node("LayerNormalization", [x], outs, inits, opset=17, axis=axis, **attrs)


def _ln_feeds():
    return [{"x": rand(*s, seed=i) * 3 + 1} for i, s in enumerate(LN_SHAPES)]


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm_matches_onnxruntime(axis, bias):
    check_with_onnxruntime(_ln_model(axis, bias), _ln_feeds())


def test_layer_norm_epsilon_and_mean_inv_std_outputs():
    check_with_onnxruntime(_ln_model(-1, outputs=3, epsilon=0.5), _ln_feeds())
    check_with_onnxruntime(_ln_model(1, outputs=3), _ln_feeds())


def test_layer_norm_scale_and_bias_as_graph_inputs():
    x, s, b = info("x", F32, ["b", "s", 4]), info("scale", F32, [4]), info("bias", F32, [4])
    model = one_node("LayerNormalization", [x, s, b], [info("y", F32, None)], opset=17)
    feeds = [dict(f, scale=rand(4, seed=3), bias=rand(4, seed=4)) for f in _ln_feeds()]
    check_with_onnxruntime(model, feeds)


def test_layer_norm_shares_one_count_for_mean_and_variance():
    graph = convert(_ln_model(1))
    hist = graph.histogram()
    assert hist["DIMS_TO_TENSOR"] == 1 and hist["RECIPROCAL"] == 1 and hist["RSQRT"] == 1


# -- BatchNormalization ----------------------------------------------------------------

BN_DIMS = {2: ["n", 3], 3: ["n", 3, "l"], 4: ["n", 3, "h", "w"], 5: ["n", 3, "d", "h", "w"]}


def _bn_stats(seed=0):
    rng = np.random.default_rng(seed)
    gamma, beta, mean = (rng.uniform(-1, 1, 3).astype(np.float32) for _ in range(3))
    return gamma, beta, mean, rng.uniform(0.5, 2, 3).astype(np.float32)


def _bn_model(rank, opset=15, runtime_stats=False, **attrs):
    x, y = info("x", F32, BN_DIMS[rank]), info("y", F32, None)
    names = ["gamma", "beta", "mean", "var"]
    if runtime_stats:
        return one_node("BatchNormalization", [x] + [info(n, F32, [3]) for n in names], [y], opset=opset, **attrs)
    inits = [const(n, a) for n, a in zip(names, _bn_stats())]
    return one_node("BatchNormalization", [x], [y], inits, opset=opset, **attrs)


def _bn_feeds(rank):
    shapes = [(2, 3) + (4,) * (rank - 2), (1, 3) + (1,) * (rank - 2), (3, 3) + (2,) * (rank - 2)]
    return [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


@pytest.mark.parametrize("rank", [2, 3, 4, 5])
@pytest.mark.parametrize("opset", [11, 14, 15])
def test_batch_norm_matches_onnxruntime(rank, opset):
    check_with_onnxruntime(_bn_model(rank, opset, epsilon=1e-3), _bn_feeds(rank))


def test_batch_norm_constant_stats_fold_to_one_scale_and_one_shift():
    graph = convert(_bn_model(4))
    assert [op.op.name for op in graph.ops] == ["CONST", "CONST", "MUL", "ADD"]
    assert [op.result.type.shape for op in graph.ops[:2]] == [(1, 3, 1, 1)] * 2


@pytest.mark.parametrize("rank", [2, 4])
def test_batch_norm_runtime_stats(rank):
    names = ["gamma", "beta", "mean", "var"]
    feeds = [dict(f, **dict(zip(names, _bn_stats(i)))) for i, f in enumerate(_bn_feeds(rank))]
    check_with_onnxruntime(_bn_model(rank, runtime_stats=True), feeds)


def test_batch_norm_training_mode_is_rejected():
    x = info("x", F32, ["n", 3, 4])
    outs = [info(n, F32, None) for n in ("y", "running_mean", "running_var")]
    inits = [const(n, a) for n, a in zip(["gamma", "beta", "mean", "var"], _bn_stats())]
    model = one_node("BatchNormalization", [x], outs, inits, opset=15, training_mode=1)
    with pytest.raises(ConversionError, match="training mode"):
        convert(model)


def test_batch_norm_channel_mismatch_is_a_shape_error():
    x = info("x", F32, ["n", 5, 4])
    inits = [const(n, a) for n, a in zip(["gamma", "beta", "mean", "var"], _bn_stats())]
    model = one_node("BatchNormalization", [x], [info("y", F32, None)], inits, opset=15)
    with pytest.raises(ShapeError) as err:
        convert(model)
    assert err.value.diagnostics[0].code == "E-CONSTRAINT"


def test_batch_norm_symbolic_channels_record_a_constraint():
    x = info("x", F32, ["n", "c", 4])
    inits = [const(n, a) for n, a in zip(["gamma", "beta", "mean", "var"], _bn_stats())]
    graph = convert(one_node("BatchNormalization", [x], [info("y", F32, None)], inits, opset=15))
    assert [c.text() for c in graph.ledger.entries] == ["c == 3"]


def test_layer_norm_float16_computes_in_the_float32_stash_type():
    x = info("x", TensorProto.FLOAT16, ["b", 4])
    scale = const("scale", np.array([2, 1, 0.5, 1], np.float16))
    model = one_node("LayerNormalization", [x], [info("y", TensorProto.FLOAT16, None)], [scale], opset=17)
    feeds = [{"x": rand(n, 4).astype(np.float16)} for n in (3, 1)]
    graph = check_with_onnxruntime(model, feeds, rtol=1e-2, atol=1e-2)
    casts = [op.attrs.dtype.value for op in graph.ops if op.op.name == "CAST"]
    assert casts == ["f32", "f16"]
