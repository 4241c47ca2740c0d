"""Tensor names of a specialized program depend only on its ops and their locations.

Converting a source model at bindings and specializing the read-back symbolic ``.tosa`` reach the same
static program by different routes (different helper ops fold away on the way); the names must not tell
them apart. Real models: tests/real_models/test_symbolic_real.py compares the emitted bytes.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import onnx
import pytest
from onnx import helper

from tosaconv import api
from tosaconv.diagnostics import ShapeError
from tosaconv.ir.location import Location
from tosaconv.passes.canonical_names import canonical_names
from tests.importers.onnx.harness import F32, I64, convert, info, make_model


def test_a_read_back_location_gives_values_its_node_name():
    assert Location("CONV2D", "Conv 'c1'", "tosa").value_name == "c1"
    assert Location("ADD", "MatMul 'm' + Add 'a'", "tosa").value_name == "m"
    assert Location("DIM", "symbol seq", "tosa").value_name == "symbol seq"
    assert Location("Conv", "Conv 'c1'", "onnx").value_name == "Conv 'c1'"


def _nonzero_of_relu() -> onnx.ModelProto:
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("NonZero", ["r"], ["nz"], name="nz")]
    return make_model(nodes, [info("x", F32, ["N"])], [info("nz", I64, None)], opset=13)


def test_names_are_unique_and_follow_locations_and_assumptions_follow_their_data():
    graph = convert(_nonzero_of_relu())
    symbol = next(op.attrs.count for op in graph.ops if op.op.name == "NONZERO")
    static = api.specialize(graph, {"N": 6, symbol: 2})
    names = [r.name for op in static.ops for r in op.results]
    assert len(set(names)) == len(names)
    assert all(r.name.split("_")[0] in ("relu", "nz") for op in static.ops for r in op.results)
    produced = set(names) | {v.name for v in static.inputs}
    assert static.assumptions and all(a.data in produced for a in static.assumptions)
    # A route that left other names (as folded helpers do): renamed again, the assumption follows its data.
    data = next(r for op in static.ops for r in op.results if r.name == static.assumptions[0].data)
    data.name = "relu_17"
    static.assumptions = [dataclasses.replace(a, data="relu_17") for a in static.assumptions]
    canonical_names(static)
    assert [r.name for op in static.ops for r in op.results] == names
    assert static.assumptions[0].data == data.name != "relu_17"
    x = np.array([1, 0, 2, 0, 0, 0], np.float32)
    assert api.run(static, {"x": x})["nz"].tolist() == [[0, 2]]   # two non-zeros: the assumption holds
    with pytest.raises(ShapeError) as err:
        api.run(static, {"x": np.array([1, 3, 2, 0, 0, 0], np.float32)})
    assert err.value.diagnostics[0].code == "E-ASSUMPTION"
