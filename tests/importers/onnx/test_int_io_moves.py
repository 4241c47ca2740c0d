"""--int-io through layout ops at the edges: the quantization moves onto the graph input or output.

Each model has a float input that reaches its QuantizeLinear only through layout ops (SpaceToDepth and
Gather as in YOLO-style detectors, a Transpose and a constant Pad, four Slices and a Concat) and a float
output made by layout ops after a DequantizeLinear. The body between is a MaxPool whose DequantizeLinear
and QuantizeLinear share one scale and zero point, so it is exact in both runtimes.

Truth is onnxruntime on the *float-I/O* model: an integer input ``q`` is turned into floats with the
scale and zero point tosaconv reports (``(q - zp) * scale``, which quantize back to ``q``), onnxruntime
runs the float model on them, and the --int-io program run on ``q`` must give integers that, dequantized
with the reported output scale and zero point, equal onnxruntime's floats exactly. One case also runs on
the official reference model. Edges that cannot move are refused with a note saying which op stops them.
"""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from tosaconv import api
from tosaconv.cli import cli
from tosaconv.ir.io_quant import describe_io
from tests.importers.onnx.harness import const, info, make_model, run_graph, run_onnxruntime, specialize_and_emit
from tests.tosa_tools import run_reference_model

NUMPY = {TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8}


def _params(act: int, prefix: str, scale: float, zp_int8: int) -> list:
    zp = zp_int8 if act == TensorProto.INT8 else zp_int8 + 128
    return [const(f"{prefix}s", np.float32(scale)), const(f"{prefix}z", np.array(zp, NUMPY[act]))]


def _body(x: str, y: str) -> list:
    """Q -> DQ -> MaxPool -> Q -> DQ with one scale and zero point (``qs``, ``qz``)."""
    return [helper.make_node("QuantizeLinear", [x, "qs", "qz"], ["xq"], name="quant_in"),
            helper.make_node("DequantizeLinear", ["xq", "qs", "qz"], ["xd"], name="dequant_in"),
            helper.make_node("MaxPool", ["xd"], ["mp"], kernel_shape=[2, 2], strides=[1, 1], pads=[0, 0, 1, 1],
                             name="pool"),
            helper.make_node("QuantizeLinear", ["mp", "qs", "qz"], ["mq"], name="quant_out"),
            helper.make_node("DequantizeLinear", ["mq", "qs", "qz"], [y], name="dequant_out")]


def space_to_depth_gather(act: int) -> onnx.ModelProto:
    """ddddocr common_det's input: SpaceToDepth then a Gather of the channels; the output is transposed and
    flattened after its DequantizeLinear."""
    perm = np.array([3, 0, 11, 5, 1, 7, 2, 9, 4, 10, 6, 8], np.int64)
    nodes = [helper.make_node("SpaceToDepth", ["x"], ["s2d"], blocksize=2, name="s2d"),
             helper.make_node("Gather", ["s2d", "perm"], ["g"], axis=1, name="gather"),
             *_body("g", "body"),
             helper.make_node("Transpose", ["body"], ["t"], perm=[0, 2, 3, 1], name="to_nhwc"),
             helper.make_node("Flatten", ["t"], ["y"], axis=1, name="flatten")]
    inits = [const("perm", perm), *_params(act, "q", 0.037, -9)]
    return make_model(nodes, [info("x", TensorProto.FLOAT, [1, 3, 8, 8])], [info("y", TensorProto.FLOAT, None)],
                      inits, opset=13)


