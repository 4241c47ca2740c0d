"""Write a program that keeps symbols as a TOSA 1.1-draft flatbuffer: :func:`write_symbolic_tosa`.

The static writer's lowering (:mod:`.writer`), with three differences:

- a dim an open symbol decides is written as −1 (the official ``infer_shapes``
  resolves it from the input shapes);
- the ops that take sizes as Index operands are written as the TOSA op they
  decay to, with the size operands computed by EXT-SHAPE operators
  (:mod:`.shape_ops`): RESHAPE with ``shape_symbols``, EXPAND_DIMS and
  COLLAPSE_DIMS → RESHAPE; DYN_SLICE → SLICE; DYN_TILE → TILE; DYN_PAD
  (constant mode, amounts ≥ 0) → PAD; IOTA → a prefix sum of ones
  (:mod:`.symbolic_iota`). GET_DIM, INDEX_CONST and the INDEX_*
  arithmetic are not written where they stand: their values are expressions,
  computed (once each) where an op uses them;
- the ledger's constraints on open symbols become ASSERT_EQUAL_SHAPE ops at
  the top of the block: ``a == b`` directly, ``broadcastable(a, b)`` with
  ``allow_broadcast``, ``a % b == 0`` as ``MOD_SHAPE(a, b) == 0`` and
  ``a >= b`` as ``MAX_SHAPE(a, b) == a``. One the shape operators cannot
  compute (a size from tensor data) is returned as unchecked.

Any other op that has no TOSA counterpart while a symbol is open is refused
with an :class:`EmitError` naming it.
"""
from __future__ import annotations

from dataclasses import field, replace
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Iterable

import numpy as np

from ..ir.dtypes import DType
from ..ir.ops import Trait
from ..ir.types import IndexType, TensorType
from ..symbolic.constraints import Kind, Status
from ..symbolic.expr import Expr, bounds, subs
from . import params as P
from . import schema as S
from .errors import EmitError
from .mlir import records_to_mlir
from .serialize import serialize, too_big
from .shape_ops import ShapeOps, symbol_sources
from .symbolic_iota import IotaWriter
from .tensor_data import to_le_bytes
from .writer import _Lowering, location_text

if TYPE_CHECKING:
    from ..ir.graph import Graph, Operation, Value
    from ..ir.location import Location
    from ..symbolic.constraints import Constraint
    from ..symbolic.expr import Dim
    from .records import BlockRecord

_COMPUTED = frozenset({"GET_DIM", "INDEX_CONST", "INDEX_ADD", "INDEX_SUB", "INDEX_MUL", "INDEX_FLOORDIV",
                       "INDEX_MOD", "INDEX_MIN", "INDEX_MAX"})


@dataclass
class SymbolicTosa:
    data: bytes
    asserted: list = field(default_factory=list)    # constraint texts the file checks (ASSERT_EQUAL_SHAPE)
    unchecked: list = field(default_factory=list)   # constraint texts it cannot check


def write_symbolic_tosa(graph: Graph, bindings: dict | None = None) -> SymbolicTosa:
    """The TOSA 1.1-draft bytes of ``graph`` (symbols in ``bindings`` already substituted by
    :func:`tosaconv.passes.keep_symbols.keep_symbols`; the ledger's other constraints become asserts)."""
    block, result = symbolic_block(graph, bindings)
    if too_big(block):
        raise EmitError(f"constant data of {block.data_bytes()} bytes exceeds the 2 GB flatbuffer limit")
    result.data = serialize(block, S.WRITE_VERSION_SHAPE)
    return result


def write_symbolic_mlir(graph: Graph, bindings: dict | None = None) -> SymbolicTosa:
    """The same program as :func:`write_symbolic_tosa`, as TOSA MLIR text (``?`` dims, ``!tosa.shape``
    values and the EXT-SHAPE ops, printed from the same records)."""
    block, result = symbolic_block(graph, bindings)
    result.data = records_to_mlir(block).encode("utf-8")
    return result


def symbolic_block(graph: Graph, bindings: dict | None = None) -> tuple[BlockRecord, SymbolicTosa]:
    """``(BlockRecord, SymbolicTosa without data)``: the records a symbolic file is written from (shape
    operators are OpRecords whose outputs are ShapeRecords), for any printer of TOSA records."""
    lowering = _SymbolicLowering(graph, dict(bindings or {}))
    return lowering.run(), lowering.result


