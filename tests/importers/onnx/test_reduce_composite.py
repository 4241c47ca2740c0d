"""ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp and ReduceSumSquare,
ArgMax / ArgMin and GlobalMaxPool against onnxruntime on symbolic input dims
run at several shapes (one binding a dim to 1).

The reductions: opsets 11 to 21 (axes as an attribute and, from 18, as an
input), keepdims, no axes, empty axes with noop_with_empty_axes (which keeps
the elementwise part: ReduceSumSquare of nothing is x squared), int32 data,
and ReduceLogSumExp on inputs large enough that ``exp`` alone overflows.
ArgMax / ArgMin: float data with many ties, select_last_index, keepdims,
negative axes, int8 / int32 / int64 data, and a symbolic reduced axis (the
last-index mapping uses the bound size).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from .harness import F32, I32, I64, check_with_onnxruntime, const, info, one_node, rand

COMPOSITE = ["ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
SHAPES = [(2, 3, 4), (1, 5, 4), (3, 1, 4)]


def _reduce_model(op, opset, axes, elem=F32, **attrs):
    x, y = info("x", elem, ["b", "s", 4]), info("y", elem, None)
    inits = []
    if axes is not None and opset >= 18:
        inits = [const("axes", np.array(axes, np.int64))]
    elif axes is not None:
        attrs["axes"] = list(axes)
    return one_node(op, [x], [y], inits, opset=opset, **attrs)


def _feeds(op, scale=1.0):
    low = 0.1 if op == "ReduceLogSum" else -2.0    # the log of a negative sum is NaN
    return [{"x": rand(*s, low=low * scale, high=2.0 * scale, seed=i)} for i, s in enumerate(SHAPES)]


@pytest.mark.parametrize("op", COMPOSITE)
@pytest.mark.parametrize("opset", [11, 13, 18, 21])
@pytest.mark.parametrize("axes", [(1,), (0, 2), (-1,), None], ids=str)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_composite_reduce_matches_onnxruntime(op, opset, axes, keepdims):
    check_with_onnxruntime(_reduce_model(op, opset, axes, keepdims=keepdims), _feeds(op))


@pytest.mark.parametrize("op", COMPOSITE)
@pytest.mark.parametrize("noop", [0, 1])
def test_empty_axes_with_noop_keep_the_elementwise_part(op, noop):
    x, y = info("x", F32, ["b", "s", 4]), info("y", F32, None)
    model = one_node(op, [x], [y], [const("axes", np.zeros((0,), np.int64))], opset=18,
                     noop_with_empty_axes=noop, keepdims=1)
    check_with_onnxruntime(model, _feeds(op))


@pytest.mark.parametrize("opset", [13, 18])
def test_log_sum_exp_is_stable(opset):
    check_with_onnxruntime(_reduce_model("ReduceLogSumExp", opset, (1,), keepdims=0), _feeds("x", scale=300.0))


def test_log_sum_exp_with_infinities():
    x = rand(2, 3, 4)
    x[0, :, 0] = np.inf
    x[1, 0, :] = -np.inf
    x[1, :, 1] = -np.inf
    check_with_onnxruntime(_reduce_model("ReduceLogSumExp", 18, (1,), keepdims=1), [{"x": x}])


@pytest.mark.parametrize("op", COMPOSITE)
def test_int32_composite_reductions(op):
    """ReduceL2 / LogSum / LogSumExp of integers are computed in float and truncated (as onnxruntime does)."""
    model = _reduce_model(op, 18, (1,), elem=I32, keepdims=0)
    low = 1 if op == "ReduceLogSum" else -9
    feeds = [{"x": np.random.default_rng(i).integers(low, 9, s).astype(np.int32)} for i, s in enumerate(SHAPES)]
    check_with_onnxruntime(model, feeds)


# -- ArgMax / ArgMin ---------------------------------------------------------------------------

def _arg_model(op, opset, elem=F32, dims=("b", "s", 4), **attrs):
    return one_node(op, [info("x", elem, list(dims))], [info("y", I64, None)], opset=opset, **attrs)


def _tied(shape, seed, dtype=np.float32, spread=3):
    return np.random.default_rng(seed).integers(-spread, spread + 1, shape).astype(dtype)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("opset,last", [(11, None), (12, 0), (12, 1), (13, 1), (21, 0), (21, 1)])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_arg_matches_onnxruntime(op, opset, last, axis, keepdims):
    attrs = {"axis": axis, "keepdims": keepdims}
    if last is not None:        # select_last_index arrived in opset 12
        attrs["select_last_index"] = last
    feeds = [{"x": _tied(s, i)} for i, s in enumerate(SHAPES)]
    check_with_onnxruntime(_arg_model(op, opset, **attrs), feeds)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("elem,dtype", [(TensorProto.INT8, np.int8), (I32, np.int32), (I64, np.int64)],
                         ids=["i8", "i32", "i64"])
@pytest.mark.parametrize("last", [0, 1])
def test_arg_of_integers(op, elem, dtype, last):
    feeds = [{"x": _tied(s, i, dtype)} for i, s in enumerate(SHAPES)]
    limits = np.iinfo(np.int32 if dtype == np.int64 else dtype)    # int64 data must fit int32 (TOSA has no int64)
    extremes = {"x": np.array([[[limits.min, limits.max, 0, limits.min]]], dtype)}
    model = _arg_model(op, 13, elem, axis=2, keepdims=0, select_last_index=last)
    check_with_onnxruntime(model, feeds + [extremes])


def test_arg_of_large_int32_values():
    feeds = [{"x": np.random.default_rng(i).integers(-2**31, 2**31 - 1, s).astype(np.int32)}
             for i, s in enumerate(SHAPES)]
    check_with_onnxruntime(_arg_model("ArgMin", 13, I32, axis=1, keepdims=1), feeds)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_over_a_rank_1_input(op):
    model = _arg_model(op, 13, dims=("n",), axis=0, keepdims=0, select_last_index=1)
    check_with_onnxruntime(model, [{"x": _tied((n,), n)} for n in (7, 1, 3)])


# -- GlobalMaxPool -----------------------------------------------------------------------------

@pytest.mark.parametrize("dims,shapes", [
    (("N", 3, "H", "W"), [(2, 3, 4, 5), (1, 3, 1, 1)]),
    (("N", 2, "L"), [(2, 2, 7), (1, 2, 1)]),
    (("N", 2, 3, "D", 2), [(1, 2, 3, 4, 2), (2, 2, 3, 1, 2)]),
], ids=["2d", "1d", "3d"])
def test_global_max_pool(dims, shapes):
    model = one_node("GlobalMaxPool", [info("x", F32, list(dims))], [info("y", F32, None)], opset=17)
    check_with_onnxruntime(model, [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)])
