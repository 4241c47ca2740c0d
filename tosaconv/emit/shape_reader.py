"""Reading TOSA 1.1-draft EXT-SHAPE operators back into the IR's symbols and helper ops.

A shape value of the file becomes a list of entries, one per element: an
``int`` when it is known, else an Index value of the IR. The operators map
back onto the seed's helper ops (the inverse of :mod:`.shape_ops`): DIM →
GET_DIM, CONST_SHAPE → constants, ADD/SUB/MUL/DIV_FLOOR/MOD/MIN/MAX_SHAPE →
INDEX_ADD... (DIV_CEIL_SHAPE as ``floordiv(a + b - 1, b)``), CONCAT_SHAPE and
SLICE_SHAPE rearrange entries, and ASSERT_EQUAL_SHAPE records a constraint in
the ledger (equal, or broadcastable with ``allow_broadcast``). A RESHAPE,
SLICE, TILE or PAD whose shape operand is computed becomes RESHAPE with
``shape_symbols``, DYN_SLICE, DYN_TILE or DYN_PAD, which decay when the
symbols are bound. A −1 dim of a graph input is a symbol: named by a DIM
located ``symbol NAME`` (what our writer records) or else ``input.axis``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
import numpy as np

from ..ir import attrs as A
from ..ir.location import Location
from ..ir.ops import Op
from ..symbolic.constraints import ConstraintFailed, Kind, Provenance
from ..symbolic.expr import Expr, dmax, dmin, floordiv, mod, same
from ..symbolic.scope import SymbolInfo
from .errors import ReadError
from .shape_ops import SYMBOL_PREFIX

if TYPE_CHECKING:
    from ..ir.builder import Builder
    from ..ir.graph import Graph, Value
    from ..symbolic.expr import Dim
    from .reader import _Lifting
    from .records import BlockRecord, OpRecord

SHAPE_OPS = frozenset({"DIM", "ADD_SHAPE", "SUB_SHAPE", "MUL_SHAPE", "DIV_FLOOR_SHAPE", "DIV_CEIL_SHAPE",
                       "MOD_SHAPE", "MIN_SHAPE", "MAX_SHAPE", "CONCAT_SHAPE", "SLICE_SHAPE",
                       "ASSERT_EQUAL_SHAPE"})
_INT_FNS = {"ADD_SHAPE": lambda a, b: a + b, "SUB_SHAPE": lambda a, b: a - b, "MUL_SHAPE": lambda a, b: a * b,
            "DIV_FLOOR_SHAPE": floordiv, "MOD_SHAPE": mod, "MIN_SHAPE": dmin, "MAX_SHAPE": dmax}
_INDEX_OPS = {"ADD_SHAPE": Op.INDEX_ADD, "SUB_SHAPE": Op.INDEX_SUB, "MUL_SHAPE": Op.INDEX_MUL,
              "DIV_FLOOR_SHAPE": Op.INDEX_FLOORDIV, "MOD_SHAPE": Op.INDEX_MOD, "MIN_SHAPE": Op.INDEX_MIN,
              "MAX_SHAPE": Op.INDEX_MAX}


def symbol_names(block: BlockRecord) -> dict:
    """``(input name, axis) -> symbol name`` from the DIM ops located ``symbol NAME``."""
    out = {}
    for op in block.ops:
        if op.op == "DIM" and (op.location or "").startswith(SYMBOL_PREFIX) and op.inputs:
            out.setdefault((op.inputs[0], int(op.fields.get("axis", 0))), op.location[len(SYMBOL_PREFIX):])
    return out


def input_dim(graph: Graph, names: dict, input_name: str, axis: int) -> Dim:
    """The symbol of a −1 dim of a graph input."""
    name = names.get((input_name, axis), f"{input_name}.{axis}")
    origin = f"input '{input_name}' axis {axis} (-1 in the .tosa)"
    return graph.scope.declare(SymbolInfo(name, origin, input_name=input_name, axis=axis))


class ShapeValues:
    """The file's shape values as lists of entries (int or Index value), and the ops that make them."""

    def __init__(self, lifting: _Lifting) -> None:
        self.lifting = lifting
        self.values: dict = {}

    def entries(self, name: str, what: str) -> list:
        if name in self.values:
            return self.values[name]
        if name in self.lifting.consts:
            return [int(v) for v in np.asarray(self.lifting.consts[name]).reshape(-1)]
        raise ReadError(f"{what} '{name}' is not a shape value defined before its use")

    def is_dynamic(self, name: str) -> bool:
        return name in self.values and any(not isinstance(e, int) for e in self.values[name])

    def lift(self, op: OpRecord) -> None:
        b = self.lifting.builder
        with b.at(Location(op.op, op.location or (op.outputs[0] if op.outputs else op.op), source="tosa")):
            if op.op == "ASSERT_EQUAL_SHAPE":
                return self._assert(op)
            self.values[op.outputs[0]] = self._compute(op)

    def _compute(self, op: OpRecord) -> list:
        ins = op.inputs
        if op.op == "DIM":
            return [self._dim(op)]
        if op.op == "CONCAT_SHAPE":
            return [e for name in ins for e in self.entries(name, "CONCAT_SHAPE input")]
        if op.op == "SLICE_SHAPE":
            return self._slice(op)
        a, b = (self.entries(n, f"{op.op} input") for n in ins[:2])
        if len(a) != len(b):
            raise ReadError(f"{op.op} '{op.outputs[0]}' has inputs of lengths {len(a)} and {len(b)}")
        if op.op == "DIV_CEIL_SHAPE":   # ceil(a / b) = floor((a + b - 1) / b)
            top = [self._arith("SUB_SHAPE", self._arith("ADD_SHAPE", x, y), 1) for x, y in zip(a, b)]
            return [self._arith("DIV_FLOOR_SHAPE", t, y) for t, y in zip(top, b)]
        return [self._arith(op.op, x, y) for x, y in zip(a, b)]

    def _dim(self, op: OpRecord) -> Dim | Value:
        x = self.lifting._value(op.inputs[0], "DIM input")
        axis = int(op.fields.get("axis", 0))
        if not 0 <= axis < x.type.rank:
            raise ReadError(f"DIM '{op.outputs[0]}' reads axis {axis} of a rank {x.type.rank} tensor")
        d = x.type.shape[axis]
        return d if isinstance(d, int) else self.lifting.builder.get_dim(x, axis)

    def _slice(self, op: OpRecord) -> list:
        entries = self.entries(op.inputs[0], "SLICE_SHAPE input")
        start, size = (int(np.asarray(self.lifting._param(op, role, n)).reshape(-1)[0])
                       for role, n in zip(("start", "size"), op.inputs[1:3]))
        if start < 0 or size <= 0 or start + size > len(entries):
            raise ReadError(f"SLICE_SHAPE '{op.outputs[0]}' takes {size} entries from {start} of {len(entries)}")
        return entries[start:start + size]

    def _arith(self, name: str, a: int | Value, b: int | Value) -> int | Value:
        if isinstance(a, int) and isinstance(b, int):
            return int(_INT_FNS[name](a, b))
        bld = self.lifting.builder
        a = bld.index(a) if isinstance(a, int) else a
        b = bld.index(b) if isinstance(b, int) else b
        return bld.emit(_INDEX_OPS[name], a, b)

    def _assert(self, op: OpRecord) -> None:
        a, b = (self.entries(n, "ASSERT_EQUAL_SHAPE input") for n in op.inputs[:2])
        kind = Kind.BROADCASTABLE if op.fields.get("allow_broadcast") else Kind.EQ
        graph = self.lifting.graph
        why = Provenance("ASSERT_EQUAL_SHAPE", op.location or "?", "asserted in the .tosa file")
        for x, y in zip(a, b):
            dx, dy = (e if isinstance(e, int) else e.type.value for e in (x, y))
            kind_here, dx, dy = _as_ge(kind, dx, dy)
            try:
                graph.ledger.require(kind_here, dx, dy, why, graph.scope)
            except ConstraintFailed:
                raise ReadError(f"ASSERT_EQUAL_SHAPE at {op.location}: {dx} and {dy} can never meet it") from None


