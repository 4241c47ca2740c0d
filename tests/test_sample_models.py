"""Whole-model tests on the shipped sample models, at several bindings each.

For every sample model and binding: our numpy run of the static program
matches onnxruntime on the original model (rtol 1e-4, atol 1e-5), and the
emitted ``.tosa`` run by the official TOSA reference model matches our numpy
run (float within 1e-5 relative). The `.tosair` text form round-trips.
"""
from __future__ import annotations

import os

import numpy as np
import onnxruntime as ort
import pytest

import tosaconv.api as api
from tests.tosa_tools import run_reference_model

ROOT = os.path.join(os.path.dirname(__file__), "..", "sample_models")

CASES = [
    ("tiny_transformer.onnx", {"batch": 1, "seq": 1}),
    ("tiny_transformer.onnx", {"batch": 2, "seq": 16}),
    ("tiny_transformer.onnx", {"batch": 3, "seq": 7}),
    ("small_cnn.onnx", {"N": 1, "H": 8, "W": 8}),
    ("small_cnn.onnx", {"N": 2, "H": 17, "W": 23}),
    ("small_cnn.onnx", {"N": 1, "H": 32, "W": 12}),
]


def _onnxruntime(path, inputs):
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, inputs)))


@pytest.mark.parametrize("model,bindings", CASES, ids=lambda v: str(v))
def test_sample_model_matches_onnxruntime_and_reference(model, bindings, tmp_path):
    path = os.path.join(ROOT, model)
    graph = api.load(path)
    static = api.specialize(graph, bindings)
    inputs = api.random_inputs(graph, bindings, seed=7)
    ours = api.run(static, inputs)
    expected = _onnxruntime(path, inputs)
    for name, value in expected.items():
        np.testing.assert_allclose(ours[name], value, rtol=1e-4, atol=1e-5, err_msg=name)
    ref = run_reference_model(api.emit(static), inputs, list(ours), str(tmp_path))
    for name, value in ours.items():
        np.testing.assert_allclose(ref[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("model", ["tiny_transformer.onnx", "small_cnn.onnx"])
def test_symbolic_program_has_no_reshape_inference_and_decays(model):
    graph = api.load(os.path.join(ROOT, model))
    for op in graph.ops:
        if op.op.name == "RESHAPE":
            assert list(op.attrs.new_shape).count(-1) == len(op.operands) - 1
    bindings = {s: 2 for s in api.describe(graph)["needed_symbols"]}
    static = api.specialize(graph, bindings)
    names = {op.op.name for op in static.ops}
    assert not names & {"GET_DIM", "INDEX_CONST", "DIMS_TO_TENSOR", "EXPAND_DIMS", "COLLAPSE_DIMS",
                        "DYN_SLICE", "DYN_TILE", "IOTA", "EXTRACT_DIM", "INDEX_MUL", "INDEX_FLOORDIV"}
    assert all(isinstance(d, int) for op in static.ops for r in op.results for d in r.type.shape)


def test_symbolic_program_runs_directly_at_two_shapes():
    path = os.path.join(ROOT, "tiny_transformer.onnx")
    graph = api.load(path)
    for shape in ((1, 3, 32), (2, 9, 32)):
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        ours = api.run(graph, {"x": x})
        np.testing.assert_allclose(ours["y"], _onnxruntime(path, {"x": x})["y"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("model", ["tiny_transformer.onnx", "small_cnn.onnx"])
def test_tosair_round_trips(model):
    from tosaconv.ir.parser import parse_graph
    text = api.print_ir(api.load(os.path.join(ROOT, model)))
    assert api.print_ir(parse_graph(text)) == text


def test_no_transpose_pair_that_cancels_remains():
    static = api.specialize(api.load(os.path.join(ROOT, "small_cnn.onnx")), {"N": 1, "H": 8, "W": 8})
    for op in static.ops:
        if op.op.name == "TRANSPOSE":
            producer = op.operands[0].producer
            assert producer is None or producer.op.name != "TRANSPOSE"
    transposes = [op for op in static.ops if op.op.name == "TRANSPOSE"]
    assert len(transposes) <= 2, [str(op) for op in transposes]
