"""The import context both importers share: what converters and lowering builders see of a model.

ONNX and TFLite models compute shapes with ordinary int tensors (``Shape ->
Gather -> Unsqueeze -> Concat -> Reshape``). The context keeps such values as a
:class:`ShapeTensor`: a list of Index values, one per element, each with a
known symbolic value. Shape-arithmetic converters work on these lists and
emit the seed's helper ops (GET_DIM, INDEX_*), so a RESHAPE downstream gets
explicit ``shape_symbols`` instead of a ``-1``. A shape tensor used as data is
materialized with DIMS_TO_TENSOR. Initializers become CONST ops only when a
converter needs them as tensors, so unused or folded weights cost nothing.
:class:`LoweringContext` is keyed by the source format's value names; an
importer subclasses it (ONNX adds its lazily read initializers, TFLite its
tensor records).
"""
from __future__ import annotations

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

import numpy as np
from ..ir import attrs as A
from ..ir.builder import Builder
from ..ir.dtypes import DType
from ..ir.graph import Graph, Value, describe_value
from ..ir.ops import Op
from ..ir.types import TensorType
from ..symbolic.constraints import Decision, Kind, Provenance
from .errors import ConvertError

if TYPE_CHECKING:
    from ..symbolic.expr import Dim

MAX_SHAPE_TENSOR = 16   # int vectors longer than this are data, not shapes


@dataclass
class ShapeTensor:
    """An int tensor of rank 0 or 1 (ONNX int64, TFLite int32) whose elements are Index values."""

    dims: list
    scalar: bool = False

    def values(self) -> list:
        return [d.type.value for d in self.dims]


# What a converter returns for a node's outputs: one value, or one per output (None for an output left unset)
Converted = Union[Value, ShapeTensor, Sequence[Union[Value, ShapeTensor, None]], None]


# numpy types a constant may have on its way into the IR (dtypes.from_numpy maps each to a TOSA type)
_TOSA_CONST_DTYPES = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64,
                                                      np.float16, np.float32, np.float64))


