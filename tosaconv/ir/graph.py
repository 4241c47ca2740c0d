"""The program: values, operations and the graph that owns them.

A :class:`Graph` is one function: named inputs, an ordered (topological) list
of :class:`Operation` s, named outputs, the symbol :class:`Scope` and the
constraint :class:`Ledger`. Values are SSA: each is produced by exactly one op
or is a graph input. Output names are the source model's output names.
Control-flow ops hold *regions*: Graphs stored in their attributes, isolated
from above (a region sees only its own inputs, so every outer value it uses is
an operand of the op), sharing the symbol scope but keeping their own ledger.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import field, fields
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional, TypeVar

import numpy as np

from ..symbolic.constraints import Ledger
from ..symbolic.names import unused_name
from ..symbolic.scope import Scope
from .location import Location
from .types import IndexType, TensorType, ValueType

if TYPE_CHECKING:  # the op table's attribute classes hold Graphs (regions), so no runtime import
    from ..diagnostics import Diagnostic
    from .attrs import Attrs
    from .io_quant import EdgeQuant
    from numpy.typing import ArrayLike

    from .ops import OpDef

_AttrsT = TypeVar("_AttrsT")

def fresh_name(base: str, used: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``... whichever is not in ``used``; records it as used."""
    name = unused_name(base, used, "_")
    used.add(name)
    return name


@dataclass(eq=False, slots=True)   # slots: a program has a few of these per op (memory, speed)
class Value:
    name: str
    type: ValueType
    producer: Optional["Operation"] = None

    def __repr__(self) -> str:
        return f"%{self.name}: {self.type}"

    @property
    def tensor_type(self) -> TensorType:
        """The type of a tensor value; a TypeError (an internal error) for an Index value."""
        t = self.type
        if not isinstance(t, TensorType):
            raise TypeError(f"'{self.name}' is an Index value ({t}) where a tensor is expected")
        return t

    @property
    def index_type(self) -> IndexType:
        """The type of an Index value; a TypeError (an internal error) for a tensor."""
        t = self.type
        if not isinstance(t, IndexType):
            raise TypeError(f"'{self.name}' is a tensor ({t}) where an Index value is expected")
        return t


def describe_value(v: Value) -> str:
    """``v`` as a message names it for a user: a graph input by its (quoted) name, any other value by the
    source op that makes it ("the output of Greater 'gt'"), since an internal name such as 'gt_2' means
    nothing to them."""
    p = v.producer
    if p is None:
        return f"'{v.name}'"
    which = "the output" if len(p.results) == 1 else f"output {p.results.index(v)}"
    return f"{which} of {p.location}"


@dataclass(eq=False, slots=True)
class Operation:
    op: OpDef
    operands: list[Value]
    results: list[Value]
    attrs: Attrs
    location: Location

    @property
    def result(self) -> Value:
        return self.results[0]

    def attrs_as(self, cls: type[_AttrsT]) -> _AttrsT:
        """``attrs`` as the class the op table gives this op; a TypeError (an internal error) otherwise."""
        a = self.attrs
        if not isinstance(a, cls):
            raise TypeError(f"{self.op.name} carries {type(a).__name__}, not {cls.__name__}")
        return a

    def __repr__(self) -> str:
        ins = ", ".join("%" + v.name for v in self.operands)
        return f"{self.op.name}({ins}) at {self.location}"


@dataclass(frozen=True)
class Assumption:
    """A data-dependent symbol the user bound (``--bind nz.1=3``): the static program was decayed with it,
    and the numpy run checks it, since a TOSA 1.0 file cannot. ``data`` names the value that must give
    ``value``: its count of non-zero elements, or (``element`` set) its element at that flat index."""

    symbol: str
    value: int
    data: str
    location: Location
    element: Optional[int] = None
    shown: str = ""          # the name a user knows for ``data`` (the tensor it reshapes), for messages

    def actual(self, array: "ArrayLike") -> int:
        """What ``array`` (the data value) gives for the symbol."""
        a = np.asarray(array)
        return int(np.count_nonzero(a)) if self.element is None else int(a.reshape(-1)[self.element])