def transpose_pad_slice(act: int) -> onnx.ModelProto:
    """NHWC input transposed, padded with 0.5 (not a multiple of the scale: the input side pads with its
    quantized value, exactly) and sliced; the output is padded with an exactly representable value,
    squeezed and unsqueezed."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 3, 1, 2], name="to_nchw"),
             helper.make_node("Pad", ["t", "pads", "c_in"], ["p"], mode="constant", name="pad_in"),
             helper.make_node("Slice", ["p", "starts", "ends", "axes"], ["sl"], name="slice"),
             *_body("sl", "body"),
             helper.make_node("Pad", ["body", "pads", "c_out"], ["po"], mode="constant", name="pad_out"),
             helper.make_node("Unsqueeze", ["po", "ax0"], ["u"], name="unsqueeze"),
             helper.make_node("Squeeze", ["u", "ax0"], ["y"], name="squeeze")]
    inits = [const("pads", np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64)), const("c_in", np.float32(0.5)),
             const("starts", np.array([1], np.int64)), const("ends", np.array([6], np.int64)),
             const("axes", np.array([2], np.int64)), const("c_out", np.float32(0.04 * 7)),
             const("ax0", np.array([0], np.int64)), *_params(act, "q", 0.04, 5)]
    return make_model(nodes, [info("x", TensorProto.FLOAT, [1, 6, 5, 3])], [info("y", TensorProto.FLOAT, None)],
                      inits, opset=13)


def focus_concat(act: int) -> onnx.ModelProto:
    """YOLOv5's Focus: four strided Slices of the input and a Concat, then the QuantizeLinear; the output is
    a Reshape of a Relu (int8 only) of the DequantizeLinear."""
    slices, names = [], []
    for k in range(4):
        slices.append(helper.make_node("Slice", ["x", f"st{k}", "big", "hw", "two"], [f"s{k}"], name=f"slice{k}"))
        names.append(f"s{k}")
    nodes = [*slices, helper.make_node("Concat", names, ["cat"], axis=1, name="focus"),
             *_body("cat", "body"),
             helper.make_node("Relu" if act == TensorProto.INT8 else "Identity", ["body"], ["r"], name="relu"),
             helper.make_node("Reshape", ["r", "shape"], ["y"], name="reshape")]
    inits = [const("big", np.array([1 << 20, 1 << 20], np.int64)), const("hw", np.array([2, 3], np.int64)),
             const("two", np.array([2, 2], np.int64)), const("shape", np.array([1, -1], np.int64)),
             *[const(f"st{k}", np.array(s, np.int64)) for k, s in enumerate([(0, 0), (1, 0), (0, 1), (1, 1)])],
             *_params(act, "q", 0.05, 12)]
    return make_model(nodes, [info("x", TensorProto.FLOAT, [1, 2, 6, 6])], [info("y", TensorProto.FLOAT, None)],
                      inits, opset=13)


def relu_max_pool(act: int) -> onnx.ModelProto:
    """Order-preserving ops before the input's QuantizeLinear: a Relu (int8 only: it becomes a CLAMP at the
    zero point) and a padded MaxPool; a DepthToSpace after the output's DequantizeLinear."""
    relu = [helper.make_node("Relu", ["x"], ["r"], name="relu")] if act == TensorProto.INT8 else \
        [helper.make_node("Identity", ["x"], ["r"], name="same")]
    nodes = [*relu, helper.make_node("MaxPool", ["r"], ["m"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], name="pool_in"),
             *_body("m", "body"),
             helper.make_node("DepthToSpace", ["body"], ["y"], blocksize=2, mode="CRD", name="d2s")]
    return make_model(nodes, [info("x", TensorProto.FLOAT, [1, 4, 6, 6])], [info("y", TensorProto.FLOAT, None)],
                      _params(act, "q", 0.02, -20), opset=13)


def _load(model: onnx.ModelProto, tmp_path, int_io: bool = True):
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return api.load(str(path), int_io=int_io)


def _dequantize(q: np.ndarray, edge: dict) -> np.ndarray:
    return (q.astype(np.float32) - np.float32(edge["zero_point"])) * np.float32(edge["scale"])


def check_against_float_model(model: onnx.ModelProto, tmp_path, reference: bool = False):
    graph = _load(model, tmp_path)
    io = describe_io(graph)
    (edge_in,), (edge_out,) = io["inputs"], io["outputs"]
    assert (edge_in["dtype"], edge_in["source_dtype"], edge_out["dtype"]) == ("int8", "float32", "int8")
    shape = tuple(graph.inputs[0].type.shape)
    for seed in range(3):
        q = np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)
        want = run_onnxruntime(model, {"x": _dequantize(q, edge_in)}, optimize=False)[0]
        got = run_graph(graph, {"x": q})[0]
        assert got.dtype == np.int8 and got.shape == want.shape
        np.testing.assert_array_equal(_dequantize(got, edge_out), want)
    if reference:
        static, tosa = specialize_and_emit(graph, {"x": shape})
        ref = run_reference_model(tosa, {"x": q}, static.output_names, tmp_path / "ref")
        np.testing.assert_array_equal(ref[static.output_names[0]], got)
    return graph


