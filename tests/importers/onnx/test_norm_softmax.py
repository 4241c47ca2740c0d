"""Softmax and LogSoftmax against onnxruntime: the flatten-to-2-D semantics
before opset 13 (axis default 1) and the single axis after (default -1),
positive and negative axes, symbolic input dims run at several shapes, and
inputs large enough that an unstabilized softmax would overflow. Also the
IR form: the numerically stable chain, with the pre-13 block reduced axis
by axis rather than through a reshape.
"""
from __future__ import annotations

import numpy as np
import pytest

from .harness import F32, check_with_onnxruntime, convert, info, one_node, rand

SHAPES = [(2, 3, 4, 5), (1, 2, 1, 3), (3, 1, 4, 1)]


def _model(op, opset, axis=None, dims=("n", "c", "h", "w")):
    attrs = {} if axis is None else {"axis": axis}
    return one_node(op, [info("x", F32, list(dims))], [info("y", F32, None)], opset=opset, **attrs)


def _feeds(scale=3.0):
    return [{"x": rand(*s, low=-scale, high=scale, seed=i)} for i, s in enumerate(SHAPES)]


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset", [11, 12, 13, 17, 21])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, 3, -1, -3])
def test_matches_onnxruntime(op, opset, axis):
    check_with_onnxruntime(_model(op, opset, axis), _feeds())


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("opset", [11, 13])
def test_large_inputs_are_stable(op, opset):
    feeds = [{"x": (rand(*s, seed=i) * 1e4).astype(np.float32)} for i, s in enumerate(SHAPES)]
    check_with_onnxruntime(_model(op, opset), feeds)


def test_static_and_rank_2_inputs():
    model = one_node("Softmax", [info("x", F32, [3, 7])], [info("y", F32, None)], opset=13)
    check_with_onnxruntime(model, [{"x": rand(3, 7)}])
    model = one_node("Softmax", [info("x", F32, ["b", 7])], [info("y", F32, None)], opset=11, axis=0)
    check_with_onnxruntime(model, [{"x": rand(3, 7)}, {"x": rand(1, 7)}])


def test_opset_13_is_the_stable_chain_over_one_axis():
    graph = convert(_model("Softmax", 13))
    assert [op.op.name for op in graph.ops] == ["REDUCE_MAX", "SUB", "EXP", "REDUCE_SUM", "RECIPROCAL", "MUL"]
    assert graph.ops[0].attrs.axis == 3 and graph.ops[3].attrs.axis == 3


def test_before_13_reduces_each_axis_of_the_flattened_block():
    graph = convert(_model("Softmax", 11, axis=1))
    maxes = [op.attrs.axis for op in graph.ops if op.op.name == "REDUCE_MAX"]
    sums = [op.attrs.axis for op in graph.ops if op.op.name == "REDUCE_SUM"]
    assert maxes == sums == [1, 2, 3]
    assert "RESHAPE" not in graph.histogram()
    assert graph.outputs[0].type.shape == graph.inputs[0].type.shape


def test_log_softmax_ends_with_sub_of_log():
    graph = convert(_model("LogSoftmax", 13))
    assert [op.op.name for op in graph.ops][-2:] == ["LOG", "SUB"]
