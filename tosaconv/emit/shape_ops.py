"""Dim expressions as TOSA 1.1 EXT-SHAPE operators, written as block records.

A symbolic ``.tosa`` computes every size that depends on an open symbol at
run time, from DIM of a graph input that carries the symbol. This module turns
a dim expression (:mod:`tosaconv.symbolic.expr`) into the records of the shape
operators that compute it, each an :class:`OpRecord` whose output is a
:class:`ShapeRecord` (no data: its value is computed):

- a symbol → ``DIM(input, axis)``; a constant ≥ 0 → ``CONST_SHAPE``;
- the polynomial ``Σ c·m`` → MUL_SHAPE for each monomial, ADD_SHAPE over the
  positive terms, then one SUB_SHAPE of the negative ones (so no intermediate
  is negative and no CONST_SHAPE holds a −1, which the tools read as unknown);
- floordiv, mod, min, max → DIV_FLOOR_SHAPE, MOD_SHAPE, MIN_SHAPE, MAX_SHAPE.

Each distinct expression is computed once (a cache by normal form), and a
vector of dims is one CONST_SHAPE when static, else a CONCAT_SHAPE of scalars.
The seed's helper ops map one to one (GET_DIM → DIM, INDEX_ADD → ADD_SHAPE,
INDEX_CONST → CONST_SHAPE...): their result types carry these expressions.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterable, Iterator

import numpy as np

from ..symbolic.expr import Expr, free_symbols, same, sym
from .errors import EmitError
from .records import OpRecord, ShapeRecord

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..symbolic.expr import Atom, Dim
    from .records import BlockRecord
    from .tensor_names import TensorNames

SYMBOL_PREFIX = "symbol "   # the location text of a DIM that names its input dim's symbol
_ATOM_OPS = {"floordiv": "DIV_FLOOR_SHAPE", "mod": "MOD_SHAPE", "min": "MIN_SHAPE", "max": "MAX_SHAPE"}


def symbol_sources(inputs: Iterable[Value], names: TensorNames) -> dict:
    """Symbol → ``(tensor name, axis)``: the first graph input dim that is exactly that symbol."""
    out: dict = {}
    for v in inputs:
        for axis, d in enumerate(getattr(v.type, "shape", ())):
            if isinstance(d, Expr) and len(free_symbols(d)) == 1:
                name = next(iter(free_symbols(d)))
                if name not in out and same(d, sym(name)):
                    out[name] = (names[v], axis)
    return out


class ShapeOps:
    """Appends shape-op records to ``block`` and remembers which expression each shape value holds."""

    def __init__(self, block: BlockRecord, names: TensorNames, sources: dict) -> None:
        self.block, self.names, self.sources = block, names, sources
        self.cache: dict = {}
        self.location = None

    def declare_symbols(self, inputs: Iterable[Value]) -> None:
        """One DIM per graph input dim that is an open symbol, located ``symbol NAME``: the file's record
        of the symbol's name (the reader names the dim after it, and ties dims that share it). The
        first DIM of each symbol is the one later sizes use."""
        for v in inputs:
            for axis, d in enumerate(getattr(v.type, "shape", ())):
                if isinstance(d, Expr) and len(free_symbols(d)) == 1:
                    name = next(iter(free_symbols(d)))
                    if same(d, sym(name)):
                        self.location = f"{SYMBOL_PREFIX}{name}"
                        value = self._op("DIM", [self.names[v]], 1, f"{self.names[v]}.{axis}", {"axis": axis})
                        self.cache.setdefault(("atom", next(iter(d.atoms())).key), value)

    def missing(self, dims: Iterable[Dim]) -> list:
        """The open symbols of ``dims`` that no graph input carries (sizes from data)."""
        found = set()
        for d in dims:
            found |= set(free_symbols(d))
        return sorted(found - set(self.sources))

    def vector(self, dims: Iterable[Dim], location: str) -> str:
        """A ``shape<len(dims)>`` value holding ``dims``."""
        self.location = location
        dims = list(dims)
        if all(isinstance(d, (int, np.integer)) for d in dims):
            return self._const([int(d) for d in dims])
        parts = [self.scalar(d) for d in dims]
        key = ("vector", tuple(parts))
        if key not in self.cache:
            self.cache[key] = self._op("CONCAT_SHAPE", parts, len(parts), "shape")
        return self.cache[key]

    def scalar(self, d: Dim) -> str:
        """A ``shape<1>`` value holding the dim ``d``."""
        if isinstance(d, (int, np.integer)):
            return self._const([int(d)])
        key = ("expr", d.key)
        if key not in self.cache:
            self.cache[key] = self._poly(d)
        return self.cache[key]

    @contextmanager
    def private(self) -> Iterator[None]:
        """Values computed inside are not shared with any other use. The reference model (tosa-tools
        2026.8) aborts when a shape value feeding an ASSERT_EQUAL_SHAPE has another consumer, so each
        operand of an assertion is computed afresh."""
        saved, self.cache = self.cache, {}
        try:
            yield
        finally:
            self.cache = saved

    def assert_equal(self, a: str, b: str, allow_broadcast: bool, location: str) -> None:
        fields = {"allow_broadcast": True} if allow_broadcast else {}
        self.block.ops.append(OpRecord("ASSERT_EQUAL_SHAPE", fields, [a, b], [], location))

    def binary(self, op: str, a: str, b: str) -> str:
        key = (op, a, b)
        if key not in self.cache:
            self.cache[key] = self._op(op, [a, b], 1, op.lower())
        return self.cache[key]

    # -- expressions ---------------------------------------------------------------------
    def _poly(self, d: Expr) -> str:
        pos, neg = [], []
        for mono, coeff in sorted(d.terms.items(), key=lambda t: (len(t[0]), str(t))):
            (pos if coeff > 0 else neg).append(self._term(mono, abs(coeff)))
        total = self._sum(pos) if pos else self._const([0])
        return self.binary("SUB_SHAPE", total, self._sum(neg)) if neg else total

    def _term(self, mono: tuple, coeff: int) -> str:
        if not mono:
            return self._const([coeff])
        value = None
        for atom, power in mono:
            a = self._atom(atom)
            for _ in range(power):
                value = a if value is None else self.binary("MUL_SHAPE", value, a)
        return value if coeff == 1 else self.binary("MUL_SHAPE", self._const([coeff]), value)

    def _sum(self, values: list) -> str:
        total = values[0]
        for v in values[1:]:
            total = self.binary("ADD_SHAPE", total, v)
        return total

    def _atom(self, atom: Atom) -> str:
        key = ("atom", atom.key)
        if key in self.cache:
            return self.cache[key]
        if atom.kind == "sym":
            value = self._dim(atom.args[0])
        else:
            if any(isinstance(a, int) and a < 0 for a in atom.args):
                raise EmitError(f"{atom} has a negative operand, which shape values cannot hold")
            value = self._op(_ATOM_OPS[atom.kind], [self.scalar(a) for a in atom.args], 1, atom.kind)
        self.cache[key] = value
        return value

    def _dim(self, name: str) -> str:
        if name not in self.sources:
            raise EmitError(f"size '{name}' is not a dim of any graph input (it comes from tensor data)")
        tensor, axis = self.sources[name]
        return self._op("DIM", [tensor], 1, f"{tensor}.{axis}", {"axis": axis})

    # -- records ---------------------------------------------------------------------------
    def _const(self, values: list) -> str:
        key = ("const", tuple(values))
        if key in self.cache:
            return self.cache[key]
        if any(v < 0 for v in values):
            raise EmitError(f"shape constant {values} has a negative entry")
        name = self.names.fresh("shape/" + "x".join(map(str, values)))
        data = np.asarray(values, dtype="<i8").view(np.uint8)
        self.block.shapes.append(ShapeRecord(name, len(values), data))
        self.block.ops.append(OpRecord("CONST_SHAPE", {}, [], [name], self.location))
        self.cache[key] = name
        return name

    def _op(self, op: str, inputs: list, rank: int, base: str, fields: dict | None = None) -> str:
        name = self.names.fresh(f"shape/{base}")
        self.block.shapes.append(ShapeRecord(name, rank, None))
        self.block.ops.append(OpRecord(op, fields or {}, list(inputs), [name], self.location))
        return name
