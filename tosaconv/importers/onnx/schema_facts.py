"""What the ONNX importer reads of onnx's op schemas, without waking onnx's schema registry.

The first schema lookup of a process makes onnx build its whole registry (every op of
every domain and version: about 18 ms, as long as reading a mid-size model). The importer
needs little of it: an op's version at the model's opset, its attributes (type, required,
default), its input and output counts and the element types each input admits.
``onnx_schemas.json`` (written by ``scripts/gen_onnx_schemas.py`` from ``onnx.defs``) holds
exactly these facts for every op of the default domain, for one onnx version (and for other
versions, the ops whose facts differ there); each op's entry is parsed only when a model uses the op. With another onnx version installed, or an
op the table lacks, :func:`lookup` asks ``onnx.defs`` and derives the same facts from it
(:func:`facts_of`), so the answers never depend on the table being current.
``tests/importers/onnx/test_schema_facts.py`` checks the table against ``onnx.defs``.
"""
from __future__ import annotations

import functools
import json
import os
from ...records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Any, Mapping, Optional

import onnx

TABLE = os.path.join(os.path.dirname(__file__), "onnx_schemas.json")


@dataclass(frozen=True)
class FactAttribute:
    """An attribute's declared type (an ``AttributeProto.AttributeType``), whether it is required, and its
    default (an ``AttributeProto`` of type UNDEFINED when there is none), as ``onnx.defs`` gives them."""

    type: int
    required: bool
    default_value: onnx.AttributeProto


@dataclass(frozen=True)
class FactInput:
    """A formal input: its name, whether it is a single (not optional, not variadic) input, and the
    element types it admits (``tensor(float)``...: its type constraint's list, or its own type string)."""

    name: str
    single: bool
    allowed: frozenset[str]


@dataclass(frozen=True)
class SchemaFacts:
    """The part of one version of an ONNX op's schema that the importer reads."""

    name: str
    since_version: int
    attributes: Mapping[str, FactAttribute]
    max_input: int
    min_output: int
    inputs: tuple[FactInput, ...]


def lookup(op_type: str, opset: int) -> Optional[SchemaFacts]:
    """The facts of default-domain ``op_type`` in effect at ``opset`` (the newest version at or below it, as
    ``onnx.defs.get_schema`` chooses), or None when the op does not exist at that opset."""
    entry = _entries().get(op_type)
    if entry is None:
        return _from_defs(op_type, opset)
    chosen = [since for since in _versions(op_type, entry) if since <= opset]
    return _decoded(op_type, chosen[-1]) if chosen else None


def facts_of(schema: onnx.defs.OpSchema) -> SchemaFacts:
    """The facts of an ``onnx.defs`` schema."""
    allowed = {c.type_param_str: frozenset(c.allowed_type_strs) for c in schema.type_constraints}
    single = onnx.defs.OpSchema.FormalParameterOption.Single
    return SchemaFacts(
        schema.name, schema.since_version,
        {name: FactAttribute(a.type.value, a.required, a.default_value) for name, a in schema.attributes.items()},
        schema.max_input, schema.min_output,
        tuple(FactInput(f.name, f.option == single, allowed.get(f.type_str, frozenset((f.type_str,))))
              for f in schema.inputs))


def encode(facts: SchemaFacts) -> list:
    """The JSON form of ``facts`` (the generator's; :func:`_decode` reads it back)."""
    return [facts.since_version, facts.max_input, facts.min_output,
            {name: [a.type, a.required, a.default_value.SerializeToString().hex()]
             for name, a in facts.attributes.items()},
            [[f.name, f.single, sorted(f.allowed)] for f in facts.inputs]]


@functools.lru_cache(maxsize=None)
def _from_defs(op_type: str, opset: int) -> Optional[SchemaFacts]:
    try:
        return facts_of(onnx.defs.get_schema(op_type, opset, ""))
    except onnx.defs.SchemaError:
        return None


@functools.lru_cache(maxsize=1)
def _entries() -> dict[str, str]:
    """Each op's entry (JSON text, parsed when used) for the installed onnx: the table's own version, or one
    whose differences it holds (``other``: by version, each op whose entry differs, None for an op that
    version lacks); empty when the table is missing or knows neither."""
    try:
        with open(TABLE, encoding="utf-8") as f:
            table = json.load(f)
    except (OSError, ValueError):
        return {}
    if table.get("onnx") == onnx.__version__:
        return table["ops"]
    changed = table.get("other", {}).get(onnx.__version__)
    if changed is None:
        return {}
    merged = {**table["ops"], **changed}
    return {name: entry for name, entry in merged.items() if entry is not None}


@functools.lru_cache(maxsize=None)
def _versions(op_type: str, entry: str) -> dict[int, list[Any]]:
    """An op's versions by ``since_version``, oldest first, still encoded."""
    return {item[0]: item for item in json.loads(entry)}


@functools.lru_cache(maxsize=None)
def _decoded(op_type: str, since: int) -> SchemaFacts:
    return _decode(op_type, _versions(op_type, _entries()[op_type])[since])


def _decode(op_type: str, item: list[Any]) -> SchemaFacts:
    since, max_input, min_output, attributes, inputs = item
    return SchemaFacts(
        op_type, since,
        {name: FactAttribute(kind, required, onnx.AttributeProto.FromString(bytes.fromhex(default)))
         for name, (kind, required, default) in attributes.items()},
        max_input, min_output,
        tuple(FactInput(name, single, frozenset(allowed)) for name, single, allowed in inputs))