@dataclass
class Graph:
    """A program: its inputs, ops in order, outputs, symbols (``scope``) and the facts it relies on (``ledger``)."""

    name: str = "main"
    inputs: list[Value] = field(default_factory=list)
    outputs: list[Value] = field(default_factory=list)
    output_names: list[str] = field(default_factory=list)  # the source model's names, same order
    ops: list[Operation] = field(default_factory=list)
    scope: Scope = field(default_factory=Scope)
    ledger: Ledger = field(default_factory=Ledger)
    source: str = ""                                  # e.g. "model.onnx (opset 17)"
    # Why an op computes in float, keyed by its location's text (``str(op.location)``): importers note
    # it (tosaconv.analysis.note_float_reason) and the float-island report reads it. Shells and regions
    # share the dict, so a note survives passes, specialization and region rebuilding.
    float_reasons: dict[str, str] = field(default_factory=dict)
    # the quantization of inputs and outputs by name (io_quant.EdgeQuant); int_io: made by --int-io
    input_quant: dict[str, EdgeQuant] = field(default_factory=dict)
    output_quant: dict[str, EdgeQuant] = field(default_factory=dict)
    int_io: bool = False
    import_warnings: list[Diagnostic] = field(default_factory=list)   # Diagnostics (warnings) the importer raised
    # the model's own element type of an input or output by name, where the IR stores it in another
    # one ("uint8": uint8 bits in INT8, "int64" in INT32, "float64" in FP32); see tosaconv.io_dtypes
    input_dtypes: dict[str, str] = field(default_factory=dict)
    output_dtypes: dict[str, str] = field(default_factory=dict)
    assumptions: list[Assumption] = field(default_factory=list)     # checked by the numpy run
    _names: set[str] = field(default_factory=set, repr=False)
    # unique_name's suffix search, where each base got to in ``_counted`` (the set ``_names`` was then)
    _counters: dict[str, int] = field(default_factory=dict, repr=False, compare=False)
    _counted: Optional[set[str]] = field(default=None, repr=False, compare=False)

    def unique_name(self, base: str) -> str:
        """:func:`fresh_name` in ``_names``, in linear time for the many results of one location (a node
        lowered to a hundred ops, an unrolled loop): names are only ever added to the set, so the search
        for a base goes on where it stopped last time (from the start again if ``_names`` was replaced)."""
        used = self._names
        if self._counted is not used:
            self._counters, self._counted = {}, used
        n = self._counters.get(base, 1)
        name = base if n == 1 else f"{base}_{n}"
        while name in used:
            n += 1
            name = f"{base}_{n}"
        self._counters[base] = n + 1      # (``name`` is used now: the next search starts after it)
        used.add(name)
        return name

    def add_input(self, name: str, type_: ValueType) -> Value:
        if name in self._names:
            raise ValueError(f"duplicate value name {name!r}")
        self._names.add(name)
        v = Value(name, type_)
        self.inputs.append(v)
        return v

    def set_outputs(self, values: Iterable[Value], names: Iterable[str]) -> None:
        self.outputs = list(values)
        self.output_names = list(names)

    def users(self) -> dict[str, list[Operation]]:
        """Map from value name to the operations that use it."""
        out: dict[str, list[Operation]] = {}
        for op in self.ops:
            for v in op.operands:
                out.setdefault(v.name, []).append(op)
        return out

    def histogram(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for op in self.ops:
            counts[op.op.name] = counts.get(op.op.name, 0) + 1
        return counts

    def copy_shell(self) -> "Graph":
        """An empty graph that shares this one's name, scope and ledger."""
        return Graph(name=self.name, scope=self.scope, ledger=self.ledger, source=self.source,
                     float_reasons=self.float_reasons, input_quant=self.input_quant,
                     output_quant=self.output_quant, int_io=self.int_io, import_warnings=self.import_warnings,
                     input_dtypes=self.input_dtypes, output_dtypes=self.output_dtypes)

    def region_shell(self, name: str) -> "Graph":
        """An empty region graph: it shares this graph's symbols but keeps its own ledger, because
        a region's facts hold only when it runs (a branch that is not taken assumes nothing)."""
        return Graph(name=name, scope=self.scope, float_reasons=self.float_reasons)


def _region_fields(attrs_class: type) -> tuple[str, ...]:
    """The fields of an attribute class declared as a ``Graph`` (a region); most classes have none."""
    return tuple(f.name for f in fields(attrs_class) if f.type in ("Graph", Graph))


_REGION_FIELDS: dict[type, tuple[str, ...]] = {}   # _region_fields by class, without lru_cache's call cost


def op_regions(op: Operation) -> list[tuple[str, "Graph"]]:
    """``(attribute name, Graph)`` for every region ``op`` holds, in field order (none for most ops)."""
    attrs_class: type = type(op.attrs)   # a plain ``type`` is Hashable to mypy, as lru_cache asks
    names = _REGION_FIELDS.get(attrs_class)
    if names is None:
        names = _REGION_FIELDS[attrs_class] = _region_fields(attrs_class)
    return [(name, getattr(op.attrs, name)) for name in names if isinstance(getattr(op.attrs, name), Graph)] \
        if names else []


def ops_with_regions(ops: Iterable[Operation]) -> list[Operation]:
    """The ops of ``ops`` whose attribute class declares a region field, in order (a pass walking every
    region skips the rest without a call per op)."""
    ops = ops if isinstance(ops, list) else list(ops)
    known = _REGION_FIELDS
    classes = {type(op.attrs) for op in ops}   # a handful of classes; most programs have no region at all
    for cls in classes:
        if cls not in known:
            known[cls] = _region_fields(cls)
    with_regions = {cls for cls in classes if known[cls]}
    return [op for op in ops if type(op.attrs) in with_regions] if with_regions else []


def walk_graphs(graph: Graph) -> Iterator[Graph]:
    """``graph`` and every region nested in it, outermost first."""
    yield graph
    for op in ops_with_regions(graph.ops):    # (most ops hold no region: no call per op)
        for _, region in op_regions(op):
            yield from walk_graphs(region)
