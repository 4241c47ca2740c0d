"""The builder: appends ops to a graph, infers result types, stamps locations.

Converters and passes create ops only through a :class:`Builder`. It checks
operand counts against the op table, runs the op's shape rule, names the
results after the source node, and stamps the current location (set with
``with b.at(location):``), so every op says where it came from.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..symbolic.scope import ExtentKind, SymbolInfo
from . import attrs as A
from .dtypes import DType
from .graph import Graph, Operation, Value
from .location import UNKNOWN_LOCATION, Location
from .ops import Op, OpDef
from .types import IndexType, TensorType, ValueType
from .verifier import arity_problem


class Builder:
    def __init__(self, graph: Graph, location: Location = UNKNOWN_LOCATION) -> None:
        self.graph = graph
        self.location = location

    @contextmanager
    def at(self, location: Location) -> Iterator["Builder"]:
        saved, self.location = self.location, location
        try:
            yield self
        finally:
            self.location = saved

    # -- the one entry point -----------------------------------------------------
    def create(self, op: OpDef, operands: Iterable[Value] = (), attrs: Optional[A.Attrs] = None, *,
               result_types: Optional[Sequence[ValueType]] = None, name: Optional[str] = None) -> Operation:
        operands = list(operands)
        _check_arity(op, operands)
        if attrs is None:
            attrs = op.attrs()
        if result_types is None:
            result_types = op.shape_rule([v.type for v in operands], attrs)
        base = name or self.location.name or op.name.lower()
        results = [Value(self.graph.unique_name(base), t) for t in result_types]
        operation = Operation(op, operands, results, attrs, self.location)
        for r in results:
            r.producer = operation
        self.graph.ops.append(operation)
        return operation

    def emit(self, op: OpDef, *operands: Value, attrs: Optional[A.Attrs] = None, name: Optional[str] = None,
             result_type: Optional[ValueType] = None) -> Value:
        """Create a single-result op and return its result."""
        types = None if result_type is None else [result_type]
        return self.create(op, operands, attrs, result_types=types, name=name).result

    # -- conveniences ----------------------------------------------------------------
    def const(self, array: ArrayLike, dtype: DTypeLike = None, name: Optional[str] = None) -> Value:
        arr = np.asarray(array) if dtype is None else np.asarray(array, dtype=dtype)
        return self.emit(Op.CONST, attrs=A.ConstAttrs(arr), name=name)

    def scalar_like(self, value: float, like: TensorType, name: Optional[str] = None) -> Value:
        """A constant of ``like``'s dtype and rank with every dim 1 (ready to broadcast)."""
        arr = np.full((1,) * like.rank, value, dtype=like.dtype.numpy)
        return self.const(arr, name=name)

    def index(self, value: int) -> Value:
        return self.emit(Op.INDEX_CONST, attrs=A.IndexConstAttrs(int(value)))

    def get_dim(self, v: Value, axis: int) -> Value:
        return self.emit(Op.GET_DIM, v, attrs=A.DimIndexAttrs(axis))

    def extract_dim(self, v: Value, index: int) -> Value:
        """An Index value read from tensor data: a new symbol, the exact value read (so Exact), known only
        when the model runs (data-dependent)."""
        name = self.graph.scope.fresh_name(f"{v.name}.{index}")
        where = f"value of {self.location} element {index} (data-dependent)"
        d = self.graph.scope.declare(SymbolInfo(name, where, ExtentKind.EXACT, data_dependent=True))
        return self.emit(Op.EXTRACT_DIM, v, attrs=A.DimIndexAttrs(index), result_type=IndexType(d))

    def dims_to_tensor(self, dims: Iterable[Value], dtype: DType = DType.INT32) -> Value:
        return self.emit(Op.DIMS_TO_TENSOR, *dims, attrs=A.DimsToTensorAttrs(dtype))


def _check_arity(op: OpDef, operands: list[Value]) -> None:
    problem = arity_problem(op, len(operands))
    if problem:
        raise TypeError(problem)
    for v in operands:
        if not isinstance(v, Value):
            raise TypeError(f"{op.name} operand {v!r} is not an IR value")