class _SymbolicLowering(_Lowering):
    share_constants = False

    def __init__(self, graph: Graph, env: dict, parent: _SymbolicLowering | None = None,
                 region_name: str = "main") -> None:
        super().__init__(graph, parent, region_name)
        self.env, self.result = env, SymbolicTosa(b"")
        self.shape_ops = ShapeOps(self.block, self.names, symbol_sources(graph.inputs, self.names))
        self.iotas = IotaWriter(graph, self.shape_ops)
        self.is_region = parent is not None
        if self.is_region:
            self.result = parent.result   # a region's asserts are the file's

    def _region(self, region: Graph, name: str) -> "_SymbolicLowering":
        """A COND_IF / WHILE_LOOP region keeps its symbols too: its sizes are computed by DIM of the
        region's own inputs (a region cannot read the enclosing block's shape values)."""
        return _SymbolicLowering(region, self.env, self, name)

    def _inputs(self) -> None:
        """The graph inputs, then one ASSERT_EQUAL_SHAPE per constraint on open symbols (a region's
        constraints are asserted inside it: they hold only when it runs)."""
        if self.is_region:
            self._region_inputs()
        else:
            super()._inputs()
            self.shape_ops.declare_symbols(self.graph.inputs)
        for c in list(self.graph.ledger.entries):
            if c.status is not Status.PROVEN:   # a proven entry holds for every binding: nothing to check
                self._assertion(c, self.env, self.result)

    def _region_inputs(self) -> None:
        """A region's tensor inputs; an Index input (a dim a branch uses as a size) is no block input: its
        value is an expression, computed from DIM of the region's tensor inputs where it is used."""
        tensors = [v for v in self.graph.inputs if isinstance(v.type, TensorType)]
        for v in tensors:
            self._add_tensor(self.names[v], self._type(v, f"region input '{v.name}'", None))
        self.defined.update(self.graph.inputs)
        self.block.inputs = [self.names[v] for v in tensors]

    def _region_operands(self, op: Operation) -> list[str]:
        """The tensor operands of a COND_IF / WHILE_LOOP; its Index operands each region computes itself."""
        index = [v for v in op.operands if isinstance(v.type, IndexType)]
        if index and op.op.name != "COND_IF":
            raise EmitError(f"cannot keep symbols through {op.op.name}: it carries the Index values "
                            f"{', '.join(str(v.type) for v in index)}, which a TOSA loop cannot carry", op.location)
        for v in op.operands:
            if v not in self.defined:
                raise EmitError(f"cannot emit {op.op.name}: operand '{v.name}' is not defined before it",
                                op.location)
        return [self.names[v] for v in op.operands if isinstance(v.type, TensorType)]

    # -- constraints ---------------------------------------------------------------------
    def _assertion(self, c: Constraint, env: dict, result: SymbolicTosa) -> None:
        a, b = subs(c.lhs, env), subs(c.rhs, env)
        if not isinstance(a, Expr) and not isinstance(b, Expr):
            return   # fully bound: checked when the program was specialized
        text = f"{replace(c, lhs=a, rhs=b).text()} ({c.provenance.where()})"   # with the bound symbols' values
        if self.shape_ops.missing([a, b]) or c.kind not in _ASSERT_FORMS:
            result.unchecked.append(text)
            return
        try:
            self.shape_ops.location = f"constraint {c.text()}"
            lhs, rhs, allow_broadcast = _ASSERT_FORMS[c.kind](self.shape_ops, a, b)
            with self.shape_ops.private():
                left = lhs()
            with self.shape_ops.private():
                right = rhs()
            self.shape_ops.assert_equal(left, right, allow_broadcast, self.shape_ops.location)
        except EmitError:
            result.unchecked.append(text)
            return
        result.asserted.append(text)
        self.graph.ledger.mark(c, Status.ASSERTED)   # inspect and the report show the file checks it

    # -- ops -------------------------------------------------------------------------------
    def _lower(self, op: Operation) -> None:
        name = op.op.name
        if name in _COMPUTED:
            self.defined.update(op.results)   # computed from its expression where it is used
            return
        if name == "DIMS_TO_TENSOR":
            return self._dims_to_tensor(op)
        if op.op.has(Trait.REGION) and op.op.tosa is not None:
            return self._region_op(op)
        if name == "IOTA":
            return self._iota(op)
        handler = _HANDLERS.get(name)
        if name in _ATTR_SHAPED and len(op.operands) == 1 and not _symbolic_attrs(op):
            handler = None   # all sizes static: the static writer's CONST_SHAPE operands
        if handler is None:
            if op.op.tosa is None:
                raise EmitError(f"cannot keep symbols through {name}: it has no TOSA counterpart and no "
                                f"EXT-SHAPE form while {_open_text(op)} stay open; bind them "
                                f"(--bind) or convert without --keep-symbols", op.location)
            return super()._lower(op)
        self._operand(op, op.operands[0])
        self.shape_ops.location = location_text(op.location)
        try:
            tosa, shapes, params = handler(self, op)
        except EmitError as e:
            raise EmitError(f"cannot keep symbols through {name}: {e}", op.location) from None
        self._shaped(op, tosa, shapes, params)

    def _shaped(self, op: Operation, tosa: str, shapes: list, params: list) -> None:
        out = self._type(op.result, f"result of {op.op.name}", op.location)
        name = self.names[op.result]
        inputs = [self.names[op.operands[0]]] + shapes
        inputs += [self._param(name, p, op.location) for p in params]
        self._add_tensor(name, out)
        self._add_op(tosa, {}, inputs, [name], location_text(op.location))
        self.defined.update(op.results)

    def _dims_to_tensor(self, op: Operation) -> None:
        """DIMS_TO_TENSOR of open dims: EXT-SHAPE has no operator that turns a shape into tensor data, so
        each dim ``d`` is counted: TILE a [1] tensor of ones by ``[d]`` and REDUCE_SUM it (exact in INT32;
        in FP32 below 2^24), then CONCAT the counts. GlobalAveragePool and MEAN divide by such counts."""
        dtype = op.result.type.dtype
        if dtype not in (DType.INT32, DType.FP32):
            raise EmitError(f"cannot keep symbols through DIMS_TO_TENSOR to {dtype.name}: only INT32 and FP32 "
                            "counts can be computed from shapes", op.location)
        self.shape_ops.location = text = location_text(op.location)
        out = self.names[op.result]
        try:
            parts = [self._count(out, i, v.type.value, dtype, op.location) for i, v in enumerate(op.operands)]
        except EmitError as e:
            raise EmitError(f"cannot keep symbols through DIMS_TO_TENSOR: {e}", op.location) from None
        self._add_tensor(out, TensorType(dtype, (len(parts),)))
        self._add_op("CONCAT", {"axis": 0}, parts, [out], text)
        self.defined.update(op.results)

    def _iota(self, op: Operation) -> None:
        """IOTA of an open count: a SLICE of one prefix sum of ones (:mod:`.symbolic_iota`)."""
        try:
            self.iotas.write(self, op)
        except EmitError as e:
            raise EmitError(f"cannot keep symbols through IOTA: {e}", op.location) from None

    def _count(self, owner: str, i: int, d: Dim, dtype: DType, location: Location) -> str:
        """A [1] tensor holding the dim ``d``."""
        text = location_text(location)
        name = self.names.fresh(f"{owner}/count{i}")
        if not isinstance(d, Expr):
            self._add_tensor(name, TensorType(dtype, (1,)), to_le_bytes(np.array([d]), dtype))
            self._add_op("CONST", {}, [], [name], text)
            return name
        ones = self._param(owner, P.Param("ones", dtype, np.ones(1, dtype=dtype.numpy)), location)
        tiled = self.names.fresh(f"{owner}/ones{i}")
        self._add_tensor(tiled, TensorType(dtype, (-1,)))
        self._add_op("TILE", {}, [ones, self.vector([d])], [tiled], text)
        self._add_tensor(name, TensorType(dtype, (1,)))
        self._add_op("REDUCE_SUM", {"axis": 0}, [tiled], [name], text)
        return name

    def vector(self, dims: Iterable[Dim]) -> str:
        missing = self.shape_ops.missing(dims)
        if missing:
            raise EmitError(f"size {', '.join(missing)} is not a dim of any graph input (it comes from "
                            "tensor data, which EXT-SHAPE cannot read)")
        return self.shape_ops.vector(dims, self.shape_ops.location)

    def _type(self, value: Value, what: str, location: Location) -> TensorType:
        t = value.type
        if not isinstance(t, TensorType):
            raise EmitError(f"{what} is an Index value ({t}) used as a tensor", location)
        return TensorType(t.dtype, tuple(d if isinstance(d, int) else -1 for d in t.shape))

    def _add_tensor(self, name: str, type_: TensorType, data: np.ndarray | None = None) -> None:
        shape = tuple(-1 if isinstance(d, Expr) else d for d in type_.shape)
        super()._add_tensor(name, TensorType(type_.dtype, shape), data)


