"""The data-movement converters against onnxruntime, on symbolic input dims
run at several shapes (one binding a dim to 1): Transpose, Concat, Split
(equal parts, sizes as attribute and input, num_outputs), Slice (negative and
huge bounds, steps, symbolic dims), and Gather (constant scalar, vector and
negative indices, run-time indices, and gathers from shape tensors).
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from .harness import F32, I64, check_with_onnxruntime, const, info, make_model, one_node, rand

SHAPES = [(2, 3, 4), (1, 5, 4), (3, 1, 4)]
BIG = 2 ** 63 - 1


def _x(dims=("b", "s", 4)):
    return info("x", F32, list(dims))


def _y(elem=F32, name="y"):
    return info(name, elem, None)


def _feeds(shapes=SHAPES):
    return [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


# -- Transpose / Concat ------------------------------------------------------------------------

@pytest.mark.parametrize("perm", [None, [0, 2, 1], [2, 0, 1], [0, 1, 2]], ids=str)
def test_transpose(perm):
    attrs = {} if perm is None else {"perm": perm}
    check_with_onnxruntime(one_node("Transpose", [_x()], [_y()], opset=13, **attrs), _feeds())


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_of_symbolic_inputs(axis):
    model = one_node("Concat", [_x(), info("z", F32, ["b", "s", 4])], [_y()], opset=13, axis=axis)
    check_with_onnxruntime(model, [dict(f, z=rand(*f["x"].shape, seed=7)) for f in _feeds()])


def test_concat_along_a_symbolic_axis_of_different_sizes():
    z = info("z", F32, ["b", "t", 4])
    model = one_node("Concat", [_x(), z], [_y()], opset=13, axis=1)
    feeds = [dict(f, z=rand(f["x"].shape[0], t, 4, seed=t)) for f, t in zip(_feeds(), (1, 2, 5))]
    check_with_onnxruntime(model, feeds)


# -- Split ---------------------------------------------------------------------------------------

def _split_model(opset, outputs, split=None, last=6, **attrs):
    inits = []
    if split is not None and opset >= 13:
        inits = [const("split", np.array(split, np.int64))]
    elif split is not None:
        attrs["split"] = split
    outs = [_y(name=f"y{i}") for i in range(outputs)]
    return one_node("Split", [_x(("b", "s", last))], outs, inits, opset=opset, **attrs)


@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("axis,split", [(2, None), (2, [1, 5]), (2, [2, 2, 2]), (-1, [4, 2])], ids=str)
def test_split_static_axis(opset, axis, split):
    outputs = 3 if split is None else len(split)
    if opset >= 18 and split is None:
        model = _split_model(opset, outputs, axis=axis, num_outputs=outputs)
    else:
        model = _split_model(opset, outputs, split, axis=axis)
    check_with_onnxruntime(model, _feeds([(2, 3, 6), (1, 1, 6)]))


def test_split_uneven_num_outputs():
    model = _split_model(18, 4, last=7, axis=2, num_outputs=4)
    check_with_onnxruntime(model, _feeds([(2, 3, 7), (1, 2, 7)]))


def test_split_symbolic_axis_into_equal_parts():
    model = _split_model(13, 2, axis=1)
    check_with_onnxruntime(model, _feeds([(2, 4, 6), (1, 2, 6)]))


# -- Slice ---------------------------------------------------------------------------------------

def _slice_model(starts, ends, axes=None, steps=None, dims=("b", "s", 4)):
    names = ["x", "starts", "ends"] + (["axes"] if axes is not None or steps is not None else [])
    inits = [const("starts", np.array(starts, np.int64)), const("ends", np.array(ends, np.int64))]
    if axes is not None or steps is not None:
        inits.append(const("axes", np.array(axes if axes is not None else range(len(starts)), np.int64)))
    if steps is not None:
        names.append("steps")
        inits.append(const("steps", np.array(steps, np.int64)))
    node = helper.make_node("Slice", names, ["y"], name="slice")
    return make_model([node], [_x(dims)], [_y()], inits, opset=13)


@pytest.mark.parametrize("starts,ends,axes", [
    ([0], [1], [0]), ([1], [BIG], [1]), ([-2], [BIG], [2]), ([0, 1], [-1, 3], [1, 2]),
    ([-BIG], [-1], [2]), ([1], [-1], [-1]), ([0, 0, 1], [BIG, BIG, 3], None), ([-2], [BIG], [1]),
    ([0], [-1], [1]), ([-3], [-1], [1]),
], ids=str)
def test_slice_step_1(starts, ends, axes):
    model = _slice_model(starts, ends, axes)
    check_with_onnxruntime(model, _feeds([(2, 3, 4), (3, 4, 4), (2, 2, 4)]))


def test_slice_symbolic_bounds_clamp_to_the_dim():
    check_with_onnxruntime(_slice_model([1], [3], [1]), _feeds([(2, 4, 4), (2, 2, 4)]))
    check_with_onnxruntime(_slice_model([-2], [BIG], [1]), _feeds([(2, 4, 4), (2, 1, 4)]))
    check_with_onnxruntime(_slice_model([0], [2], [0]), _feeds([(3, 4, 4), (1, 1, 4)]))


@pytest.mark.parametrize("starts,ends,axes,steps", [
    ([0], [4], [2], [2]), ([3], [-BIG], [2], [-1]), ([-1], [0], [2], [-2]), ([0, 4], [BIG, 0], [1, 2], [2, -1]),
    ([BIG], [-BIG], [1], [-1]),
], ids=str)
def test_slice_with_steps_on_static_dims(starts, ends, axes, steps):
    check_with_onnxruntime(_slice_model(starts, ends, axes, steps, dims=(2, 5, 4)), _feeds([(2, 5, 4)]))


# -- Gather ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("axis,indices", [
    (0, 0), (1, -1), (2, [0, 3, -1]), (2, [[1, 2], [0, -4]]), (-1, 2), (0, [0, 0]),
], ids=str)
def test_gather_constant_indices(axis, indices):
    model = one_node("Gather", [_x()], [_y()], [const("i", np.array(indices, np.int64))], opset=13, axis=axis)
    check_with_onnxruntime(model, _feeds())


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_run_time_indices(axis):
    idx = info("i", I64, ["k"])
    model = one_node("Gather", [_x(), idx], [_y()], opset=13, axis=axis)
    feeds = [dict(f, i=np.array([0, -1, 0], np.int64)) for f in _feeds()]
    check_with_onnxruntime(model, feeds)


def test_gather_run_time_scalar_index():
    model = one_node("Gather", [_x(), info("i", I64, [])], [_y()], opset=13, axis=2)
    check_with_onnxruntime(model, [dict(f, i=np.array(-2, np.int64)) for f in _feeds()])


@pytest.mark.parametrize("indices", [1, [2, 0], -1], ids=str)
def test_gather_from_a_shape_tensor(indices):
    nodes = [helper.make_node("Shape", ["x"], ["shp"]), helper.make_node("Gather", ["shp", "i"], ["y"], axis=0)]
    model = make_model(nodes, [_x()], [_y(I64)], [const("i", np.array(indices, np.int64))], opset=13)
    check_with_onnxruntime(model, _feeds())
