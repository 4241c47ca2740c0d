"""Typed access to an ONNX node's attributes, with the schema's defaults.

``NodeReader.attr("alpha")`` returns the node's value or, when the node does
not set it, the default from the op's ONNX schema (or, for another domain's
op, from the schema declared in :mod:`.registry`), so defaults live in one
place and never get repeated at converter call sites. Strings come
back as ``str``, tensors as numpy arrays, lists as tuples.
"""
from __future__ import annotations

from typing import Any, Optional

import onnx
from onnx import numpy_helper

from ...ir.location import Location
from ...lowering.errors import ConvertError  # noqa: F401  (re-exported: the one error type of every converter)
from .registry import schema

_MISSING = object()
_GRAPH_TYPES = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


class NodeReader:
    def __init__(self, node: onnx.NodeProto, opset: int, domain: str = ""):
        """``opset`` is the model's version of ``domain``, the op set the node belongs to."""
        self.node = node
        self.op_type = node.op_type
        self.domain = domain
        self.opset = opset
        self.inputs = list(node.input)
        self.outputs = list(node.output)
        self._attrs = {a.name: a for a in node.attribute}
        self.schema = schema(self.op_type, opset, domain)

    @property
    def name(self) -> str:
        return self.node.name or (self.outputs[0] if self.outputs else self.op_type)

    @property
    def location(self) -> Location:
        return Location(self.op_type, self.name, "onnx")

    @property
    def version(self) -> int:
        return self.schema.since_version if self.schema else 0

    def holds_graphs(self) -> bool:
        """Whether an attribute holds a subgraph (If's branches, a Loop or Scan body)."""
        return any(a.type in _GRAPH_TYPES for a in self._attrs.values())

    def has(self, name: str) -> bool:
        return name in self._attrs

    def attr(self, name: str, default: Any = _MISSING) -> Any:
        if name in self._attrs:
            return _value(self._attrs[name])
        if default is not _MISSING:
            return default
        schema_default = self._schema_default(name)
        if schema_default is _MISSING:
            raise ConvertError(f"required attribute '{name}' is missing")
        return schema_default

    def _schema_default(self, name: str) -> Any:
        if self.schema is None or name not in self.schema.attributes:
            return _MISSING
        proto = self.schema.attributes[name].default_value
        if proto is None or proto.type == onnx.AttributeProto.UNDEFINED:
            return None if not self.schema.attributes[name].required else _MISSING
        return _value(proto)

    def input(self, i: int) -> Optional[str]:
        """Name of input ``i``, or None when absent or given as the empty name."""
        return self.inputs[i] if i < len(self.inputs) and self.inputs[i] else None


def _value(a: onnx.AttributeProto) -> Any:
    v = onnx.helper.get_attribute_value(a)
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v)
    if isinstance(v, list):
        return tuple(x.decode("utf-8", errors="replace") if isinstance(x, bytes) else x for x in v)
    return v