def _open_text(op: Operation) -> str:
    names = set()
    for v in list(op.operands) + list(op.results):
        t = v.type
        names |= set(t.symbols()) if isinstance(t, TensorType) else set(getattr(t.value, "free_symbols", set)())
    return "symbols " + ", ".join(sorted(names)) if names else "its symbols"


def _index_values(operands: Iterable[Value]) -> list:
    return [v.type.value for v in operands]


def _reshape(w: _SymbolicLowering, op: Operation) -> None:
    return "RESHAPE", [w.vector(op.result.type.shape)], []


def _dyn_slice(w: _SymbolicLowering, op: Operation) -> None:
    r = op.operands[0].type.rank
    return "SLICE", [w.vector(_index_values(op.operands[1:1 + r])), w.vector(op.result.type.shape)], []


def _dyn_tile(w: _SymbolicLowering, op: Operation) -> None:
    return "TILE", [w.vector(_index_values(op.operands[1:]))], []


def _dyn_pad(w: _SymbolicLowering, op: Operation) -> None:
    amounts = _index_values(op.operands[1:])
    if op.attrs.mode != "constant":
        raise EmitError(f"a {op.attrs.mode}-mode pad by computed amounts has no TOSA form (only constant pads)")
    if any(bounds(a)[0] < 0 for a in amounts):
        raise EmitError(f"pad amounts {', '.join(map(str, amounts))} may be negative (a crop)")
    const = P.scalar_param("pad_const", op.attrs.pad_const, op.operands[0].type.dtype)
    return "PAD", [w.vector(amounts)], [const]


