"""Activations against onnxruntime on symbolic input dims run at several
shapes: Elu, Selu, Celu, HardSigmoid, HardSwish, Softplus (including inputs
where ``log(exp(x) + 1)`` would overflow), Softsign, ThresholdedRelu, Shrink
(float and int32), Gelu (both approximations), Mish, PRelu with scalar,
per-channel ``[C, 1, 1]`` and full slopes, and Dropout at inference (opset 11
attribute form and opset 13+ inputs, with the mask output; the opset 11 mask
against the ONNX reference, where onnxruntime differs). Also the clear
errors: Dropout in training mode, Gelu with an unknown approximation, an
integer Shrink with a fractional bias.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from tosaconv.diagnostics import TosaconvError

from .harness import (BOOL, F32, I32, assert_close, check_with_onnxruntime, const, convert, info, make_model,
                      one_node, rand, run_graph)

SHAPES = [(2, 3, 5), (1, 3, 1), (4, 3, 2)]


def _unary(op, opset, elem=F32, dims=("N", 3, "W"), **attrs):
    return one_node(op, [info("x", elem, list(dims))], [info("y", elem, None)], opset=opset, **attrs)


def _feeds(low=-4.0, high=4.0):
    return [{"x": rand(*s, low=low, high=high, seed=i)} for i, s in enumerate(SHAPES)]


UNARY = [
    ("Elu", 11, {}), ("Elu", 21, {"alpha": 0.3}),
    ("Selu", 11, {}), ("Selu", 17, {"alpha": 1.5, "gamma": 2.0}),
    ("Celu", 12, {}), ("Celu", 21, {"alpha": 2.5}),
    ("HardSigmoid", 11, {}), ("HardSigmoid", 17, {"alpha": 0.3, "beta": 0.4}),
    ("HardSwish", 14, {}), ("HardSwish", 21, {}),
    ("Softplus", 11, {}), ("Softsign", 13, {}),
    ("ThresholdedRelu", 11, {}), ("ThresholdedRelu", 17, {"alpha": -0.5}),
    ("Shrink", 11, {}), ("Shrink", 17, {"bias": 0.5, "lambd": 1.5}),
    ("Gelu", 20, {}), ("Gelu", 20, {"approximate": "none"}), ("Gelu", 21, {"approximate": "tanh"}),
    ("Mish", 18, {}),
]


@pytest.mark.parametrize("op,opset,attrs", UNARY, ids=lambda v: str(v))
def test_unary_activation_matches_onnxruntime(op, opset, attrs):
    check_with_onnxruntime(_unary(op, opset, **attrs), _feeds())


@pytest.mark.parametrize("op", ["Softplus", "Mish", "Elu", "Selu", "Gelu"])
def test_large_inputs_do_not_overflow(op):
    opset = {"Mish": 18, "Gelu": 20}.get(op, 17)
    check_with_onnxruntime(_unary(op, opset), _feeds(-100.0, 100.0))


@pytest.mark.parametrize("attrs", [{}, {"bias": 2.0, "lambd": 1.0}, {"bias": 1.0, "lambd": 1.5}], ids=str)
def test_integer_shrink(attrs):
    feeds = [{"x": np.random.default_rng(i).integers(-5, 6, s).astype(np.int32)} for i, s in enumerate(SHAPES)]
    check_with_onnxruntime(_unary("Shrink", 17, I32, **attrs), feeds)


@pytest.mark.parametrize("slope", [
    np.array([0.25], np.float32),                               # one slope for all
    np.array([[0.1], [0.2], [-0.3]], np.float32),               # per channel of [N, C, W]: [C, 1]
    np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5),     # [C, W]: a slope per element
], ids=["scalar", "per_channel", "full"])
def test_prelu_slope_broadcasts(slope):
    dims = ("N", 3, 5) if slope.ndim == 2 and slope.shape[1] == 5 else ("N", 3, "W")
    shapes = [(2, 3, 5), (1, 3, 5)] if dims[2] == 5 else SHAPES
    model = one_node("PRelu", [info("x", F32, list(dims))], [info("y", F32, None)], [const("slope", slope)],
                     opset=16)
    check_with_onnxruntime(model, [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)])


def test_prelu_per_channel_slope_on_nchw():
    slope = np.array([0.1, -0.2, 0.3, 0.5], np.float32).reshape(4, 1, 1)
    model = one_node("PRelu", [info("x", F32, ["N", 4, "H", "W"])], [info("y", F32, None)],
                     [const("slope", slope)], opset=11)
    check_with_onnxruntime(model, [{"x": rand(2, 4, 3, 5)}, {"x": rand(1, 4, 1, 2, seed=1)}])


def test_prelu_with_slope_as_graph_input():
    model = one_node("PRelu", [info("x", F32, ["N", 3, "W"]), info("slope", F32, [3, 1])],
                     [info("y", F32, None)], opset=16)
    slope = np.array([[0.5], [-1.0], [2.0]], np.float32)
    check_with_onnxruntime(model, [{"x": rand(*s, seed=i), "slope": slope} for i, s in enumerate(SHAPES)])


# -- Dropout ---------------------------------------------------------------------------------

def _dropout(opset, inputs=(), initializers=(), mask=True, **attrs):
    outs = [info("y", F32, None)] + ([info("mask", BOOL, None)] if mask else [])
    names = ["x"] + list(inputs)
    node = helper.make_node("Dropout", names, [o.name for o in outs], **attrs)
    graph_inputs = [info("x", F32, ["N", 3, "W"])] + [info(n, F32 if n == "r" else BOOL, []) for n in inputs
                                                      if n not in {t.name for t in initializers}]
    return make_model([node], graph_inputs, outs, initializers, opset)


def test_dropout_opset_11_is_identity():
    check_with_onnxruntime(_dropout(11, mask=False, ratio=0.3), _feeds())


def test_dropout_opset_11_mask_is_all_true_as_in_the_onnx_reference():
    """onnxruntime returns an all-false mask for Dropout-10 (opset 11) at inference, and an all-true one
    from Dropout-12 on; the ONNX reference says all true (nothing dropped) for every version."""
    model = _dropout(11, ratio=0.3)
    graph = convert(model)
    for feeds in _feeds():
        want = ReferenceEvaluator(model).run(None, feeds)
        for got, expected in zip(run_graph(graph, feeds), want):
            assert_close(got, expected, 0, 0)
        assert np.all(want[1])


@pytest.mark.parametrize("opset", [13, 21])
@pytest.mark.parametrize("training", [None, False])
def test_dropout_inference_is_identity(opset, training):
    inits = [const("r", np.array(0.4, np.float32))]
    inputs = ["r"]
    if training is not None:
        inits.append(const("t", np.array(training)))
        inputs.append("t")
    check_with_onnxruntime(_dropout(opset, inputs, inits), _feeds())


def test_dropout_training_with_ratio_zero_is_identity():
    inits = [const("r", np.array(0.0, np.float32)), const("t", np.array(True))]
    check_with_onnxruntime(_dropout(13, ["r", "t"], inits), _feeds())


def test_dropout_training_with_a_ratio_is_refused():
    inits = [const("r", np.array(0.5, np.float32)), const("t", np.array(True))]
    with pytest.raises(TosaconvError, match="training mode drops random elements"):
        convert(_dropout(13, ["r", "t"], inits))


def test_dropout_with_run_time_training_mode_is_refused():
    with pytest.raises(TosaconvError, match="training_mode input 't': input training_mode computed from tensor data at run time is not "
                                                 "supported"):
        convert(_dropout(13, ["r", "t"], [const("r", np.array(0.5, np.float32))]))


# -- refusals ----------------------------------------------------------------------------------

def test_gelu_unknown_approximation_is_refused():
    with pytest.raises(TosaconvError, match="Gelu approximate='erf' is not one of 'none', 'tanh'"):
        convert(_unary("Gelu", 20, approximate="erf"))


def test_integer_shrink_with_fractional_bias_is_refused():
    with pytest.raises(TosaconvError, match="attribute bias = a fraction, on integer data is not supported"):
        convert(_unary("Shrink", 17, I32, bias=0.5))
