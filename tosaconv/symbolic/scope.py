"""The symbol scope: the symbol table and three-valued decisions.

``==`` between dims is structural (see :mod:`.expr`); the semantic question
is asked here, ``prove(a, Rel.EQ, b)`` (or ``scope.prove``), which gives
:data:`Decision.YES`, ``NO`` or ``UNKNOWN``; ``proven`` is its YES test.
The scope also knows each symbol's origin (which tensor and axis or which
op made it) and the strength of what is known about it: ``Exact``
symbols come from inputs and denote true sizes, ``UpperBound`` symbols come
from data-dependent ops that are known not to exceed a bound, and ``Unknown``
ones carry no useful bound (seed 003).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional

from .expr import Dim, bounds, sub, sym
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
    EXACT = "Exact"
    UPPER_BOUND = "UpperBound"
    UNKNOWN = "Unknown"


@dataclass(frozen=True)
class SymbolInfo:
    """One symbol: where it came from and how much is known about it.

    ``origin`` is human text such as ``input 'input_ids' axis 1`` or
    ``NonZero 'nz' output axis 1``; ``bound`` is the upper bound expression for
    an UpperBound symbol.
    """

    name: str
    origin: str
    kind: ExtentKind = ExtentKind.EXACT
    bound: Optional[Dim] = None
    input_name: Optional[str] = None
    axis: Optional[int] = None


@dataclass
class Scope:
    """Symbol table plus the decision procedure over dims."""

    symbols: dict = field(default_factory=dict)

    def declare(self, info: SymbolInfo) -> Dim:
        """Add a symbol (idempotent for the same name) and return it as a dim."""
        self.symbols.setdefault(info.name, info)
        return sym(info.name)

    def fresh_name(self, base: str) -> str:
        """A symbol name derived from ``base`` that is not taken yet."""
        return unused_name(base, self.symbols, "#")

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


def _rel_eq(lo, hi):
    return (lo == 0 and hi == 0), (lo > 0 or hi < 0)


def _rel_ne(lo, hi):
    yes, no = _rel_eq(lo, hi)
    return no, yes


_REL_TABLE = {
    Rel.EQ: _rel_eq,
    Rel.NE: _rel_ne,
    Rel.LT: lambda lo, hi: (hi < 0, lo >= 0),
    Rel.LE: lambda lo, hi: (hi <= 0, lo > 0),
    Rel.GT: lambda lo, hi: (lo > 0, hi <= 0),
    Rel.GE: lambda lo, hi: (lo >= 0, hi < 0),
}
