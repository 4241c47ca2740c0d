"""ONNX TopK, CumSum, Trilu, OneHot and EyeLike against onnxruntime, on symbolic
dims fed at two sizes (symbolic program and specialized, emitted, read-back
one, through the harness).

TopK: largest and smallest, ties (broken by lower index, as ONNX does), every
axis, K constant, K computed from a shape (symbolic K), K that only becomes
known after binding (read from a tensor that folds to a constant), K read
from a graph input (runs symbolically; specialization refuses), and K larger
than the axis. CumSum: every exclusive/reverse combination on every axis, for
float and int data. Trilu: upper/lower with constant and run-time k. OneHot:
negative indices, float indices, every axis, values as constants and data,
depth from a shape. EyeLike: k and dtypes (those onnxruntime has), static and
symbolic.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tosaconv import api
from tosaconv.diagnostics import ShapeError

from .harness import F32, I32, I64, check_with_onnxruntime, const, convert, info, make_model, one_node, rand


def _ints(shape, low, high, seed, dtype=np.int64):
    return np.random.default_rng(seed).integers(low, high, shape).astype(dtype)


# -- TopK -------------------------------------------------------------------------------

def _topk(k, opset=21, elem=F32, dims=("N", 6), **attrs):
    return one_node("TopK", [info("x", elem, list(dims))], [info("v", elem, None), info("i", I64, None)],
                    [const("k", np.array([k], np.int64))], opset=opset, **attrs)


@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("opset", [11, 21])
def test_topk_float(largest, opset):
    feeds = [{"x": rand(n, 6, seed=n)} for n in (3, 1)]
    check_with_onnxruntime(_topk(4, opset, axis=1, largest=largest), feeds)


@pytest.mark.parametrize("largest", [0, 1])
def test_topk_ties_take_the_lower_index_first(largest):
    feeds = [{"x": _ints((n, 6), 0, 3, n, np.int32)} for n in (4, 2)]
    check_with_onnxruntime(_topk(5, elem=I32, axis=-1, largest=largest), feeds)


def test_topk_along_a_symbolic_axis():
    feeds = [{"x": rand(n, 6, seed=n)} for n in (5, 2)]
    check_with_onnxruntime(_topk(2, axis=0), feeds)


def _topk_k_from(nodes_for_k, k_inputs=()):
    x = info("x", F32, [3, "W"])
    topk = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)
    return make_model(nodes_for_k + [topk], [x, *k_inputs], [info("v", F32, None), info("i", I64, None)],
                      [const("one", np.array([1], np.int64)), const("two", np.array([2], np.int64)),
                       const("half", np.array([0.5], np.float32))], opset=21)


def test_topk_k_computed_from_a_shape():
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Slice", ["s", "one", "two"], ["w"]),
             helper.make_node("Div", ["w", "two"], ["k"])]
    graph = check_with_onnxruntime(_topk_k_from(nodes), [{"x": rand(3, w, seed=w)} for w in (6, 3)])
    assert graph.outputs[0].type.shape[1] is not None and "IOTA" in graph.histogram()


def test_topk_k_known_only_after_binding_decays():
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Slice", ["s", "one", "two"], ["w"]),
             helper.make_node("Cast", ["w"], ["wf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["wf", "half"], ["kf"]),
             helper.make_node("Cast", ["kf"], ["k"], to=TensorProto.INT64)]
    graph = check_with_onnxruntime(_topk_k_from(nodes), [{"x": rand(3, w, seed=w)} for w in (7, 4)])
    assert "EXTRACT_DIM" in graph.histogram()


def test_topk_k_from_a_graph_input_runs_but_cannot_be_specialized():
    model = _topk_k_from([], [info("k", I64, [1])])
    feeds = [{"x": rand(3, w, seed=w), "k": np.array([kk], np.int64)} for w, kk in ((6, 2), (4, 4))]
    graph = check_with_onnxruntime(model, feeds, specialized=False)
    with pytest.raises(ShapeError, match="only known when the model runs"):
        api.specialize(graph, {"W": 6})


def test_topk_k_larger_than_the_axis():
    with pytest.raises(ShapeError, match="TopK K must not exceed the size of the axis"):
        convert(_topk(7, dims=(2, 6), axis=1))
    graph = convert(_topk(4, axis=0))
    with pytest.raises(ShapeError, match="N >= 4"):
        api.specialize(graph, {"N": 3})


# -- CumSum -----------------------------------------------------------------------------

@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum(exclusive, reverse, axis):
    model = one_node("CumSum", [info("x", F32, ["N", 5])], [info("y", F32, None)],
                     [const("axis", np.array(axis, np.int32))], opset=14, exclusive=exclusive, reverse=reverse)
    check_with_onnxruntime(model, [{"x": rand(n, 5, seed=n)} for n in (3, 1)])


@pytest.mark.parametrize("opset", [11, 14])
def test_cumsum_int(opset):
    model = one_node("CumSum", [info("x", I32, ["N", "W"])], [info("y", I32, None)],
                     [const("axis", np.array([1], np.int64))], opset=opset, reverse=1)
    check_with_onnxruntime(model, [{"x": _ints((n, w), -50, 50, n, np.int32)} for n, w in ((2, 7), (3, 1))])


# -- Trilu ------------------------------------------------------------------------------

@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, -1, 2])
def test_trilu(upper, k):
    inits = [] if k is None else [const("k", np.array(k, np.int64))]
    model = one_node("Trilu", [info("x", F32, ["B", "N", "M"])], [info("y", F32, None)], inits, opset=14,
                     upper=upper)
    check_with_onnxruntime(model, [{"x": rand(*s, seed=i)} for i, s in enumerate([(2, 3, 5), (1, 4, 2)])])


def test_trilu_k_at_run_time():
    model = one_node("Trilu", [info("x", I32, ["N", 4]), info("k", I64, [])], [info("y", I32, None)], opset=14)
    feeds = [{"x": _ints((n, 4), -9, 9, n, np.int32), "k": np.array(kk, np.int64)} for n, kk in ((3, -1), (5, 2))]
    check_with_onnxruntime(model, feeds)


# -- OneHot -----------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(axis):
    model = one_node("OneHot", [info("i", I64, ["N", 2])], [info("y", F32, None)],
                     [const("depth", np.array(5, np.int64)), const("values", np.array([-1.0, 3.0], np.float32))],
                     opset=11, axis=axis)
    check_with_onnxruntime(model, [{"i": _ints((n, 2), -5, 5, n)} for n in (3, 1)])


def test_one_hot_float_indices_values_as_data_and_depth_from_a_shape():
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Gather", ["s", "one"], ["depth"]),
             helper.make_node("OneHot", ["i", "depth", "values"], ["y"])]
    model = make_model(nodes, [info("x", F32, [2, "D"]), info("i", F32, ["N"]), info("values", I64, [2])],
                       [info("y", I64, None)], [const("one", np.array(1, np.int64))], opset=11)
    feeds = [{"x": rand(2, d), "i": np.array(v, np.float32), "values": np.array([7, -2], np.int64)}
             for d, v in ((4, [0.0, 3.7, -1.2, 2.0]), (6, [5.9, -6.0]))]
    check_with_onnxruntime(model, feeds)


# -- EyeLike ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype,k", [(None, 0), (TensorProto.FLOAT, 1), (TensorProto.INT32, -2),
                                     (TensorProto.INT64, 0)])
@pytest.mark.parametrize("dims", [("N", "M"), (3, 4)], ids=str)
def test_eye_like(dtype, k, dims):
    attrs = {"k": k} if dtype is None else {"k": k, "dtype": dtype}
    model = one_node("EyeLike", [info("x", F32, list(dims))], [info("y", dtype or F32, None)], opset=9, **attrs)
    shapes = [(3, 4), (5, 2)] if dims[0] == "N" else [(3, 4)]
    check_with_onnxruntime(model, [{"x": rand(*s)} for s in shapes])
