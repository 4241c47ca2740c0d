"""An ONNX-node view of a TFLite op, so ONNX converters can be reused as they are.

``OnnxView(node, axis=1)`` answers ``attr("axis")`` with 1 and passes the TFLite
operands, outputs and location through; ONNX converters that read only
``inputs``, ``input(i)``, ``attr`` and ``version`` then convert the TFLite op
with the same TOSA construction. ``version`` is a large opset, so converters
take their newest (input-operand) form.
"""
from __future__ import annotations

from ..reader import ConvertError

_MISSING = object()


class OnnxView:
    version = 10 ** 6

    def __init__(self, node, inputs=None, **attrs):
        self.tflite = node
        self.op_type = node.op_type
        self.inputs = list(node.inputs if inputs is None else inputs)
        self.outputs = list(node.outputs)
        self._attrs = attrs

    @property
    def name(self) -> str:
        return self.tflite.name

    @property
    def location(self):
        return self.tflite.location

    def attr(self, name: str, default=_MISSING):
        if name in self._attrs:
            return self._attrs[name]
        if default is not _MISSING:
            return default
        raise ConvertError(f"{self.op_type} has no '{name}' setting")

    def has(self, name: str) -> bool:
        return name in self._attrs

    def input(self, i: int):
        return self.inputs[i] if i < len(self.inputs) else None
