"""Unit tests of tosaconv.bindings: parsing, the bindings-file rules, sources and conflicts."""
from __future__ import annotations

import json

import jsonschema
import pytest

from tosaconv.bindings import (Binding, BindingSet, BindingSources, collect, load_bindings_file, parse_bind,
                               parse_input_shape, validate_bindings_doc)
from tosaconv.diagnostics import EXIT_SHAPE, EXIT_USAGE, ShapeError, UsageError
from tosaconv.ir.dtypes import DType
from tosaconv.ir.graph import Graph
from tosaconv.ir.types import TensorType
from tosaconv.symbolic.scope import SymbolInfo

from .conftest import SCHEMAS


def test_parse_bind():
    assert parse_bind("batch=2") == Binding("batch", 2, "--bind batch=2")
    assert parse_bind("input_ids.1=16").name == "input_ids.1"


@pytest.mark.parametrize("text", ["batch", "=2", "batch=", "batch=two", "batch=2.5", "batch=0", "batch=-1"])
def test_malformed_bind_is_a_usage_error(text):
    with pytest.raises(UsageError) as info:
        parse_bind(text)
    assert info.value.exit_code == EXIT_USAGE
    assert text in info.value.summary() or "positive" in info.value.summary()


def test_parse_input_shape():
    assert parse_input_shape("x=2,16") == ("x", (2, 16))
    assert parse_input_shape("input:0 = 1, 3") == ("input:0", (1, 3))
    assert parse_input_shape("scalar=") == ("scalar", ())
    with pytest.raises(UsageError):
        parse_input_shape("x=2,,3")
    with pytest.raises(UsageError):
        parse_input_shape("2,16")


BINDINGS_DOCS = [
    ({"batch": 2, "seq": 16}, True), ({}, True), ({"batch": 2**31 - 1}, True), ({"batch": 2**31}, False),
    ({"batch": 0}, False), ({"batch": -3}, False), ({"batch": 2.5}, False), ({"batch": "2"}, False),
    ({"batch": True}, False), ({"batch": None}, False), ({"": 2}, False), ([2, 16], False), ("batch=2", False),
]


def test_a_float_is_refused_although_the_schema_integer_type_admits_it():
    # JSON Schema counts 2.0 as an integer; a bindings file is read as written, so 2.0 is refused
    with pytest.raises(UsageError, match="is 2.0, not a positive integer"):
        validate_bindings_doc({"batch": 2.0}, "b.json")


@pytest.mark.parametrize("doc, valid", BINDINGS_DOCS)
def test_bindings_file_rules_match_the_schema(doc, valid):
    schema = json.loads((SCHEMAS / "bindings.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert jsonschema.Draft202012Validator(schema).is_valid(doc) is valid
    if valid:
        assert validate_bindings_doc(doc, "b.json") == {k: int(v) for k, v in doc.items()}
    else:
        with pytest.raises(UsageError):
            validate_bindings_doc(doc, "b.json")


def test_bindings_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "b.json"
    bad.write_text("{batch: 2}")
    with pytest.raises(UsageError, match="b.json.*not valid JSON"):
        load_bindings_file(str(bad))
    bad.write_text('{"batch": 0}')
    with pytest.raises(UsageError, match="'batch' is 0, not a positive integer"):
        load_bindings_file(str(bad))
    with pytest.raises(UsageError, match="cannot read bindings file"):
        load_bindings_file(str(tmp_path / "missing.json"))


def test_conflict_names_both_sources_and_values():
    s = BindingSet()
    s.add(Binding("batch", 2, "--bind batch=2"))
    s.add(Binding("batch", 2, "b.json"))          # agreeing sources are fine
    with pytest.raises(ShapeError) as info:
        s.add(Binding("batch", 3, "inputs.npz array 'x'"))
    assert info.value.exit_code == EXIT_SHAPE
    message = info.value.summary()
    assert "--bind batch=2" in message and "inputs.npz array 'x'" in message
    assert "2" in message and "3" in message
    assert s.values() == {"batch": 2}


def _graph():
    g = Graph()
    batch = g.scope.declare(SymbolInfo("batch", "input 'x' axis 0", input_name="x", axis=0))
    g.add_input("x", TensorType(DType.FP32, (batch, 4)))
    return g


def _solve(graph, shapes):
    return {"batch": shapes["x"][0]}


def test_collect_keeps_every_source(tmp_path):
    path = tmp_path / "b.json"
    path.write_text('{"batch": 2}')
    sources = BindingSources(binds=("batch=2",), files=(str(path),), input_shapes=("x=2,4",))
    got = collect(_graph(), sources, _solve)
    assert [(b.name, b.value, b.source) for b in got] == [("batch", 2, "--bind batch=2")]


def test_collect_conflict_between_bind_and_input_shape():
    sources = BindingSources(binds=("batch=2",), input_shapes=("x=3,4",))
    with pytest.raises(ShapeError, match=r"--bind batch=2.*--input-shape x=3,4"):
        collect(_graph(), sources, _solve)


def test_collect_unknown_symbol_lists_the_symbols():
    with pytest.raises(UsageError) as info:
        collect(_graph(), BindingSources(binds=("bacth=2",)), _solve)
    d = info.value.diagnostics[0]
    assert "'bacth' is not a symbol" in d.message
    assert "batch" in " ".join(d.notes) and "did you mean 'batch'" in d.hint


def test_collect_unknown_input():
    with pytest.raises(UsageError, match="'y' is not an input"):
        collect(_graph(), BindingSources(input_shapes=("y=2,4",)), _solve)


def test_collect_solve_errors_say_which_source():
    def failing(graph, shapes):
        raise ShapeError.one("E-INPUT-SHAPE", "input 'x' axis 1 must have size 4, but the given array has 5")
    with pytest.raises(ShapeError) as info:
        collect(_graph(), BindingSources(input_shapes=("x=2,5",)), failing)
    assert "while solving symbols from --input-shape x=2,5" in info.value.diagnostics[0].notes