ACTS = pytest.mark.parametrize("act", [TensorProto.INT8, TensorProto.UINT8], ids=["int8", "uint8"])


@ACTS
def test_space_to_depth_and_gather_before_the_input_quantize(tmp_path, act):
    graph = check_against_float_model(space_to_depth_gather(act), tmp_path, reference=True)
    assert not any(v.type.dtype.is_float for op in graph.ops for v in op.results), "a float op is left"


@ACTS
def test_transpose_pad_slice_at_the_input_and_pad_squeeze_at_the_output(tmp_path, act):
    check_against_float_model(transpose_pad_slice(act), tmp_path)


@ACTS
def test_slices_and_concat_at_the_input_and_relu_reshape_at_the_output(tmp_path, act):
    check_against_float_model(focus_concat(act), tmp_path)


@ACTS
def test_relu_and_max_pool_at_the_input_and_depth_to_space_at_the_output(tmp_path, act):
    check_against_float_model(relu_max_pool(act), tmp_path)


def test_a_concat_of_one_value_twice_and_an_identity_output(tmp_path):
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 1, 3, 2], name="swap"),
             helper.make_node("Concat", ["t", "t"], ["c"], axis=1, name="twice"), *_body("c", "body"),
             helper.make_node("Identity", ["body"], ["y"], name="same")]
    model = make_model(nodes, [info("x", TensorProto.FLOAT, [1, 2, 4, 4])], [info("y", TensorProto.FLOAT, None)],
                       _params(TensorProto.INT8, "q", 0.05, 3), opset=13)
    check_against_float_model(model, tmp_path)


def test_reported_edge_parameters_are_the_models(tmp_path):
    io = describe_io(_load(space_to_depth_gather(TensorProto.UINT8), tmp_path))
    for edge in io["inputs"] + io["outputs"]:
        assert (edge["scale"], edge["zero_point"]) == (float(np.float32(0.037)), -9)


def _refusal(model: onnx.ModelProto, tmp_path) -> list:
    path = tmp_path / "refused.onnx"
    onnx.save(model, str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "--int-io", "-o", str(tmp_path / "x.tosa"), "--json"])
    assert r.exit_code == 3, r.output
    return json.loads(r.stdout)["diagnostics"]


def test_a_non_commuting_op_before_the_quantize_is_refused(tmp_path):
    model = space_to_depth_gather(TensorProto.INT8)
    model.graph.node[1].op_type, model.graph.node[1].input[1] = "Sigmoid", ""
    del model.graph.node[1].input[1:], model.graph.node[1].attribute[:]
    (diag,) = _refusal(model, tmp_path)
    assert diag["message"] == "--int-io: input 'x' is float32 and is not quantized by a QuantizeLinear"
    assert diag["notes"] == ["its quantization cannot move onto the edge: Sigmoid 'gather' reads it, and Sigmoid "
                             "does not commute with quantization"]


def test_an_output_pad_value_the_quantization_cannot_represent_is_refused(tmp_path):
    model = transpose_pad_slice(TensorProto.INT8)
    next(t for t in model.graph.initializer if t.name == "c_out").CopyFrom(const("c_out", np.float32(0.01)))
    (diag,) = _refusal(model, tmp_path)
    assert diag["message"] == "--int-io: output 'y' is float32 and is not produced by a DequantizeLinear"
    assert diag["notes"] == [f"its quantization cannot move onto the edge: Pad 'pad_out' pads with "
                             f"{float(np.float32(0.01))}, which the output's quantization (scale "
                             f"{float(np.float32(0.04))}, zero point 5) cannot represent exactly"]


def test_a_uint8_relu_at_the_output_is_refused(tmp_path):
    model = focus_concat(TensorProto.UINT8)
    next(n for n in model.graph.node if n.name == "relu").op_type = "Relu"
    (diag,) = _refusal(model, tmp_path)
    assert diag["notes"] == ["its quantization cannot move onto the edge: Relu 'relu' on uint8 data (an integer "
                             "relu is done for int8)"]


def test_without_int_io_the_model_is_unchanged(tmp_path):
    graph = _load(space_to_depth_gather(TensorProto.INT8), tmp_path, int_io=False)
    assert graph.inputs[0].type.dtype.is_float and not describe_io(graph)["inputs"][0]["scale"]
