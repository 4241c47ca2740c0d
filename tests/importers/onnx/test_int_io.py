"""--int-io on QDQ ONNX models: the program takes and returns the int8 (uint8-as-int8) tensors.

Models: a QDQ convolution built here with ``onnx.helper`` (int8 and uint8 activations, opsets 13 and
21), and a small float CNN quantized by onnxruntime's own ``quantize_static`` (QDQ, int8 and uint8
activations). For each, onnxruntime runs the model with its graph optimizations off (so the
QuantizeLinear and DequantizeLinear nodes run as nodes: its fused int8 kernels take other shortcuts)
and with the input's QuantizeLinear result and the output's DequantizeLinear input as extra outputs.
The --int-io program fed onnxruntime's quantized input must then:

* equal the float-io tosaconv program exactly once dequantized with the *reported* scale and zero
  point (the same float32 ``(q - zp) * scale`` the float program ends with);
* agree with onnxruntime's int8 output within the documented 1 LSB (onnxruntime requantizes in
  float, tosaconv's RESCALE rounds the exact value);
* run on the official reference model with the same integers.
"""
from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper
from onnxruntime.quantization import CalibrationDataReader, QuantType, quantize_static

from tosaconv import api
from tosaconv.cli import cli
from tosaconv.ir.io_quant import describe_io
from tests.importers.tflite.test_int_io import assert_all_on_npu
from tests.importers.onnx.harness import const, info, make_model, rand, run_graph, specialize_and_emit
from tests.tosa_tools import run_reference_model

NUMPY = {TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8}


