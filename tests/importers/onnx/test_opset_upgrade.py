"""Models older than opset 11 are upgraded with onnx.version_converter first.

An opset-9 model (Upsample-free: Add, Relu, Reshape with a shape input,
Unsqueeze with axes as an attribute) converts and matches onnxruntime, and a
model whose upgrade fails gives a clear conversion error naming the opset.
"""
from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import tosaconv.api as api
from tosaconv.diagnostics import ConversionError


def _opset9_model(path):
    nodes = [h.make_node("Add", ["x", "b"], ["s"], name="add"),
             h.make_node("Relu", ["s"], ["r"], name="relu"),
             h.make_node("Reshape", ["r", "shape"], ["flat"], name="reshape"),
             h.make_node("Unsqueeze", ["flat"], ["y"], axes=[0], name="unsqueeze")]
    inits = [numpy_helper.from_array(np.linspace(-1, 1, 4).astype(np.float32), "b"),
             numpy_helper.from_array(np.array([-1], np.int64), "shape")]
    g = h.make_graph(nodes, "old", [h.make_tensor_value_info("x", T.FLOAT, ["n", 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, None])], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 9)])
    model.ir_version = 4
    onnx.save(model, path)


@pytest.mark.parametrize("n", [1, 3])
def test_opset9_model_is_upgraded_and_matches_onnxruntime(tmp_path, n):
    path = str(tmp_path / "old.onnx")
    _opset9_model(path)
    graph = api.load(path)
    assert "opset 11" in graph.source
    x = np.random.default_rng(n).standard_normal((n, 4)).astype(np.float32)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    static = api.specialize(graph, {"n": n})
    np.testing.assert_allclose(api.run(static, {"x": x})["y"], want, rtol=1e-6)


def test_failed_upgrade_is_a_clear_error(tmp_path):
    node = h.make_node("NoSuchOp", ["x"], ["y"], name="weird")
    g = h.make_graph([node], "old", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 8)])
    model.ir_version = 4
    path = str(tmp_path / "bad.onnx")
    onnx.save(model, path)
    with pytest.raises(ConversionError) as info:
        api.load(path)
    d = info.value.diagnostics[0]
    assert d.code == "E-OPSET" and "opset 8" in d.message
    assert d.notes == ("ops ONNX does not define at opset 8: NoSuchOp",)
