"""The committed sample models: they match the generator, convert, and agree with LiteRT.

The dynamic models are fed at two sizes each (symbolic run and the specialized,
emitted and read-back .tosa). The shape-chain model must decay to a static
RESHAPE once the batch is bound, and MEAN over a dynamic H x W divides by the
bound size.
"""
from __future__ import annotations

import importlib.util
import os

import pytest

from tosaconv import api
from tosaconv.ir.ops import Trait
from tests.importers.onnx.harness import specialize_and_emit
from tests.importers.tflite.harness import check_with_litert, rand

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "sample_models", "tflite")


def _generator():
    spec = importlib.util.spec_from_file_location("tflite_generate", os.path.join(HERE, "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _generator()


@pytest.mark.parametrize("name", sorted(GEN.MODELS))
def test_committed_file_matches_generator(name):
    with open(os.path.join(HERE, name), "rb") as f:
        assert f.read() == GEN.MODELS[name](), f"{name} is stale: run sample_models/tflite/generate.py"


def test_small_cnn_matches_litert():
    check_with_litert(GEN.small_cnn(batch=1), [{"image": rand(1, 16, 16, 3)}])


def test_dynamic_batch_cnn_matches_litert_at_two_batches():
    graph = check_with_litert(GEN.small_cnn(), [{"image": rand(2, 16, 16, 3)}, {"image": rand(5, 16, 16, 3, seed=3)}])
    assert "image.0" in graph.scope.symbols


def test_dynamic_hw_mean_divides_by_bound_size():
    data = GEN.dynamic_hw()
    check_with_litert(data, [{"image": rand(1, 8, 8, 3)}, {"image": rand(1, 5, 11, 3, seed=2)}])


def test_shape_chain_becomes_helper_ops_and_decays():
    data = GEN.shape_reshape()
    graph = check_with_litert(data, [{"x": rand(2, 4, 6)}, {"x": rand(7, 4, 6, seed=1)}])
    helpers = [op for op in graph.ops if op.op.has(Trait.SHAPE_HELPER)]
    assert helpers, "the SHAPE chain should become Index helper ops"
    static, _ = specialize_and_emit(graph, {"x": (3, 4, 6)})
    assert not [op for op in static.ops if op.op.has(Trait.SHAPE_HELPER) or op.op.has(Trait.DATA_DEPENDENT)]
    reshapes = [op for op in static.ops if op.op.name == "RESHAPE"]
    assert reshapes and reshapes[0].attrs.new_shape == (3, 24)


def test_committed_dynamic_model_loads_from_disk():
    graph = api.load(os.path.join(HERE, "dynamic_batch.tflite"))
    assert [v.name for v in graph.inputs] == ["image"]
    assert graph.outputs[0].type.shape[1] == 10
