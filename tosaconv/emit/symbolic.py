"""Write a program that keeps symbols as a TOSA 1.1-draft flatbuffer: :func:`write_symbolic_tosa`.

The static writer's lowering (:mod:`.writer`), with three differences:

- a dim an open symbol decides is written as −1 (the official ``infer_shapes``
  resolves it from the input shapes);
- the ops that take sizes as Index operands are written as the TOSA op they
  decay to, with the size operands computed by EXT-SHAPE operators
  (:mod:`.shape_ops`): RESHAPE with ``shape_symbols``, EXPAND_DIMS and
  COLLAPSE_DIMS → RESHAPE; DYN_SLICE → SLICE; DYN_TILE → TILE; DYN_PAD
  (constant mode, amounts ≥ 0) → PAD. GET_DIM, INDEX_CONST and the INDEX_*
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

from dataclasses import dataclass, field

from ..ir.types import TensorType
from ..symbolic.constraints import Kind
from ..symbolic.expr import Expr, bounds, subs
from . import params as P
from . import schema as S
from .errors import EmitError
from .serialize import serialize, too_big
from .shape_ops import ShapeOps, symbol_sources
from .writer import _Lowering, location_text

_COMPUTED = frozenset({"GET_DIM", "INDEX_CONST", "INDEX_ADD", "INDEX_SUB", "INDEX_MUL", "INDEX_FLOORDIV",
                       "INDEX_MOD", "INDEX_MIN", "INDEX_MAX"})


@dataclass
class SymbolicTosa:
    data: bytes
    asserted: list = field(default_factory=list)    # constraint texts the file checks (ASSERT_EQUAL_SHAPE)
    unchecked: list = field(default_factory=list)   # constraint texts it cannot check


def write_symbolic_tosa(graph, bindings: dict | None = None) -> SymbolicTosa:
    """The TOSA 1.1-draft bytes of ``graph`` (symbols in ``bindings`` already substituted by
    :func:`tosaconv.passes.keep_symbols.keep_symbols`; the ledger's other constraints become asserts)."""
    lowering = _SymbolicLowering(graph, dict(bindings or {}))
    lowering.run()
    result = lowering.result
    if too_big(lowering.block):
        raise EmitError(f"constant data of {lowering.block.data_bytes()} bytes exceeds the 2 GB flatbuffer limit")
    result.data = serialize(lowering.block, S.WRITE_VERSION_SHAPE)
    return result


class _SymbolicLowering(_Lowering):
    def __init__(self, graph, env: dict):
        super().__init__(graph)
        self.env, self.result = env, SymbolicTosa(b"")
        self.shape_ops = ShapeOps(self.block, self.names, symbol_sources(graph.inputs, self.names))

    def _inputs(self):
        """The graph inputs, then one ASSERT_EQUAL_SHAPE per constraint on open symbols."""
        super()._inputs()
        for c in self.graph.ledger.entries:
            self._assertion(c, self.env, self.result)

    # -- constraints ---------------------------------------------------------------------
    def _assertion(self, c, env: dict, result: SymbolicTosa) -> None:
        a, b = subs(c.lhs, env), subs(c.rhs, env)
        if not isinstance(a, Expr) and not isinstance(b, Expr):
            return   # fully bound: checked when the program was specialized
        text = f"{c.text()} ({c.provenance.where()})"
        if self.shape_ops.missing([a, b]) or c.kind not in _ASSERT_FORMS:
            result.unchecked.append(text)
            return
        try:
            self.shape_ops.location = f"constraint {c.text()}"
            _ASSERT_FORMS[c.kind](self.shape_ops, a, b, self.shape_ops.location)
        except EmitError:
            result.unchecked.append(text)
            return
        result.asserted.append(text)

    # -- ops -------------------------------------------------------------------------------
    def _lower(self, op):
        name = op.op.name
        if name in _COMPUTED:
            self.defined.update(op.results)   # computed from its expression where it is used
            return
        handler = _HANDLERS.get(name)
        if name == "RESHAPE" and len(op.operands) == 1:
            handler = None
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

    def _shaped(self, op, tosa: str, shapes: list, params: list) -> None:
        out = self._type(op.result, f"result of {op.op.name}", op.location)
        name = self.names[op.result]
        inputs = [self.names[op.operands[0]]] + shapes
        inputs += [self._param(name, p, op.location) for p in params]
        self._add_tensor(name, out)
        self._add_op(tosa, {}, inputs, [name], location_text(op.location))
        self.defined.update(op.results)

    def vector(self, dims) -> str:
        missing = self.shape_ops.missing(dims)
        if missing:
            raise EmitError(f"size {', '.join(missing)} is not a dim of any graph input (it comes from "
                            "tensor data, which EXT-SHAPE cannot read)")
        return self.shape_ops.vector(dims, self.shape_ops.location)

    def _type(self, value, what: str, location) -> TensorType:
        t = value.type
        if not isinstance(t, TensorType):
            raise EmitError(f"{what} is an Index value ({t}) used as a tensor", location)
        return TensorType(t.dtype, tuple(d if isinstance(d, int) else -1 for d in t.shape))

    def _add_tensor(self, name: str, type_: TensorType, data=None):
        shape = tuple(-1 if isinstance(d, Expr) else d for d in type_.shape)
        super()._add_tensor(name, TensorType(type_.dtype, shape), data)


def _open_text(op) -> str:
    names = set()
    for v in list(op.operands) + list(op.results):
        t = v.type
        names |= set(t.symbols()) if isinstance(t, TensorType) else set(getattr(t.value, "free_symbols", set)())
    return "symbols " + ", ".join(sorted(names)) if names else "its symbols"


def _index_values(operands) -> list:
    return [v.type.value for v in operands]


def _reshape(w, op):
    return "RESHAPE", [w.vector(op.result.type.shape)], []


def _dyn_slice(w, op):
    r = op.operands[0].type.rank
    return "SLICE", [w.vector(_index_values(op.operands[1:1 + r])), w.vector(op.result.type.shape)], []


def _dyn_tile(w, op):
    return "TILE", [w.vector(_index_values(op.operands[1:]))], []


def _dyn_pad(w, op):
    amounts = _index_values(op.operands[1:])
    if op.attrs.mode != "constant":
        raise EmitError(f"a {op.attrs.mode}-mode pad by computed amounts has no TOSA form (only constant pads)")
    if any(bounds(a)[0] < 0 for a in amounts):
        raise EmitError(f"pad amounts {', '.join(map(str, amounts))} may be negative (a crop)")
    const = P.scalar_param("pad_const", op.attrs.pad_const, op.operands[0].type.dtype)
    return "PAD", [w.vector(amounts)], [const]


_HANDLERS = {"RESHAPE": _reshape, "EXPAND_DIMS": _reshape, "COLLAPSE_DIMS": _reshape,
             "DYN_SLICE": _dyn_slice, "DYN_TILE": _dyn_tile, "DYN_PAD": _dyn_pad}


def _assert_eq(s: ShapeOps, a, b, loc):
    s.assert_equal(s.scalar(a), s.scalar(b), False, loc)


def _assert_broadcastable(s: ShapeOps, a, b, loc):
    s.assert_equal(s.scalar(a), s.scalar(b), True, loc)


def _assert_divisible(s: ShapeOps, a, b, loc):
    s.assert_equal(s.binary("MOD_SHAPE", s.scalar(a), s.scalar(b)), s.scalar(0), False, loc)


def _assert_ge(s: ShapeOps, a, b, loc):
    s.assert_equal(s.binary("MAX_SHAPE", s.scalar(a), s.scalar(b)), s.scalar(a), False, loc)


_ASSERT_FORMS = {Kind.EQ: _assert_eq, Kind.BROADCASTABLE: _assert_broadcastable,
                 Kind.DIVISIBLE: _assert_divisible, Kind.GE: _assert_ge}
