"""The symbol scope: the symbol table and three-valued decisions.

``==`` between dims is structural (see :mod:`.expr`); the semantic question
is asked here, ``prove(a, Rel.EQ, b)`` (or ``scope.prove``), which gives
:data:`Decision.YES`, ``NO`` or ``UNKNOWN``; ``proven`` is its YES test.
The scope also knows each symbol's origin (which tensor and axis or which
op made it) and the strength of what is known about it: ``Exact``
symbols denote true sizes, ``UpperBound`` symbols only a size the true one
does not exceed, and ``Unknown`` ones nothing useful (seed 003). Whether a
size is *data-dependent* (known only when the model runs, like NonZero's
count or a value EXTRACT_DIM reads) is a separate flag: NonZero's count is
Exact and data-dependent. :meth:`Scope.extent_kind` gives the guarantee of a
whole dim (its weakest symbol), which passes and decay rules check against
what they need (:func:`satisfies`).
"""
from __future__ import annotations

import enum
from dataclasses import field

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Callable, Optional

from .expr import Dim, bounds, free_symbols, sub, sym
from .names import unused_name


class Decision(enum.Enum):
    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"


class Rel(enum.Enum):
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="


class ExtentKind(enum.Enum):
    __hash__ = object.__hash__   # a member is its own identity; Enum's hash is a Python call
    EXACT = "Exact"
    UPPER_BOUND = "UpperBound"
    UNKNOWN = "Unknown"


_STRENGTH = {ExtentKind.EXACT: 2, ExtentKind.UPPER_BOUND: 1, ExtentKind.UNKNOWN: 0}


def satisfies(have: ExtentKind, need: ExtentKind) -> bool:
    """Whether a ``have`` guarantee is at least the ``need`` one (Exact > UpperBound > Unknown)."""
    return _STRENGTH[have] >= _STRENGTH[need]


@dataclass(frozen=True)
class SymbolInfo:
    """One symbol: where it came from and how much is known about it.

    ``origin`` is human text such as ``input 'input_ids' axis 1`` or
    ``NonZero 'nz' output axis 1``; ``bound`` is an upper bound expression (the
    only thing an UpperBound symbol promises; for an Exact one, extra knowledge).
    ``data_dependent``: the value is only known when the model runs; binding
    it is an assumption the run checks.
    """

    name: str
    origin: str
    kind: ExtentKind = ExtentKind.EXACT
    bound: Optional[Dim] = None
    input_name: Optional[str] = None
    axis: Optional[int] = None
    data_dependent: bool = False


@dataclass
class Scope:
    """Symbol table plus the decision procedure over dims."""

    symbols: dict[str, SymbolInfo] = field(default_factory=dict)

    def declare(self, info: SymbolInfo) -> Dim:
        """Add a symbol (idempotent for the same name) and return it as a dim."""
        self.symbols.setdefault(info.name, info)
        return sym(info.name)

    def fresh_name(self, base: str) -> str:
        """A symbol name derived from ``base`` that is not taken yet."""
        return unused_name(base, self.symbols, "#")

    def extent_kind(self, d: Dim) -> ExtentKind:
        """The guarantee of dim ``d``: the weakest of its symbols' (a constant, or an undeclared symbol, is Exact)."""
        kinds = [self.symbols[s].kind for s in free_symbols(d) if s in self.symbols]
        return min(kinds, key=_STRENGTH.__getitem__, default=ExtentKind.EXACT)

    def prove(self, a: Dim, rel: Rel, b: Dim) -> Decision:
        """Decide ``a rel b`` for every binding of the symbols (all >= 1)."""
        return prove(a, rel, b)


def prove(a: Dim, rel: Rel, b: Dim) -> Decision:
    """Decide ``a rel b`` for every binding of the symbols (all >= 1): YES, NO or UNKNOWN."""
    lo, hi = bounds(sub(a, b))
    yes, no = _REL_TABLE[rel](lo, hi)
    if yes:
        return Decision.YES
    if no:
        return Decision.NO
    return Decision.UNKNOWN


def proven(a: Dim, rel: Rel, b: Dim) -> bool:
    """Whether ``a rel b`` holds for every binding (UNKNOWN counts as not proven)."""
    return prove(a, rel, b) is Decision.YES


def _rel_eq(lo: float, hi: float) -> tuple[bool, bool]:
    return (lo == 0 and hi == 0), (lo > 0 or hi < 0)


def _rel_ne(lo: float, hi: float) -> tuple[bool, bool]:
    yes, no = _rel_eq(lo, hi)
    return no, yes


_REL_TABLE: dict[Rel, Callable[[float, float], tuple[bool, bool]]] = {
    Rel.EQ: _rel_eq,
    Rel.NE: _rel_ne,
    Rel.LT: lambda lo, hi: (hi < 0, lo >= 0),
    Rel.LE: lambda lo, hi: (hi <= 0, lo > 0),
    Rel.GT: lambda lo, hi: (lo > 0, hi <= 0),
    Rel.GE: lambda lo, hi: (lo >= 0, hi < 0),
}
