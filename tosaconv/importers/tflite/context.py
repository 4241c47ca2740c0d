"""The TFLite import context: the shared lowering context, keyed by tensor.

TFLite names tensors but does not require the names to be unique, so each
tensor gets a *key*: its name, or ``<name>#<index>`` when another tensor
already has that name. Everything else is the format-neutral
:class:`~tosaconv.lowering.context.LoweringContext`: constant buffers are
import-time constants (CONST ops only when used as tensors), shape-carrying
int tensors are ShapeTensors of Index values, and int64 narrows to int32.
The reader's :class:`TensorInfo` (with quantization parameters) stays
available per key for the converters. A context converts one subgraph
(``sub``, the main one unless given): the bodies of IF and WHILE get
contexts of their own (:mod:`.subgraph`), since TFLite subgraphs share no
tensors.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

from ...ir.graph import Graph
from ...lowering.context import LoweringContext, ShapeTensor  # noqa: F401  (re-exported for converters)
from .reader import TfliteModel

if TYPE_CHECKING:
    from .reader import Subgraph, TensorInfo


def tensor_keys(model: Union[TfliteModel, Subgraph]) -> list:
    """One unique key per tensor of ``model`` (a TfliteModel or a Subgraph)."""
    keys, seen = [], set()
    for t in model.tensors:
        key = t.name if t.name not in seen else f"{t.name}#{t.index}"
        seen.add(key)
        keys.append(key)
    return keys


class TfliteContext(LoweringContext):
    def __init__(self, graph: Graph, model: TfliteModel, sub: Optional[Union[Subgraph, TfliteModel]] = None):
        super().__init__(graph)
        self.model = model
        self.sub = sub if sub is not None else (model.graphs[0] if model.graphs else model)
        self.keys = tensor_keys(self.sub)
        self.infos = {k: t for k, t in zip(self.keys, self.sub.tensors)}
        for key, t in self.infos.items():
            if t.data is not None:
                self.set_const(key, t.data)
        self.variables: dict = {}     # (container, shared_name) -> the variable (shared with child contexts)
        self.resources: dict = {}     # key of a resource tensor (VAR_HANDLE's result) -> its variable
        self.in_region = False        # converting a COND_IF branch or a WHILE_LOOP cond/body
        self.init_mode = False        # converting a CALL_ONCE init subgraph (folded into initial values)
        self.once: set = set()        # init subgraphs already run by a CALL_ONCE (shared with children)

    def info(self, key: str) -> TensorInfo:
        return self.infos[key]
