"""The schema facts table (tosaconv.importers.onnx.schema_facts) against onnx.defs itself.

The importer reads op versions, attributes, input counts and input types from
``onnx_schemas.json`` so that a conversion never builds onnx's schema registry;
these tests ask ``onnx.defs`` the same questions and compare every answer, and
check that the table is the one the generator writes for the installed onnx.
"""
from __future__ import annotations

import json

import onnx
import pytest
from onnx import defs

from tosaconv.importers.onnx import schema_facts
from tosaconv.importers.onnx.schema_facts import facts_of, lookup


def _default_domain_ops() -> list[str]:
    return sorted({s.name for s in defs.get_all_schemas_with_history() if s.domain == ""})


def _truth(op_type: str, opset: int):
    try:
        return facts_of(defs.get_schema(op_type, opset, ""))
    except defs.SchemaError:
        return None


def _attrs(facts) -> dict:
    return {n: (x.type, x.required, x.default_value.SerializeToString()) for n, x in facts.attributes.items()}


def _same(a, b) -> bool:
    """Equal facts (AttributeProto defaults compared by their serialized bytes)."""
    if a is None or b is None:
        return a is b
    return (a.name, a.since_version, a.max_input, a.min_output, a.inputs, _attrs(a)) == \
        (b.name, b.since_version, b.max_input, b.min_output, b.inputs, _attrs(b))


def test_the_table_is_made_from_the_installed_onnx():
    with open(schema_facts.TABLE, encoding="utf-8") as f:
        table = json.load(f)
    assert table["onnx"] == onnx.__version__, "run scripts/gen_onnx_schemas.py after upgrading onnx"
    assert sorted(table["ops"]) == _default_domain_ops()


@pytest.mark.parametrize("op_type", _default_domain_ops())
def test_every_op_at_every_opset_matches_onnx_defs(op_type):
    newest = defs.onnx_opset_version()
    for opset in range(1, newest + 2):
        assert _same(lookup(op_type, opset), _truth(op_type, opset)), (op_type, opset)


def test_an_op_the_table_lacks_is_asked_of_onnx_defs(monkeypatch):
    monkeypatch.setattr(schema_facts, "_entries", lambda: {})
    assert _same(lookup("Conv", 13), _truth("Conv", 13))
    assert lookup("Conv", 0) is None and lookup("NoSuchOp", 13) is None


def test_a_table_of_another_onnx_version_is_not_used(monkeypatch, tmp_path):
    other = tmp_path / "onnx_schemas.json"
    other.write_text(json.dumps({"onnx": "0.0.0", "ops": {"Conv": "[[1,9,9,{},[]]]"}}), encoding="utf-8")
    monkeypatch.setattr(schema_facts, "TABLE", str(other))
    schema_facts._entries.cache_clear()
    try:
        assert schema_facts._entries() == {}
        assert _same(lookup("Conv", 13), _truth("Conv", 13))
    finally:
        schema_facts._entries.cache_clear()


def test_a_table_holding_another_versions_differences_gives_that_versions_ops(monkeypatch, tmp_path):
    """With the installed onnx among the table's ``other`` versions, its ops are the table's own with those
    differences: an entry replaced, an op added, an op that version lacks (None) gone; the facts of a
    changed op are the other version's."""
    other = tmp_path / "onnx_schemas.json"
    table = {"onnx": "0.0.0", "ops": {"Abs": "[[1,1,1,{},[]]]", "Conv": "[[1,9,9,{},[]]]", "Old": "[[1,1,1,{},[]]]"},
             "other": {"9.9.9": {"Conv": "[[1,3,1,{},[]]]", "New": "[[2,1,1,{},[]]]", "Old": None}}}
    other.write_text(json.dumps(table), encoding="utf-8")
    monkeypatch.setattr(schema_facts, "TABLE", str(other))
    monkeypatch.setattr(schema_facts.onnx, "__version__", "9.9.9")
    for cache in (schema_facts._entries, schema_facts._versions, schema_facts._decoded):
        cache.cache_clear()
    try:
        assert schema_facts._entries() == {"Abs": "[[1,1,1,{},[]]]", "Conv": "[[1,3,1,{},[]]]", "New": "[[2,1,1,{},[]]]"}
        conv = lookup("Conv", 13)
        assert conv is not None and (conv.since_version, conv.max_input, conv.min_output) == (1, 3, 1)
    finally:
        for cache in (schema_facts._entries, schema_facts._versions, schema_facts._decoded):
            cache.cache_clear()