def _slice(w: _SymbolicLowering, op: Operation) -> None:
    return "SLICE", [w.vector(op.attrs.start), w.vector(op.attrs.size)], []


def _tile(w: _SymbolicLowering, op: Operation) -> None:
    return "TILE", [w.vector(op.attrs.multiples)], []


def _pad(w: _SymbolicLowering, op: Operation) -> None:
    const = P.scalar_param("pad_const", op.attrs.pad_const, op.operands[0].type.dtype)
    return "PAD", [w.vector(op.attrs.padding)], [const]


_ATTR_SHAPED = {"RESHAPE": "new_shape", "SLICE": "start size", "TILE": "multiples", "PAD": "padding"}


def _symbolic_attrs(op: Operation) -> bool:
    """A RESHAPE/SLICE/TILE/PAD whose size attributes hold symbolic dims (written in by a pass)."""
    return any(isinstance(d, Expr) for f in _ATTR_SHAPED[op.op.name].split() for d in getattr(op.attrs, f))


_HANDLERS = {"SLICE": _slice, "TILE": _tile, "PAD": _pad,
             "RESHAPE": _reshape, "EXPAND_DIMS": _reshape, "COLLAPSE_DIMS": _reshape,
             "DYN_SLICE": _dyn_slice, "DYN_TILE": _dyn_tile, "DYN_PAD": _dyn_pad}


def _assert_eq(s: ShapeOps, a: Dim, b: Dim) -> tuple:
    return (lambda: s.scalar(a)), (lambda: s.scalar(b)), False


def _assert_broadcastable(s: ShapeOps, a: Dim, b: Dim) -> tuple:
    return (lambda: s.scalar(a)), (lambda: s.scalar(b)), True


def _assert_divisible(s: ShapeOps, a: Dim, b: Dim) -> tuple:
    return (lambda: s.binary("MOD_SHAPE", s.scalar(a), s.scalar(b))), (lambda: s.scalar(0)), False


def _assert_ge(s: ShapeOps, a: Dim, b: Dim) -> tuple:
    return (lambda: s.binary("MAX_SHAPE", s.scalar(a), s.scalar(b))), (lambda: s.scalar(a)), False


_ASSERT_FORMS = {Kind.EQ: _assert_eq, Kind.BROADCASTABLE: _assert_broadcastable,
                 Kind.DIVISIBLE: _assert_divisible, Kind.GE: _assert_ge}
