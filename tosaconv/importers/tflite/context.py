"""The TFLite import context: the ONNX importer's context, keyed by tensor.

TFLite names tensors but does not require the names to be unique, so each
tensor gets a *key*: its name, or ``<name>#<index>`` when another tensor
already has that name. Everything else is the ONNX importer's
:class:`~tosaconv.importers.onnx.context.ImportContext`: constant buffers are
import-time constants (CONST ops only when used as tensors), shape-carrying
int tensors are ShapeTensors of Index values, and int64 narrows to int32.
The reader's :class:`TensorInfo` (with quantization parameters) stays
available per key for the converters.
"""
from __future__ import annotations

from ...ir.graph import Graph
from ..onnx.context import ImportContext, ShapeTensor  # noqa: F401  (re-exported for converters)
from .reader import TfliteModel


def tensor_keys(model: TfliteModel) -> list:
    keys, seen = [], set()
    for t in model.tensors:
        key = t.name if t.name not in seen else f"{t.name}#{t.index}"
        seen.add(key)
        keys.append(key)
    return keys


class TfliteContext(ImportContext):
    def __init__(self, graph: Graph, model: TfliteModel):
        super().__init__(graph, opset=0, initializers={})
        self.model = model
        self.keys = tensor_keys(model)
        self.infos = {k: t for k, t in zip(self.keys, model.tensors)}
        for key, t in self.infos.items():
            if t.data is not None:
                self.set_const(key, t.data)

    def info(self, key: str):
        return self.infos[key]
