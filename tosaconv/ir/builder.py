"""The builder: appends ops to a graph, infers result types, stamps locations.

Converters and passes create ops only through a :class:`Builder`. It checks
operand counts against the op table, runs the op's shape rule, names the
results after the source node, and stamps the current location (set with
``with b.at(location):``), so every op says where it came from.

Equal attributes of plain values become one object, and so do types of one
normal form (:mod:`.structural`): shape-rule answers, which every builder
shares, and the verifier's verdicts are then found by the identity of an op's
attributes and types, without structural keys made per op.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Optional

import numpy as np

from ..symbolic.scope import ExtentKind, SymbolInfo
from . import attrs as A
from .dtypes import DType
from .graph import Graph, Operation, Value
from .location import UNKNOWN_LOCATION, Location
from .ops import Op, OpDef
from .structural import RULE_ANSWERS, const_types, interned, is_interned, remember_rule_answer, shared_types, types_key
from .types import IndexType, TensorType, ValueType
from .verifier import arity_problem

if TYPE_CHECKING:   # numpy.typing costs ~7 ms of start-up (issue 13); annotations only
    from numpy.typing import ArrayLike, DTypeLike


class Builder:
    def __init__(self, graph: Graph, location: Location = UNKNOWN_LOCATION) -> None:
        self.graph = graph
        self.location = location
        self._rules: dict[tuple[object, ...], tuple[OpDef, tuple[ValueType, ...]]] = {}   # see _result_types

    def at(self, location: Location) -> "_At":
        """``with b.at(location):`` stamps ``location`` on the ops made inside, then restores the one before."""
        return _At(self, location)

    # -- the one entry point -----------------------------------------------------
    def create(self, op: OpDef, operands: Iterable[Value] = (), attrs: Optional[A.Attrs] = None, *,
               result_types: Optional[Sequence[ValueType]] = None, name: Optional[str] = None) -> Operation:
        operands = list(operands)
        if _ARITY_FITS.get(op) != len(operands) or not all(map(isinstance, operands, repeat(Value))):
            _check_arity(op, operands)
        # equal attributes are one object (see .structural); an op's default ones made once; a CONST's hold
        # an array (no value key, never interned)
        made, value_key = _default_attrs(op) if attrs is None else (attrs, None) if op is Op.CONST else interned(attrs)
        if result_types is None:
            result_types = self._result_types(op, list(map(_TYPE, operands)), made, value_key)
        else:
            result_types = shared_types(result_types)
        graph = self.graph
        base = name or self.location.value_name or op.name.lower()
        if len(result_types) == 1:     # (most ops)
            results = [Value(graph.unique_name(base), result_types[0])]
        else:
            results = [Value(graph.unique_name(base), t) for t in result_types]
        operation = Operation(op, operands, results, made, self.location)
        for r in results:
            r.producer = operation
        graph.ops.append(operation)
        return operation

    def _result_types(self, op: OpDef, types: list[ValueType], attrs: A.Attrs,
                      value_key: Optional[tuple[object, ...]]) -> Sequence[ValueType]:
        """``op``'s shape rule on ``types``; a rule is a pure function of the op, the attribute values and
        the operand types, so the answer for a structurally equal op made earlier is reused. Operand types
        are mostly the very objects an earlier op had (results share the rule's answer), and attributes
        interned objects, so they are looked up by identity first (in :data:`.structural.RULE_ANSWERS`,
        shared by every builder), before their structural key is made (symbolic dims hash slowly).
        ``value_key``: ``attrs_key(attrs)``."""
        if value_key is None:      # attributes holding arrays or regions: not worth remembering
            return const_types(attrs) if op is Op.CONST else shared_types(op.shape_rule(types, attrs))
        same_objects = (id(op), id(attrs), *map(id, types))
        seen = RULE_ANSWERS.get(same_objects)
        if seen is not None:
            return seen[1]     # type: ignore[return-value]
        operand_key = types_key(types)
        if operand_key is None:
            return op.shape_rule(types, attrs)
        key = (id(op), value_key, operand_key)
        known = self._rules.get(key)
        if known is None:
            known = self._rules[key] = (op, shared_types(op.shape_rule(types, attrs)))   # holding op keeps its id
        remember_rule_answer(same_objects, (tuple(types), known[1], attrs, op))   # (holding the objects keeps their ids)
        return known[1]

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


class _At:
    """The context of :meth:`Builder.at` (a class: a generator context manager costs several calls, and
    importers and specialization enter one per op)."""

    __slots__ = ("builder", "location", "saved")

    def __init__(self, builder: Builder, location: Location) -> None:
        self.builder, self.location = builder, location

    def __enter__(self) -> Builder:
        self.saved, self.builder.location = self.builder.location, self.location
        return self.builder

    def __exit__(self, *exc: object) -> None:
        self.builder.location = self.saved


def _check_arity(op: OpDef, operands: list[Value]) -> None:
    problem = arity_problem(op, len(operands))
    if problem:
        raise TypeError(problem)
    for v in operands:
        if not isinstance(v, Value):
            raise TypeError(f"{op.name} operand {v!r} is not an IR value")
    if all(not o.variadic for o in op.operands):
        _ARITY_FITS[op] = len(operands)


_TYPE = attrgetter("type")
_ARITY_FITS: dict[OpDef, int] = {}   # op without variadic operands -> its operand count, once an op checked it


def _default_attrs(op: OpDef) -> tuple[A.Attrs, Optional[tuple[object, ...]]]:
    """``interned(op.attrs())``, made once per op (when interned: only those may be shared by ops)."""
    made = _DEFAULTS.get(op)
    if made is None:
        made = interned(op.attrs())
        if is_interned(made[0]):
            _DEFAULTS[op] = made
    return made


_DEFAULTS: dict[OpDef, tuple[A.Attrs, Optional[tuple[object, ...]]]] = {}