def qdq_conv(act: int, opset: int) -> onnx.ModelProto:
    """x -> QuantizeLinear -> DequantizeLinear -> Conv (int8 weights, int32 bias) -> Q -> DQ -> y."""
    zx, zy = (3, -5) if act == TensorProto.INT8 else (131, 120)
    rng = np.random.default_rng(opset)
    w = rng.integers(-60, 61, (4, 3, 3, 3)).astype(np.int8)
    inits = [const("xs", np.float32(0.02)), const("xz", np.array(zx, NUMPY[act])), const("w", w),
             const("ws", np.float32(0.004)), const("wz", np.int8(0)),
             const("b", rng.integers(-500, 500, 4).astype(np.int32)), const("bs", np.float32(0.02 * 0.004)),
             const("ys", np.float32(0.03)), const("yz", np.array(zy, NUMPY[act]))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["x_q"]),
             helper.make_node("DequantizeLinear", ["x_q", "xs", "xz"], ["x_d"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["w_d"]),
             helper.make_node("DequantizeLinear", ["b", "bs"], ["b_d"]),
             helper.make_node("Conv", ["x_d", "w_d", "b_d"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["y_q"]),
             helper.make_node("DequantizeLinear", ["y_q", "ys", "yz"], ["y"])]
    return make_model(nodes, [info("x", TensorProto.FLOAT, [1, 3, 8, 8])], [info("y", TensorProto.FLOAT, None)],
                      inits, opset=opset)


class _Images(CalibrationDataReader):
    def __init__(self, name: str, shape):
        self.feeds = iter([{name: rand(*shape, seed=s)} for s in range(4)])

    def get_next(self):
        return next(self.feeds, None)


def _float_cnn() -> onnx.ModelProto:
    """conv -> relu -> conv, plus the first conv's output (a residual Add): what quantize_static wraps."""
    rng = np.random.default_rng(7)
    inits = [const("w1", (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)),
             const("b1", (rng.standard_normal(8) * 0.1).astype(np.float32)),
             const("w2", (rng.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32)),
             const("b2", (rng.standard_normal(8) * 0.1).astype(np.float32))]
    nodes = [helper.make_node("Conv", ["image", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
             helper.make_node("Add", ["c2", "r1"], ["out"], name="add")]
    return make_model(nodes, [info("image", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [info("out", TensorProto.FLOAT, [1, 8, 8, 8])], inits, opset=13)


def ort_quantized(tmp_path, activation: QuantType) -> onnx.ModelProto:
    src, dst = tmp_path / "float.onnx", tmp_path / "quant.onnx"
    onnx.save(_float_cnn(), str(src))
    quantize_static(str(src), str(dst), _Images("image", (1, 3, 8, 8)), activation_type=activation,
                    weight_type=QuantType.QInt8)
    return onnx.load(str(dst))


def _edge_tensors(model: onnx.ModelProto) -> tuple:
    """(the input's QuantizeLinear result, the output's DequantizeLinear input) of a QDQ model."""
    g = model.graph
    q = next(n for n in g.node if n.op_type == "QuantizeLinear" and n.input[0] == g.input[0].name)
    dq = next(n for n in g.node if n.op_type == "DequantizeLinear" and n.output[0] == g.output[0].name)
    return q.output[0], dq.input[0]


def ort_run(model: onnx.ModelProto, feeds: dict) -> tuple:
    """onnxruntime, node by node: (float output, quantized input, integer output)."""
    xq, yq = _edge_tensors(model)
    m = onnx.ModelProto()
    m.CopyFrom(model)
    m.graph.output.extend([helper.make_empty_tensor_value_info(xq), helper.make_empty_tensor_value_info(yq)])
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(m.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return tuple(session.run(None, feeds))


def load(model: onnx.ModelProto, tmp_path, int_io: bool):
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return api.load(str(path), int_io=int_io)


def signed(q: np.ndarray) -> np.ndarray:
    """uint8 data in the signed form --int-io uses (q - 128); int8 unchanged."""
    return (q.astype(np.int16) - 128).astype(np.int8) if q.dtype == np.uint8 else q


def dequantize(q: np.ndarray, edge: dict) -> np.ndarray:
    """ONNX DequantizeLinear in float32, as the float-io program computes it."""
    return (q.astype(np.float32) - np.float32(edge["zero_point"])) * np.float32(edge["scale"])


def check_int_io(model: onnx.ModelProto, tmp_path, seeds=(0, 1, 2)):
    float_graph, graph = load(model, tmp_path, False), load(model, tmp_path, True)
    io = describe_io(graph)
    name, out = float_graph.inputs[0].name, float_graph.output_names[0]
    assert [(e["name"], e["dtype"], e["source_dtype"]) for e in io["inputs"] + io["outputs"]] == \
        [(name, "int8", "float32"), (out, "int8", "float32")]
    static, tosa = specialize_and_emit(graph, {name: tuple(graph.inputs[0].type.shape)})
    for n, seed in enumerate(seeds):
        x = rand(*graph.inputs[0].type.shape, low=-2.5, high=2.5, seed=seed)
        _, x_q, y_q = ort_run(model, {name: x})
        got = run_graph(graph, {name: signed(x_q)})[0]
        assert got.dtype == np.int8
        float_out = run_graph(float_graph, {name: x})[0]
        np.testing.assert_array_equal(dequantize(got, io["outputs"][0]), float_out)
        diff = np.abs(got.astype(np.int32) - signed(y_q).astype(np.int32))
        assert diff.max() <= 1 and (diff > 0).mean() < 0.02, f"vs onnxruntime: {diff.max()}, {(diff > 0).mean()}"
        ref = run_reference_model(tosa, {name: signed(x_q)}, static.output_names, tmp_path / f"ref{n}")
        np.testing.assert_array_equal(ref[out], got)
        assert len(np.unique(got)) > 8, "a saturated model proves little"
    return graph


@pytest.mark.parametrize("opset", [13, 21])
@pytest.mark.parametrize("act", [TensorProto.INT8, TensorProto.UINT8], ids=["int8", "uint8"])
def test_qdq_conv_with_integer_edges(tmp_path, act, opset):
    graph = check_int_io(qdq_conv(act, opset), tmp_path)
    assert graph.histogram().keys() <= {"CONV2D", "RESCALE", "TRANSPOSE", "CONST"}, graph.histogram()
    edges = describe_io(graph)
    shift = 128 if act == TensorProto.UINT8 else 0
    assert (edges["inputs"][0]["zero_point"], edges["outputs"][0]["zero_point"]) == \
        ((3, -5) if not shift else (131 - shift, 120 - shift))


def test_edge_parameters_from_constant_nodes(tmp_path):
    """Exporters (PyTorch) write scales and zero points as Constant nodes rather than initializers."""
    model = qdq_conv(TensorProto.INT8, 13)
    g = model.graph
    moved = [t for t in g.initializer if t.name in ("xs", "xz", "ys", "yz")]
    for t in moved:
        g.initializer.remove(t)
    nodes = [helper.make_node("Constant", [], [t.name], value=t) for t in moved] + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    check_int_io(model, tmp_path, seeds=(4,))


@pytest.mark.parametrize("activation", [QuantType.QInt8, QuantType.QUInt8], ids=["int8", "uint8"])
def test_onnxruntime_quantized_model_with_integer_edges(tmp_path, activation):
    model = ort_quantized(tmp_path, activation)
    graph = check_int_io(model, tmp_path)
    assert [v.name for v in graph.inputs] == ["image"] and graph.output_names == ["out"]
    tosa = tmp_path / "m.tosa"
    tosa.write_bytes(specialize_and_emit(graph, {"image": (1, 3, 8, 8)})[1])
    assert_all_on_npu(tosa, tmp_path / "vela")


def _float_model(tmp_path):
    path = tmp_path / "float.onnx"
    onnx.save(_float_cnn(), str(path))
    return str(path)


def test_float_model_is_refused_naming_input_and_output(tmp_path):
    r = CliRunner().invoke(cli, ["convert", _float_model(tmp_path), "--int-io", "-o", str(tmp_path / "x.tosa"),
                                 "--json"])
    assert r.exit_code == 3
    messages = [d["message"] for d in json.loads(r.stdout)["diagnostics"]]
    assert messages == ["--int-io: input 'image' is float32 and is not quantized by a QuantizeLinear",
                        "--int-io: output 'out' is float32 and is not produced by a DequantizeLinear"]


def test_input_feeding_quantize_and_float_ops_is_refused(tmp_path):
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="quant"),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], name="dequant"),
             helper.make_node("Add", ["x", "d"], ["y"], name="residual")]
    model = make_model(nodes, [info("x", TensorProto.FLOAT, [2, 4])], [info("y", TensorProto.FLOAT, None)],
                       [const("s", np.float32(0.1)), const("z", np.int8(0))], opset=13)
    path = tmp_path / "mixed.onnx"
    onnx.save(model, str(path))
    r = CliRunner().invoke(cli, ["inspect", str(path), "--int-io"])
    assert r.exit_code == 3
    text = " ".join(r.output.split())
    assert "input 'x' feeds a QuantizeLinear and also 1 other op(s) that read it as float (Add 'residual')" in text


_PER_AXIS_EDGES = {
    "input": [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1, name="quant"),
              helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1, name="dequant")],
    "output": [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=1, name="dequant")],
}


