"""The shape-computing converters against onnxruntime, on symbolic input dims
run at several shapes (one binding a dim to 1): Reshape with 0 and -1 entries,
allowzero, and a target computed with Shape/Gather/Concat; Flatten at every
axis; Squeeze and Unsqueeze (axes as attribute and as input); Shape with
start/end; Size; Constant; ConstantOfShape; Identity; Expand; Range.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from .harness import F32, I64, check_with_onnxruntime, const, convert, info, make_model, one_node, rand

SHAPES = [(2, 3, 4), (1, 5, 4), (3, 1, 4)]


def _x(dims=("b", "s", 4)):
    return info("x", F32, list(dims))


def _y(elem=F32):
    return info("y", elem, None)


def _feeds(shapes=SHAPES):
    return [{"x": rand(*s, seed=i)} for i, s in enumerate(shapes)]


def _node(op, inputs, outputs=("y",), **attrs):
    return helper.make_node(op, list(inputs), list(outputs), name=f"{op.lower()}_{outputs[0]}", **attrs)


# -- Reshape --------------------------------------------------------------------------

@pytest.mark.parametrize("target", [[0, -1], [-1, 4], [0, 0, 2, 2], [-1], [0, 1, -1, 2]], ids=str)
@pytest.mark.parametrize("opset", [11, 14])
def test_reshape_constant_target(target, opset):
    model = one_node("Reshape", [_x()], [_y()], [const("shape", np.array(target, np.int64))], opset=opset)
    check_with_onnxruntime(model, _feeds())


def test_reshape_allowzero_keeps_literal_sizes():
    model = one_node("Reshape", [_x()], [_y()], [const("shape", np.array([-1, 2, 2], np.int64))],
                     opset=14, allowzero=1)
    check_with_onnxruntime(model, _feeds())


def test_reshape_target_computed_from_shape():
    nodes = [
        _node("Shape", ["x"], ["shp"]),
        _node("Gather", ["shp", "i0"], ["b"], axis=0),
        _node("Gather", ["shp", "i1"], ["s"], axis=0),
        _node("Mul", ["s", "four"], ["s4"]),
        _node("Concat", ["b", "s4"], ["target"], axis=0),
        _node("Reshape", ["x", "target"], ["y"]),
    ]
    inits = [const("i0", np.array([0], np.int64)), const("i1", np.array([1], np.int64)),
             const("four", np.array([4], np.int64))]
    graph = check_with_onnxruntime(make_model(nodes, [_x()], [_y()], inits, opset=13), _feeds())
    assert "EXTRACT_DIM" not in graph.histogram()


# -- Flatten / Squeeze / Unsqueeze -------------------------------------------------------------

@pytest.mark.parametrize("axis", [0, 1, 2, 3, -1, -2, -3])
def test_flatten(axis):
    check_with_onnxruntime(one_node("Flatten", [_x()], [_y()], opset=13, axis=axis), _feeds())


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axes", [[1], [-3], [1, -1]], ids=str)
def test_squeeze_with_axes(opset, axes):
    x = _x(("b", 1, "s", 1))
    attrs, inits = ({"axes": axes}, []) if opset < 13 else ({}, [const("axes", np.array(axes, np.int64))])
    model = one_node("Squeeze", [x], [_y()], inits, opset=opset, **attrs)
    check_with_onnxruntime(model, [{"x": rand(b, 1, s, 1, seed=b)} for b, s in ((2, 3), (1, 4), (3, 1))])


def test_squeeze_without_axes_drops_the_static_ones():
    model = one_node("Squeeze", [_x((1, "s", 1, 4))], [_y()], opset=13)
    check_with_onnxruntime(model, [{"x": rand(1, s, 1, 4, seed=s)} for s in (3, 2)])


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axes", [[0], [-1], [1, 3], [0, 4]], ids=str)
def test_unsqueeze(opset, axes):
    attrs, inits = ({"axes": axes}, []) if opset < 13 else ({}, [const("axes", np.array(axes, np.int64))])
    check_with_onnxruntime(one_node("Unsqueeze", [_x()], [_y()], inits, opset=opset, **attrs), _feeds())


# -- Shape / Size / Constant / ConstantOfShape / Identity ----------------------------------------

@pytest.mark.parametrize("bounds", [{}, {"start": 1}, {"end": -1}, {"start": -2}, {"start": -1},
                                    {"start": -10, "end": 10}, {"start": 1, "end": 2}], ids=str)
def test_shape_start_end(bounds):
    check_with_onnxruntime(one_node("Shape", [_x()], [_y(I64)], opset=15, **bounds), _feeds())


def test_size_and_identity():
    check_with_onnxruntime(one_node("Size", [_x()], [_y(I64)], opset=13), _feeds())
    check_with_onnxruntime(one_node("Identity", [_x()], [_y()], opset=16), _feeds())


def test_constant_added_to_input():
    value = helper.make_tensor("v", 1, [4], [1.0, 2.0, 3.0, 4.0])
    nodes = [_node("Constant", [], ["c"], value=value), _node("Add", ["x", "c"], ["y"])]
    check_with_onnxruntime(make_model(nodes, [_x()], [_y()], opset=13), _feeds())


def test_constant_of_shape_from_a_symbolic_shape():
    value = helper.make_tensor("v", 1, [1], [1.5])
    nodes = [_node("Shape", ["x"], ["shp"]), _node("ConstantOfShape", ["shp"], ["y"], value=value)]
    check_with_onnxruntime(make_model(nodes, [_x()], [_y()], opset=13), _feeds())


def test_constant_of_shape_static_int64():
    value = helper.make_tensor("v", I64, [1], [7])
    model = one_node("ConstantOfShape", [], [_y(I64)], [const("shape", np.array([2, 3], np.int64))],
                     opset=13, value=value)
    check_with_onnxruntime(model, [{}])


# -- Expand / Range ---------------------------------------------------------------------

@pytest.mark.parametrize("target", [[2, 1, 4], [3, 1, 1, 1], [1]], ids=str)
def test_expand_constant_target(target):
    x = _x((1, "s", 1))
    model = one_node("Expand", [x], [_y()], [const("shape", np.array(target, np.int64))], opset=13)
    check_with_onnxruntime(model, [{"x": rand(1, s, 1, seed=s)} for s in (3, 1)])


def test_expand_to_the_shape_of_another_input():
    nodes = [_node("Shape", ["z"], ["shp"]), _node("Expand", ["x", "shp"], ["y"])]
    x, z = info("x", F32, [1, "s", 1]), info("z", F32, ["b", "s", 4])
    model = make_model(nodes, [x, z], [_y()], opset=13)
    feeds = [{"x": rand(1, s, 1, seed=s), "z": rand(b, s, 4)} for b, s in ((2, 3), (1, 1), (3, 2))]
    check_with_onnxruntime(model, feeds)


def test_expand_a_symbolic_dim_against_a_broadcast_target():
    nodes = [_node("Shape", ["z"], ["shp"]), _node("Expand", ["x", "shp"], ["y"])]
    x, z = info("x", F32, ["a", 4]), info("z", F32, ["b", 4])
    model = make_model(nodes, [x, z], [_y()], opset=13)
    feeds = [{"x": rand(a, 4), "z": rand(b, 4)} for a, b in ((1, 3), (3, 3), (2, 1))]
    check_with_onnxruntime(model, feeds)


def test_range_constant():
    inits = [const(n, np.array(v, np.int64)) for n, v in (("start", 2), ("limit", 11), ("delta", 3))]
    check_with_onnxruntime(one_node("Range", [], [_y(I64)], inits, opset=13), [{}])


@pytest.mark.parametrize("start,delta", [(0, 1), (1, 2), (10, -2)])
def test_range_over_a_symbolic_dim(start, delta):
    nodes = [_node("Shape", ["x"], ["shp"]), _node("Gather", ["shp", "one"], ["n"], axis=0),
             _node("Range", ["start", "n", "delta"], ["y"])]
    inits = [const("one", np.array(1, np.int64)), const("start", np.array(start, np.int64)),
             const("delta", np.array(delta, np.int64))]
    graph = check_with_onnxruntime(make_model(nodes, [_x()], [_y(I64)], inits, opset=13), _feeds())
    assert "IOTA" in graph.histogram()


def test_range_float_constant():
    inits = [const(n, np.array(v, np.float32)) for n, v in (("start", 0.5), ("limit", 3.0), ("delta", 0.75))]
    check_with_onnxruntime(one_node("Range", [], [_y()], inits, opset=13), [{}])


def test_reshape_ir_has_no_minus_one_for_symbolic_dims():
    model = one_node("Reshape", [_x()], [_y()], [const("shape", np.array([0, -1], np.int64))], opset=13)
    reshape = [op for op in convert(model).ops if op.op.name == "RESHAPE"][0]
    assert reshape.attrs.new_shape == (-1, -1) and len(reshape.operands) == 3


def test_exporter_style_reshape_pipeline():
    """Shape -> Gather -> Unsqueeze -> Concat (with constants) -> Reshape, then Shape -> Slice -> Concat."""
    nodes = [
        _node("Shape", ["x"], ["shp"]),
        _node("Gather", ["shp", "zero"], ["b"], axis=0),
        _node("Unsqueeze", ["b", "axes0"], ["b1"]),
        _node("Concat", ["b1", "minus_one", "two"], ["t1"], axis=0),
        _node("Reshape", ["x", "t1"], ["r1"]),
        _node("Shape", ["r1"], ["shp2"]),
        _node("Slice", ["shp2", "s0", "s2"], ["lead"]),
        _node("Concat", ["lead", "minus_one"], ["t2"], axis=0),
        _node("Reshape", ["r1", "t2"], ["y"]),
    ]
    inits = [const("zero", np.array(0, np.int64)), const("axes0", np.array([0], np.int64)),
             const("minus_one", np.array([-1], np.int64)), const("two", np.array([2], np.int64)),
             const("s0", np.array([0], np.int64)), const("s2", np.array([2], np.int64))]
    graph = check_with_onnxruntime(make_model(nodes, [_x()], [_y()], inits, opset=13), _feeds())
    assert "EXTRACT_DIM" not in graph.histogram()
