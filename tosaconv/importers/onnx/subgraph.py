"""Subgraphs of ONNX control-flow ops: child import contexts that see the enclosing names.

An If branch or a Loop/Scan body may use any name of an enclosing graph
(values, initializers, shape tensors). A child context resolves such a name
on first use, in one of two ways:

* :class:`InlineContext` converts the body straight into the enclosing graph
  (same builder): a branch decided at import, or one iteration of a loop
  unrolled at import. Enclosing names resolve to what they already are, so
  shape tensors stay shape tensors and constants stay constants.
* :class:`RegionContext` converts the body into a new region graph, isolated
  from above. An enclosing value the body uses becomes a region input,
  captured once and listed in :attr:`RegionContext.captures` (the region op's
  trailing operands); constants are copied in, and the Index value of a symbol
  is captured like any other value.
"""
from __future__ import annotations

from collections import ChainMap
from typing import TYPE_CHECKING, Callable, Union

import onnx

from ...ir.graph import Value, fresh_name
from ...ir.ops import Op
from ...lowering.dims import symbol_value
from .context import ImportContext, ShapeTensor

if TYPE_CHECKING:
    from ...ir.graph import Graph
    from ...ir.types import ValueType


class _ScopedValues(dict):
    """A child's own names, with a name of the enclosing context fetched (and kept) on first use."""

    def __init__(self, parent: dict, fetch: Callable[[object], object]):
        super().__init__()
        self._parent, self._fetch = parent, fetch

    def __contains__(self, name: str) -> bool:
        return dict.__contains__(self, name) or name in self._parent

    def __missing__(self, name: str) -> object:
        if name not in self._parent:
            raise KeyError(name)
        value = self._fetch(self._parent[name])
        self[name] = value
        return value

    def get(self, name: str, default: object = None) -> object:
        try:
            return self[name]
        except KeyError:
            return default


class _ScopedSymbols(_ScopedValues):
    """Index values of symbols: an enclosing one is computed there (GET_DIM) and captured."""

    def __init__(self, parent_ctx: ImportContext, fetch: Callable[[Value], Value]):
        super().__init__(parent_ctx.symbol_values, fetch)
        self._parent_ctx, self._scope = parent_ctx, parent_ctx.graph.scope

    def __contains__(self, name: str) -> bool:
        info = self._scope.symbols.get(name)
        return super().__contains__(name) or (info is not None and info.input_name is not None)

    def __missing__(self, name: str) -> Value:
        value = self._fetch(symbol_value(self._parent_ctx, name))
        self[name] = value
        return value


def _init_child(ctx: ImportContext, parent: ImportContext, body: onnx.GraphProto, graph: Graph) -> None:
    """What every child shares with its parent: opset, initializers and constants (its own first)."""
    initializers = ChainMap({t.name: t for t in body.initializer}, parent.initializers)
    ImportContext.__init__(ctx, graph, parent.opset, initializers, parent.domain_opsets)
    ctx.raw = parent.raw
    ctx._const_cache = ChainMap({}, parent._const_cache)


class InlineContext(ImportContext):
    """Converts a subgraph into the enclosing graph itself (decided branches, unrolled iterations)."""

    def __init__(self, parent: ImportContext, body: onnx.GraphProto):
        _init_child(self, parent, body, parent.graph)
        self.b = parent.b
        self.values = _ScopedValues(parent.values, lambda held: held)
        self.symbol_values, self.index_cache = parent.symbol_values, parent.index_cache


class RegionContext(ImportContext):
    """Converts a subgraph into a new region graph; enclosing values become captured inputs."""

    def __init__(self, parent: ImportContext, body: onnx.GraphProto, name: str):
        _init_child(self, parent, body, parent.graph.region_shell(name))
        self.b.location = parent.b.location
        self.values = _ScopedValues(parent.values, self._capture)
        self.symbol_values = _ScopedSymbols(parent, self._capture_value)
        self.captures: list = []     # the enclosing values, in the order of their region inputs
        self._captured: dict = {}    # id of an enclosing value -> its region input

    def add_input(self, name: str, type_: ValueType) -> Value:
        return self.graph.add_input(fresh_name(name or "arg", set(self.graph._names)), type_)

    def _capture(self, held: Union[Value, ShapeTensor]) -> Union[Value, ShapeTensor]:
        if isinstance(held, ShapeTensor):
            return ShapeTensor([self._capture_value(d) for d in held.dims], held.scalar)
        return self._capture_value(held)

    def _capture_value(self, v: Value) -> Value:
        p = v.producer
        if p is not None and p.op is Op.CONST:
            return self.b.const(p.attrs.values, name=v.name)
        if p is not None and p.op is Op.INDEX_CONST:
            return self.b.index(p.attrs.value)
        if id(v) not in self._captured:
            self._captured[id(v)] = self.add_input(v.name, v.type)
            self.captures.append(v)
        return self._captured[id(v)]

    def align_captures(self, operands: list) -> None:
        """Make the captured inputs follow ``operands`` (a superset of :attr:`captures`), so two
        branches can take one operand list; values this region does not use become unused inputs."""
        explicit = self.graph.inputs[:len(self.graph.inputs) - len(self.captures)]
        inner = [self._captured.get(id(o)) or self.add_input(o.name, o.type) for o in operands]
        self.graph.inputs = explicit + inner
        self.captures = list(operands)


def convert_body(ctx: ImportContext, body: onnx.GraphProto) -> None:
    """Convert the nodes of ``body`` in the child context ``ctx``."""
    from .driver import convert_nodes  # the driver imports the converters, which import this module
    convert_nodes(ctx, body.node)