@pytest.mark.parametrize("edge, name", [("input", "x"), ("output", "y")])
def test_per_axis_edge_quantization_is_refused(tmp_path, edge, name):
    x_type = TensorProto.FLOAT if edge == "input" else TensorProto.INT8
    model = make_model(_PER_AXIS_EDGES[edge], [info("x", x_type, [2, 3])], [info("y", TensorProto.FLOAT, None)],
                       [const("s", np.array([0.1, 0.2, 0.3], np.float32)), const("z", np.zeros(3, np.int8))],
                       opset=13)
    path = tmp_path / "axis.onnx"
    onnx.save(model, str(path))
    r = CliRunner().invoke(cli, ["convert", str(path), "--int-io", "-o", str(tmp_path / "x.tosa"), "--json"])
    assert r.exit_code == 3
    messages = " ".join(d["message"] for d in json.loads(r.stdout)["diagnostics"])
    assert f"--int-io: {edge} '{name}' is quantized per axis (3 scales)" in messages


def _int8_in_uint8_out() -> onnx.ModelProto:
    """int8 x -> DequantizeLinear -> Relu -> QuantizeLinear to uint8 (same scale, zero point + 128)."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "zx"], ["d"], name="dq"),
             helper.make_node("Relu", ["d"], ["r"], name="relu"),
             helper.make_node("QuantizeLinear", ["r", "s", "zy"], ["y"], name="q")]
    return make_model(nodes, [info("x", TensorProto.INT8, [2, 64])], [info("y", TensorProto.UINT8, None)],
                      [const("s", np.float32(0.05)), const("zx", np.int8(-7)), const("zy", np.uint8(121))],
                      opset=13)


@pytest.mark.parametrize("int_io", [False, True])
def test_integer_edges_are_reported_and_uint8_outputs_made_signed(tmp_path, int_io):
    model = _int8_in_uint8_out()
    graph = load(model, tmp_path, int_io)
    io = describe_io(graph)
    assert io["inputs"] == [{"name": "x", "dtype": "int8", "scale": float(np.float32(0.05)), "zero_point": -7,
                             "source_dtype": "int8", "unsigned": False}]
    assert io["outputs"] == [{"name": "y", "dtype": "int8", "scale": float(np.float32(0.05)),
                              "zero_point": -7 if int_io else 121, "source_dtype": "uint8", "unsigned": not int_io}]
    x = np.random.default_rng(3).integers(-128, 128, (2, 64)).astype(np.int8)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = run_graph(graph, {"x": x})[0]
    np.testing.assert_array_equal(got, signed(want) if int_io else want.view(np.int8))
