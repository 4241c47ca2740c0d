"""uint8 and int64 model inputs and outputs (issue 11, class 9) against onnxruntime.

An image model that takes uint8 pixels (uint8 -> Cast float -> Conv ...) and returns a uint8 image
(Clip -> Cast uint8) and an int64 ArgMax converts: the program input is INT8 holding the pixel bits,
read through one unsigned RESCALE, and the uint8 output is INT8 bits. Both the symbolic and the
emitted static program match onnxruntime at two bindings (fed the pixels' bits, compared as bits),
and the official reference model agrees on the .tosa. A uint8 input that an op would read as signed
data while a quantized op needs its bits is refused naming the op (one that only ops computing on
values read is widened to INT32: test_unsigned_arith_io.py)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from tosaconv.diagnostics import TosaconvError
from tosaconv.emit import read_tosa
from tosaconv.io_dtypes import to_model, to_program

from .harness import (F32, check_reference_model, compare_both_paths, const, convert, info, make_model, rand,
                      run_graph, run_onnxruntime, specialize_and_emit)

U8, I64 = TensorProto.UINT8, TensorProto.INT64


def image_model():
    nodes = [
        helper.make_node("Cast", ["image"], ["f"], name="to_float", to=TensorProto.FLOAT),
        helper.make_node("Mul", ["f", "inv255"], ["scaled"], name="scale"),
        helper.make_node("Conv", ["scaled", "w", "b"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["features"], name="relu"),
        helper.make_node("Mul", ["features", "k"], ["big"], name="gain"),
        helper.make_node("Clip", ["big", "lo", "hi"], ["clipped"], name="clip"),
        helper.make_node("Cast", ["clipped"], ["mask"], name="to_u8", to=U8),
        helper.make_node("ArgMax", ["conv"], ["best"], name="argmax", axis=1, keepdims=0),
    ]
    inits = [const("inv255", np.float32(1 / 255)), const("w", rand(4, 3, 3, 3, seed=1)),
             const("b", rand(4, seed=2)), const("k", np.float32(90.0)), const("lo", np.float32(0.0)),
             const("hi", np.float32(255.0))]
    outputs = [info("features", F32, None), info("mask", U8, None), info("best", I64, None)]
    return make_model(nodes, [info("image", U8, ["N", 3, "H", "W"])], outputs, inits, 17)


def pixels(*shape, seed=0):
    return np.random.default_rng(seed).integers(0, 256, shape).astype(np.uint8)


def test_uint8_image_model_matches_onnxruntime(tmp_path):
    model = image_model()
    graph = convert(model)
    assert graph.input_dtypes == {"image": "uint8"}
    assert graph.output_dtypes == {"mask": "uint8", "best": "int64"}
    for i, shape in enumerate([(1, 3, 6, 7), (2, 3, 4, 4)]):
        image = pixels(*shape, seed=i)
        assert (image >= 128).any()
        want = run_onnxruntime(model, {"image": image})
        stored = {"image": image.view(np.int8)}           # the program's INT8 input holds the pixel bits
        want_stored = [want[0], want[1].view(np.int8), want[2]]
        compare_both_paths(graph, stored, want_stored, 1e-5, 1e-5)
        got = to_model(graph, dict(zip(graph.output_names, run_graph(graph, to_program(graph, {"image": image})))))
        assert got["mask"].dtype == np.uint8 and got["best"].dtype == np.int64
        np.testing.assert_array_equal(got["mask"], want[1])
        np.testing.assert_array_equal(got["best"], want[2])
    image = pixels(1, 3, 5, 5, seed=9)
    static, tosa = specialize_and_emit(graph, {"image": image.shape})
    got = run_graph(read_tosa(tosa), {"image": image.view(np.int8)})
    check_reference_model(tosa, static, {"image": image.view(np.int8)}, got, tmp_path)


def test_uint8_passthrough_and_cast_to_int():
    nodes = [helper.make_node("Transpose", ["x"], ["t"], name="tr", perm=[1, 0]),
             helper.make_node("Cast", ["t"], ["wide"], name="wide", to=TensorProto.INT32),
             helper.make_node("Identity", ["t"], ["same"], name="id"),
             helper.make_node("Shape", ["x"], ["dims"], name="dims")]
    model = make_model(nodes, [info("x", U8, ["A", 4])], [info("wide", TensorProto.INT32, None),
                                                           info("same", U8, None), info("dims", I64, None)], (), 17)
    graph = convert(model)
    for i, a in enumerate([2, 5]):
        x = pixels(a, 4, seed=i)
        want = run_onnxruntime(model, {"x": x})
        compare_both_paths(graph, {"x": x.view(np.int8)}, [want[0], want[1].view(np.int8), want[2]], 0, 0)


def dequantized(x: str = "x") -> list:
    """A DequantizeLinear of ``x`` (an op that needs the uint8 input's bits, so it stays INT8 bits)."""
    return [helper.make_node("DequantizeLinear", [x, "s", "zp"], ["dq"], name="dq")]


DQ_INITS = [const("s", np.float32(0.5)), const("zp", np.uint8(128))]


def test_uint8_input_read_as_signed_data_is_refused():
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"], name="flat"),
             helper.make_node("Add", ["r", "r"], ["y"], name="add0")] + dequantized()
    model = make_model(nodes, [info("x", U8, [2, 4])], [info("y", U8, None), info("dq", F32, None)],
                       [const("shape", np.array([8], np.int64))] + DQ_INITS, 17)
    with pytest.raises(TosaconvError, match=r"input 'x' is uint8, .* Add 'add0' reads it directly") as e:
        convert(model)
    assert "insert a Cast of 'x' to int32 or float before Add" in e.value.diagnostics[0].hint


def test_uint8_input_read_inside_a_branch_is_refused_too():
    def branch(name):
        return helper.make_graph([helper.make_node("Neg", ["x"], [f"{name}_out"], name=f"neg_{name}")], name, [],
                                 [info(f"{name}_out", U8, None)])
    nodes = [helper.make_node("If", ["c"], ["y"], name="if0", then_branch=branch("then"), else_branch=branch("else"))]
    model = make_model(nodes + dequantized(), [info("c", TensorProto.BOOL, []), info("x", U8, [3])],
                       [info("y", U8, None), info("dq", F32, None)], DQ_INITS, 17)
    with pytest.raises(TosaconvError, match=r"input 'x' is uint8, .* Neg 'neg_then' reads it directly"):
        convert(model)
