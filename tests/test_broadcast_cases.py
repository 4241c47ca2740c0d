"""Every broadcast case of seed 002, at several bindings (including dims bound to 1).

Each case is a shipped sample model (``sample_models/broadcast``). For each
set of input shapes: bindings are solved from the shapes, the program is
specialized, our numpy run matches onnxruntime, and the official reference
model running the emitted ``.tosa`` matches our run. Bindings that break a
recorded broadcast constraint, and the static mismatch ``<2x3>+<4x3>``, are
clear shape errors.
"""
from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import tosaconv.api as api
from tosaconv.diagnostics import ShapeError
from tests.tosa_tools import run_reference_model

HERE = os.path.join(os.path.dirname(__file__), "..", "sample_models", "broadcast")

# case -> list of input shape tuples (one per model input, in input order)
SHAPES = {
    "dyn_dyn": [((2, 3), (2, 3)), ((1, 3), (4, 3)), ((2, 1), (2, 5)), ((1, 1), (3, 4))],
    "one_dyn": [((1, 3), (2, 3)), ((1, 1), (4, 5)), ((1, 6), (1, 6))],
    "two_dyn": [((2, 3), (1, 3)), ((2, 1), (2, 4)), ((2, 5), (2, 1))],
    "dyn2_2dyn": [((1, 2), (2, 1)), ((2, 2), (2, 2)), ((1, 2), (2, 2))],
    "static2x2_dyn": [((2, 2), (1, 1)), ((2, 2), (2, 2)), ((2, 2), (1, 2))],
    "static_1x5_3x5": [((1, 5), (3, 5))],
    "five_dyn": [((5,), (1,)), ((5,), (5,))],
    "dyn_dyn_1d": [((1,), (4,)), ((4,), (4,)), ((4,), (1,))],
    "rank_3x4_2x3x4": [((3, 4), (2, 3, 4))],
    "scalar_0d": [((), ())],
    "select_2xdyn": [((2, 3), (2, 3), (2, 3)), ((2, 1), (2, 3), (2, 1)), ((2, 3), (2, 1), (2, 1))],
}

CASES = [(name, shapes) for name, runs in SHAPES.items() for shapes in runs]


def _inputs(graph, shapes, seed=3):
    rng = np.random.default_rng(seed)
    out = {}
    for v, shape in zip(graph.inputs, shapes):
        if v.type.dtype.name == "BOOL":
            out[v.name] = rng.integers(0, 2, shape).astype(bool)
        else:
            out[v.name] = rng.standard_normal(shape).astype(np.float32)
    return out


@pytest.mark.parametrize("name,shapes", CASES, ids=lambda v: str(v))
def test_broadcast_case(name, shapes, tmp_path):
    path = os.path.join(HERE, f"{name}.onnx")
    graph = api.load(path)
    inputs = _inputs(graph, shapes)
    bindings = api.solve_bindings(graph, {k: v.shape for k, v in inputs.items()})
    static = api.specialize(graph, bindings)
    ours = api.run(static, inputs)
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    expected = sess.run(None, inputs)[0]
    np.testing.assert_allclose(ours["y"], expected, rtol=1e-6, atol=0)
    ref = run_reference_model(api.emit(static), inputs, ["y"], str(tmp_path))
    np.testing.assert_allclose(ref["y"], ours["y"], rtol=1e-6, atol=0)


def test_dynamic_broadcast_records_ledger_entries():
    graph = api.load(os.path.join(HERE, "dyn_dyn.onnx"))
    texts = [c["constraint"] for c in api.describe(graph)["constraints"]]
    assert texts == ["broadcastable(a0, b0)", "broadcastable(a1, b1)"]


@pytest.mark.parametrize("bindings", [{"a0": 2, "a1": 3, "b0": 3, "b1": 3}, {"a0": 2, "a1": 4, "b0": 2, "b1": 3}])
def test_binding_that_breaks_broadcast_is_a_shape_error(bindings):
    graph = api.load(os.path.join(HERE, "dyn_dyn.onnx"))
    with pytest.raises(ShapeError) as info:
        api.specialize(graph, bindings)
    d = info.value.diagnostics[0]
    assert d.code == "E-CONSTRAINT" and "broadcastable" in d.message and "Add 'add'" in d.notes[0]


def test_static_mismatch_2x3_plus_4x3_is_a_shape_error(tmp_path):
    inputs = [h.make_tensor_value_info("a", T.FLOAT, [2, 3]), h.make_tensor_value_info("b", T.FLOAT, [4, 3])]
    y = h.make_tensor_value_info("y", T.FLOAT, [None, None])
    g = h.make_graph([h.make_node("Add", ["a", "b"], ["y"], name="bad_add")], "g", inputs, [y])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 10
    path = str(tmp_path / "bad.onnx")
    onnx.save(model, path)
    with pytest.raises(ShapeError) as info:
        api.load(path)
    message = info.value.diagnostics[0].message
    assert "Add 'bad_add'" in message and "<2x3> and <4x3>" in message


def test_2x_dyn_result_dim_is_static():
    graph = api.load(os.path.join(HERE, "two_dyn.onnx"))
    assert graph.outputs[0].type.shape[0] == 2