def _as_ge(kind: Kind, a: Dim, b: Dim) -> tuple:
    """``max(x, y) == x`` (how the writer asserts ``x >= y``) read back as ``x >= y``."""
    if kind is Kind.EQ and isinstance(a, Expr) and len(a.terms) == 1:
        (mono, coeff), = a.terms.items()
        if coeff == 1 and len(mono) == 1 and mono[0][1] == 1 and mono[0][0].kind == "max":
            x, y = mono[0][0].args
            if same(x, b) or same(y, b):
                return Kind.GE, b, (y if same(x, b) else x)
    return kind, a, b


def dynamic_layout(lifting: _Lifting, op: OpRecord, n: int) -> None:
    """RESHAPE/SLICE/TILE/PAD with computed shape operands as the IR's RESHAPE with shape_symbols,
    DYN_SLICE, DYN_TILE or DYN_PAD; ``n`` data operands come first."""
    shapes = lifting.shape_values
    x = lifting._value(op.inputs[0], f"operand of {op.op}")
    entries = [shapes.entries(name, f"{op.op} shape operand") for name in op.inputs[n:n + _SHAPE_COUNT[op.op]]]
    b = lifting.builder
    with b.at(Location(op.op, op.location or op.outputs[0], source="tosa")):
        if op.op == "RESHAPE":
            new_shape = tuple(e if isinstance(e, int) else -1 for e in entries[0])
            symbols = [e for e in entries[0] if not isinstance(e, int)]
            result = b.emit(Op.RESHAPE, x, *symbols, attrs=A.ReshapeAttrs(new_shape), name=op.outputs[0])
        elif op.op == "PAD":
            pad_const = lifting._param(op, "pad_const", op.inputs[n + 1])
            attrs = A.DynPadAttrs("constant", float(np.asarray(pad_const).reshape(-1)[0]))
            result = b.emit(Op.DYN_PAD, x, *_indices(b, entries[0]), attrs=attrs, name=op.outputs[0])
        else:
            dyn = Op.DYN_SLICE if op.op == "SLICE" else Op.DYN_TILE
            flat = [e for part in entries for e in part]
            result = b.emit(dyn, x, *_indices(b, flat), name=op.outputs[0])
    lifting.values[op.outputs[0]] = result


_SHAPE_COUNT = {"RESHAPE": 1, "PAD": 1, "SLICE": 2, "TILE": 1}
DYNAMIC_LAYOUT_OPS = frozenset(_SHAPE_COUNT)


def _indices(b: Builder, entries: list) -> list:
    return [b.index(e) if isinstance(e, int) else e for e in entries]
