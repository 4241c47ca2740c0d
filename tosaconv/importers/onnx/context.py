"""The ONNX import context: the shared lowering context plus the model's opset and initializers.

Everything format-neutral (values by name, import-time constants,
ShapeTensors of Index values, int64 narrowing, the ledger) is
:class:`~tosaconv.lowering.context.LoweringContext`. ONNX adds the model
opset the converters resolve against and its initializers, read into numpy
only when a converter asks for one.
"""
from __future__ import annotations

from typing import Optional

import numpy as np
from onnx import TensorProto, numpy_helper

from ...ir.graph import Graph
from ...lowering.context import LoweringContext, ShapeTensor  # noqa: F401  (re-exported for converters)
from .lazy_weights import initializer_array


class ImportContext(LoweringContext):
    def __init__(self, graph: Graph, opset: int, initializers: dict, domain_opsets: Optional[dict] = None):
        super().__init__(graph)
        self.opset = opset                    # the model's default (ai.onnx) opset
        self.domain_opsets = dict(domain_opsets or {})   # other domain -> the model's import of it
        self.initializers = initializers      # name -> TensorProto
        self.raw: dict = {}                   # name -> uint8 view of a large initializer's data (lazy_weights)
        self.quantize_makers: Optional[dict] = None   # value -> the QuantizeLinear making it (int_io, built once)

    def opset_of(self, domain: str) -> int:
        """The model's version of op set ``domain`` (0 when the model does not import it)."""
        return self.opset if domain in ("", "ai.onnx") else self.domain_opsets.get(domain, 0)

    def _has_initializer(self, name: str) -> bool:
        return name in self.initializers

    def _initializer(self, name: str) -> np.ndarray:
        t = self.initializers[name]
        raw = self.raw.get(name)
        if raw is not None and not t.HasField("raw_data") and t.data_location == TensorProto.DEFAULT:
            return initializer_array(t, raw)     # a view of the model file's bytes, not a copy
        return numpy_helper.to_array(t)
