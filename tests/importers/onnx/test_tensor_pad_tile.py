"""ONNX Pad, Tile, DepthToSpace and SpaceToDepth against onnxruntime, on inputs
with symbolic dims fed at two sizes (the harness runs both the symbolic
program and the specialized, emitted and read-back one).

Pad: every mode (wrap from opset 19), negative pads (cropping) mixed with
positive ones, the opset-18 ``axes`` input (negative axes too), a
``constant_value`` given as a constant and one given at run time, int data.
Tile: constant repeats and repeats computed from a shape (DYN_TILE). Also the
errors: pads only known at run time, a reflect pad as large as the dim, a
repeat of 0, a DepthToSpace channel count that does not split.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tosaconv import api
from tosaconv.diagnostics import ShapeError, TosaconvError

from .harness import (F32, I32, I64, check_with_onnxruntime, const, convert, info,
                      make_model, one_node, rand)

SHAPES = [(2, 3, 5), (1, 3, 7)]
REFLECT_SHAPES = [(2, 3, 5), (3, 3, 7)]   # onnxruntime's reflect wants every axis >= 2, padded or not


def _feeds(shapes=SHAPES, dtype=np.float32):
    return [{"x": (rand(*s, seed=i) * 10).astype(dtype)} for i, s in enumerate(shapes)]


def _pad_model(mode, pads, opset=19, axes=None, value=None, elem=F32):
    inits = [const("pads", np.array(pads, np.int64))]
    names = ["x", "pads"]
    if value is not None or axes is not None:
        names.append("")
        if value is not None:
            inits.append(const("value", np.array(value, dtype=np.float32 if elem == F32 else np.int32)))
            names[-1] = "value"
    if axes is not None:
        inits.append(const("axes", np.array(axes, np.int64)))
        names.append("axes")
    node = helper.make_node("Pad", names, ["y"], name="pad_node", mode=mode)
    return make_model([node], [info("x", elem, ["N", 3, "W"])], [info("y", elem, None)], inits, opset)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
@pytest.mark.parametrize("pads", [[0, 1, 2, 1, 0, 3], [1, 0, -1, 0, 2, 2], [0, 0, 2, 0, 0, -2]], ids=str)
def test_pad_modes_match_onnxruntime(mode, pads):
    check_with_onnxruntime(_pad_model(mode, pads), _feeds(REFLECT_SHAPES if mode == "reflect" else SHAPES))


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_pad_older_opsets(opset):
    check_with_onnxruntime(_pad_model("reflect", [0, 1, 1, 0, 1, 2], opset=opset), _feeds(REFLECT_SHAPES))
    check_with_onnxruntime(_pad_model("constant", [1, 0, 1, 0, 1, 2], opset=opset, value=-1.5), _feeds())


@pytest.mark.parametrize("axes", [[2], [-1, 0], [1, -1]], ids=str)
def test_pad_axes_input(axes):
    pads = {1: [2, 1], 2: [1, 2, 0, 3]}[len(axes)]
    check_with_onnxruntime(_pad_model("edge", pads, opset=18, axes=axes), _feeds())
    check_with_onnxruntime(_pad_model("constant", pads, opset=18, axes=axes, value=4.0), _feeds())


def test_pad_constant_value_at_run_time():
    x, v = info("x", F32, ["N", 3, "W"]), info("v", F32, [])
    node = helper.make_node("Pad", ["x", "pads", "v"], ["y"], mode="constant")
    model = make_model([node], [x, v], [info("y", F32, None)], [const("pads", np.array([1, 0, 2, 0, 1, 1]))])
    feeds = [dict(f, v=np.array(7.25, np.float32)) for f in _feeds()]
    check_with_onnxruntime(model, feeds)


@pytest.mark.parametrize("mode", ["constant", "reflect"])
def test_pad_int_data(mode):
    model = _pad_model(mode, [1, 1, 2, 0, 0, 1], elem=I32, value=9 if mode == "constant" else None)
    check_with_onnxruntime(model, _feeds(REFLECT_SHAPES, dtype=np.int32))


def test_pad_amounts_at_run_time_are_refused():
    x, pads = info("x", F32, ["N", 3]), info("pads", I64, [4])
    model = one_node("Pad", [x, pads], [info("y", F32, None)])
    with pytest.raises(TosaconvError, match="Pad pads input 'pads': input pads computed from tensor data at run time is not supported"):
        convert(model)


def test_reflect_pad_too_large_is_refused_or_checked():
    static = one_node("Pad", [info("x", F32, [2, 3])], [info("y", F32, None)],
                      [const("pads", np.array([0, 3, 0, 0]))], mode="reflect")
    with pytest.raises(ShapeError, match="reflect Pad of 3"):
        convert(static)
    graph = convert(_pad_model("reflect", [0, 0, 3, 0, 0, 0]))
    api.specialize(graph, {"N": 2, "W": 4})
    with pytest.raises(ShapeError, match="W >= 3|W - 1 >= 3"):
        api.specialize(graph, {"N": 2, "W": 3})


def _tile_model(repeats_from_shape: bool):
    x = info("x", F32, ["N", 3])
    if not repeats_from_shape:
        return one_node("Tile", [x], [info("y", F32, None)], [const("r", np.array([2, 3], np.int64))])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Div", ["s", "three"], ["r"]),
             helper.make_node("Tile", ["x", "r"], ["y"])]
    return make_model(nodes, [x], [info("y", F32, None)], [const("three", np.array([1, 3], np.int64))])


@pytest.mark.parametrize("from_shape", [False, True])
def test_tile_matches_onnxruntime(from_shape):
    graph = check_with_onnxruntime(_tile_model(from_shape), [{"x": rand(n, 3, seed=n)} for n in (2, 4)])
    assert ("DYN_TILE" in graph.histogram()) == from_shape


def test_tile_zero_repeat_is_refused():
    model = one_node("Tile", [info("x", F32, ["N", 3])], [info("y", F32, None)],
                     [const("r", np.array([0, 2], np.int64))])
    with pytest.raises(TosaconvError, match="include a count below 1"):
        convert(model)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode):
    model = one_node("DepthToSpace", [info("x", F32, ["N", 8, "H", "W"])], [info("y", F32, None)],
                     blocksize=2, mode=mode)
    check_with_onnxruntime(model, [{"x": rand(*s, seed=i)} for i, s in enumerate([(1, 8, 2, 3),
                                                                                          (2, 8, 3, 1)])])


def test_depth_to_space_symbolic_channels_record_divisibility():
    model = one_node("DepthToSpace", [info("x", F32, [1, "C", 2, 2])], [info("y", F32, None)], blocksize=3)
    graph = check_with_onnxruntime(model, [{"x": rand(1, 9, 2, 2)}, {"x": rand(1, 18, 2, 2)}])
    with pytest.raises(ShapeError, match="C % 9 == 0"):
        api.specialize(graph, {"C": 12})


def test_depth_to_space_static_channels_that_do_not_split_are_refused():
    model = one_node("DepthToSpace", [info("x", F32, [1, 6, 2, 2])], [info("y", F32, None)], blocksize=2)
    with pytest.raises(ShapeError, match="6 % 4 == 0"):
        convert(model)


def test_space_to_depth():
    model = one_node("SpaceToDepth", [info("x", F32, ["N", 3, "H", "W"])], [info("y", F32, None)], blocksize=2)
    check_with_onnxruntime(model, [{"x": rand(*s, seed=i)} for i, s in enumerate([(1, 3, 4, 6),
                                                                                          (2, 3, 2, 2)])])
    with pytest.raises(ShapeError, match="H % 2 == 0"):
        api.specialize(convert(model), {"N": 1, "H": 3, "W": 4})