class LoweringContext:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.b = Builder(graph)
        self.values: dict = {}                # source name -> Value | ShapeTensor
        self._const_cache: dict = {}
        self.symbol_values: dict = {}         # symbol name -> its Index value (GET_DIM or EXTRACT_DIM)
        self.index_cache: dict = {}           # dim expression key -> Index value computing it
        self.int_io = None                    # with --int-io, the importer's edge plan (main graph only)
        self._derived: dict = {}              # (graph id, key) -> CONST derived from import-time constants
        self.static_fits: dict = {}           # (static H and W, Window) -> their fits (lowering.window.fit_window)

    # -- an importer's own constant store (ONNX initializers); the base has none ------
    def _has_initializer(self, name: str) -> bool:
        return False

    def _initializer(self, name: str) -> np.ndarray:
        raise KeyError(name)

    # -- lookups -----------------------------------------------------------------
    def has(self, name: Optional[str]) -> bool:
        return bool(name) and (name in self.values or self._has_initializer(name) or name in self._const_cache)

    def set_const(self, name: str, arr: np.ndarray) -> None:
        """Record an import-time constant; it becomes a CONST op only if used as a tensor."""
        self._const_cache[name] = arr

    def const(self, name: Optional[str]) -> Optional[np.ndarray]:
        """The value of ``name`` when it is known at import time, else None."""
        if not name:
            return None
        if name in self._const_cache and name not in self.values:
            return self._const_cache[name]
        if self._has_initializer(name) and name not in self.values:
            self._const_cache[name] = self._initializer(name)
            return self._const_cache[name]
        v = self.values.get(name)
        if isinstance(v, ShapeTensor):
            vals = v.values()
            if all(isinstance(x, int) for x in vals):
                return np.array(vals[0] if v.scalar else vals, dtype=np.int64)
            return None
        if isinstance(v, Value) and v.producer is not None and v.producer.op is Op.CONST:
            return v.producer.attrs.values
        return None

    def derived_const(self, key: tuple, make: Callable[[], np.ndarray]) -> Value:
        """A CONST of ``make()`` (e.g. a transposed weight), built once per graph and ``key``: an exporter that
        unrolls a recurrent layer uses one initializer in every step's Gemm, and a copy per step would
        multiply the weights in the .tosa."""
        full = (id(self.b.graph), key)
        value = self._derived.get(full)
        if value is None:
            value = self._derived[full] = self.b.const(make())
        return value

    def tensor(self, name: str) -> Value:
        """``name`` as an IR tensor value (materializing constants and shape tensors)."""
        v = self.values.get(name)
        if isinstance(v, Value):
            return v
        if isinstance(v, ShapeTensor):
            return self._materialize(name, v)
        if self._has_initializer(name) or name in self._const_cache:
            array = _narrow(self.const(name))
            if array.dtype not in _TOSA_CONST_DTYPES:
                raise ConvertError(f"constant '{name}' has element type {array.dtype}, which TOSA has no tensors "
                                   "for (and this op does not convert it)")
            value = self.b.const(array, name=name)
            self.values[name] = value
            return value
        if hasattr(v, "why_not_a_tensor"):   # e.g. a complex FFT result (the TFLite importer's ComplexPair)
            raise ConvertError(f"input '{name}' {v.why_not_a_tensor}")
        raise ConvertError(f"input '{name}' is not produced by any earlier node or initializer")

    def type_of(self, name: str) -> TensorType:
        v = self.values.get(name)
        if isinstance(v, ShapeTensor):
            return TensorType(DType.INT32, () if v.scalar else (len(v.dims),))
        return self.tensor(name).type

    def rank(self, name: str) -> int:
        return self.type_of(name).rank

    def lookup(self, name: str) -> Union[Value, ShapeTensor, np.ndarray]:
        """What ``name`` holds: a Value, a ShapeTensor, or an import-time constant (numpy array)."""
        v = self.values.get(name)
        if v is not None:
            return v
        c = self.const(name)
        if c is None:
            raise ConvertError(f"'{name}' is not produced by any earlier node or initializer")
        return c

    def bind(self, name: str, held: Union[Value, ShapeTensor, np.ndarray]) -> None:
        """Give ``name`` what :meth:`lookup` returned for another name (a subgraph input, a result)."""
        if isinstance(held, np.ndarray):
            self.set_const(name, held)
        else:
            self.values[name] = held

    def to_tensor(self, held: Union[Value, ShapeTensor, np.ndarray]) -> Value:
        """What :meth:`lookup` returned, as an IR tensor value."""
        if isinstance(held, Value):
            return held
        if isinstance(held, ShapeTensor):
            return self._materialize("", held)
        return self.b.const(_narrow(np.asarray(held)))

    def _materialize(self, name: str, st: ShapeTensor) -> Value:
        with self.b.at(self.b.location):
            t = self.b.dims_to_tensor(st.dims) if st.dims else self.b.const(np.zeros((0,), np.int32))
            if st.scalar:
                t = self.b.emit(Op.RESHAPE, t, attrs=A.ReshapeAttrs(()))
        return t

    # -- shape tensors -------------------------------------------------------------
    def shape_tensor(self, name: Optional[str]) -> Optional[ShapeTensor]:
        """``name`` as a ShapeTensor when it is shape-like (known ints or index values)."""
        if not name:
            return None
        v = self.values.get(name)
        if isinstance(v, ShapeTensor):
            return v
        c = self.const(name)
        if c is None and isinstance(v, Value) and isinstance(v.type, TensorType) and v.type.dtype.is_int \
                and v.type.rank <= 1:
            from .const_eval import const_eval   # only for computed shapes: not on every convert (issue 13)
            c = const_eval(v)     # shape arithmetic on constants (Equal/Where/Mul ...), folded here
        if c is not None and c.dtype.kind in "iu" and c.ndim <= 1 and c.size <= MAX_SHAPE_TENSOR:
            return ShapeTensor([self.b.index(int(x)) for x in c.reshape(-1)], scalar=c.ndim == 0)
        return None

    def dims(self, name: str) -> ShapeTensor:
        """``name`` as a ShapeTensor, reading data-dependent elements with EXTRACT_DIM."""
        st = self.shape_tensor(name)
        if st is not None:
            return st
        t = self.tensor(name)
        if t.type.rank > 1 or not t.type.is_static:
            raise ConvertError(f"shape operand '{name}' must be a 1-D tensor of known length")
        n = t.type.shape[0] if t.type.rank else 1
        flat = t if t.type.rank else self.b.emit(Op.RESHAPE, t, attrs=A.ReshapeAttrs((1,)))
        dims = [self.b.extract_dim(flat, i) for i in range(n)]
        for d in dims:
            self.symbol_values[next(iter(d.type.symbols()))] = d
        return ShapeTensor(dims, scalar=t.type.rank == 0)

    def index(self, value: int) -> Value:
        return self.b.index(value)

    def dim_value(self, v: Value, axis: int) -> Value:
        """An Index value for dim ``axis`` of ``v``: a constant when static, else GET_DIM."""
        if not -v.type.rank <= axis < v.type.rank:
            raise ConvertError(f"axis {axis} is out of range for {describe_value(v)} of rank {v.type.rank}")
        d = v.type.shape[axis]
        return self.b.index(d) if isinstance(d, int) else self.b.get_dim(v, axis)

    # -- ledger ----------------------------------------------------------------------
    def require(self, kind: Kind, a: Dim, b: Dim, reason: str) -> Decision:
        if type(a) is int and type(b) is int and _HOLDS.get(kind, _never)(a, b):
            return _YES     # static dims that satisfy it: what the ledger decides, without its records
        loc = self.b.location
        return self.graph.ledger.require(kind, a, b, Provenance(loc.op_type, loc.name, reason),
                                         self.graph.scope)


def _never(a: int, b: int) -> bool:
    return False


# the kinds whose truth on two ints :meth:`LoweringContext.require` tests itself (the ledger says YES to them)
_HOLDS: dict = {Kind.EQ: lambda a, b: a == b, Kind.GE: lambda a, b: a >= b,
                Kind.BROADCASTABLE: lambda a, b: a == b or a == 1 or b == 1}
_YES = Decision.YES


def _narrow(arr: np.ndarray) -> np.ndarray:
    """Data types TOSA has no tensors for: int64 narrows to int32 (checked), float64 to float32."""
    if arr.dtype == np.int64 or arr.dtype == np.uint64:
        if arr.size and (arr.max() > np.iinfo(np.int32).max or arr.min() < np.iinfo(np.int32).min):
            raise ConvertError("an int64 constant has values outside the int32 range TOSA supports")
        return arr.astype(np.int32)
    if arr.dtype == np.float64:
        return arr.astype(np.float32)
    return arr


def as_const(held: Union[Value, ShapeTensor, np.ndarray]) -> Optional[np.ndarray]:
    """An import-time constant's array (an ndarray, a static ShapeTensor or a CONST's result), or None."""
    if isinstance(held, np.ndarray):
        return held
    if isinstance(held, ShapeTensor) and all(isinstance(d, int) for d in held.values()):
        vals = held.values()
        return np.array(vals[0] if held.scalar else vals, dtype=np.int64)
    p = getattr(held, "producer", None)
    return p.attrs.values if p is not None and p.op is Op.CONST else None
