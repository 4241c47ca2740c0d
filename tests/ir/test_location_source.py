"""A Location always says what its op type and name come from: there is no default source (it used to be
"onnx", so a TFLite model's constraint violation, or a location read from a .tosa file, claimed to be ONNX)."""
from __future__ import annotations

import pytest

from tosaconv.diagnostics import ShapeError
from tosaconv.ir.graph import Graph
from tosaconv.ir.location import Location
from tosaconv.passes.rebuild import check_ledger
from tosaconv.symbolic.constraints import Kind, Provenance
from tosaconv.symbolic.scope import ExtentKind, SymbolInfo


def test_a_location_needs_its_source():
    with pytest.raises(TypeError):
        Location("Add", "add0")      # the point of the test: no default source
    assert Location("ADD", "add0", "tflite").source == "tflite"


def test_a_violated_constraint_is_located_where_the_ledger_recorded_it():
    g = Graph(source="m.tflite")
    a = g.scope.declare(SymbolInfo("a", "input 'x' axis 0", ExtentKind.EXACT))
    b = g.scope.declare(SymbolInfo("b", "input 'y' axis 0", ExtentKind.EXACT))
    g.ledger.require(Kind.EQ, a, b, Provenance("BATCH_MATMUL", "mm", "inner dims agree"), g.scope)
    with pytest.raises(ShapeError) as e:
        check_ledger(g, {"a": 2, "b": 3})
    where = e.value.diagnostics[0].location
    assert (where.op_type, where.name, where.source) == ("BATCH_MATMUL", "mm", "ledger")
    assert str(where) == "BATCH_MATMUL 'mm'"
