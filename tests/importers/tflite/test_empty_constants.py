"""Zero-element tensors that no op computes are empty constants (the flatbuffer stores no bytes for them).

TensorFlow's converter writes RESHAPE's target shape for a scalar result as
an int32 tensor of shape [0] whose buffer has no data (openWakeWord's
hey_jarvis model, converted through onnx-tf, reshapes its IF condition that
way). LiteRT reads it as the empty shape; so must tosaconv. Each model is
compared with LiteRT's reference kernels and, emitted, with the official
reference model.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import (ModelBuilder, check_reference_model, check_with_litert, rand,
                                            run_graph, specialize_and_emit)


def _scalar_reshape(buffered: bool) -> bytes:
    """x [1, 1] -> RESHAPE to the empty shape -> y [] -> MUL by 3 -> z []."""
    m = ModelBuilder()
    x = m.input("x", [1, 1])
    shape = m.const("shape", np.zeros((0,), np.int32)) if buffered else m.tensor("shape", [0], "INT32")
    y, z = m.tensor("y", []), m.tensor("z", [])
    m.op("RESHAPE", [x, shape], [y])
    m.op("MUL", [y, m.const("three", np.float32(3.0))], [z], "MulOptions")
    m.output(z)
    return m.finish()


@pytest.mark.parametrize("buffered", [True, False], ids=["empty-buffer", "no-buffer"])
def test_reshape_to_scalar_through_an_empty_shape_tensor(buffered, tmp_path):
    data = _scalar_reshape(buffered)
    feeds = {"x": rand(1, 1)}
    graph = check_with_litert(data, [feeds])
    static, tosa = specialize_and_emit(graph, {"x": (1, 1)})
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)


def test_concatenation_with_an_empty_float_constant(tmp_path):
    m = ModelBuilder()
    x = m.input("x", [2, 3], signature=[-1, 3])
    empty = m.const("nothing", np.zeros((0, 3), np.float32))
    y = m.tensor("y", [2, 3], signature=[-1, 3])
    m.op("CONCATENATION", [empty, x], [y], "ConcatenationOptions", Axis=0)
    m.output(y)
    graph = check_with_litert(m.finish(), [{"x": rand(2, 3)}, {"x": rand(5, 3)}])
    static, tosa = specialize_and_emit(graph, {"x": (5, 3)})
    feeds = {"x": rand(5, 3)}
    check_reference_model(tosa, static, feeds, run_graph(static, feeds), tmp_path)


def test_a_computed_zero_element_tensor_is_not_a_constant():
    """Only tensors nothing computes are filled: an op's zero-element output keeps no data."""
    from tosaconv.importers.tflite.reader import read_model
    m = ModelBuilder()
    x = m.input("x", [0, 3])
    y = m.tensor("y", [0, 3])
    m.op("RELU", [x], [y])
    m.output(y)
    model = read_model(m.finish())
    assert model.tensors[x].data is None and model.tensors[y].data is None
