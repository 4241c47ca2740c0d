"""The ONNX import context: the shared lowering context plus the model's opset and initializers.

Everything format-neutral (values by name, import-time constants,
ShapeTensors of Index values, int64 narrowing, the ledger) is
:class:`~tosaconv.lowering.context.LoweringContext`. ONNX adds the model
opset the converters resolve against and its initializers, read into numpy
only when a converter asks for one.
"""
from __future__ import annotations

import numpy as np
from onnx import numpy_helper

from ...ir.graph import Graph
from ...lowering.context import LoweringContext, ShapeTensor  # noqa: F401  (re-exported for converters)


class ImportContext(LoweringContext):
    def __init__(self, graph: Graph, opset: int, initializers: dict):
        super().__init__(graph)
        self.opset = opset
        self.initializers = initializers      # name -> TensorProto

    def _has_initializer(self, name: str) -> bool:
        return name in self.initializers

    def _initializer(self, name: str) -> np.ndarray:
        return numpy_helper.to_array(self.initializers[name])
