"""Interval bounds of symbolic dims over symbol values >= 1, and the orderings they decide.

:func:`bounds` gives an :class:`~tosaconv.symbolic.expr.Expr` its interval (computed once per
expression); ``<``, ``<=``, ``>``, ``>=`` of dims ask :func:`decide_order`, which raises
:class:`InconclusiveDimension` when the interval cannot decide (see :mod:`tosaconv.symbolic.expr`).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from .expr import Atom, Dim, Expr

INF = math.inf


class InconclusiveDimension(Exception):
    """A comparison between symbolic dims whose answer depends on the bindings."""


def bounds(d: Dim) -> tuple[float, float]:
    """Interval ``(lo, hi)`` of ``d`` over all symbol values >= 1."""
    if isinstance(d, int):
        return (d, d)
    if d._bounds is None:      # an Expr never changes: its interval is computed once
        d._bounds = _expr_bounds(d)
    return d._bounds


def _expr_bounds(d: "Expr") -> tuple[float, float]:
    lo_total: float = 0
    hi_total: float = 0
    for mono, coeff in d.terms.items():
        lo: float = 1
        hi: float = 1
        for atom, p in mono:
            alo, ahi = _atom_bounds(atom)
            for _ in range(p):
                lo, hi = _imul((lo, hi), (alo, ahi))
        lo, hi = _imul((lo, hi), (coeff, coeff))
        lo_total, hi_total = lo_total + lo, hi_total + hi
    return lo_total, hi_total


def _imul(x: tuple[float, float], y: tuple[float, float]) -> tuple[float, float]:
    prods = []
    for p in x:
        for q in y:
            prods.append(0 if (p == 0 or q == 0) else p * q)
    return min(prods), max(prods)


def _atom_bounds(atom: Atom) -> tuple[float, float]:
    if atom.kind == "sym":
        return (1, INF)
    a, b = (x for x in atom.args if not isinstance(x, str))
    (alo, ahi), (blo, bhi) = bounds(a), bounds(b)
    if atom.kind == "min":
        return (min(alo, blo), min(ahi, bhi))
    if atom.kind == "max":
        return (max(alo, blo), max(ahi, bhi))
    if atom.kind == "mod" and isinstance(b, int) and b > 0:
        return (0, b - 1)
    if atom.kind == "floordiv" and isinstance(b, int) and b > 0:
        return (math.floor(alo / b) if alo != -INF else -INF, math.floor(ahi / b) if ahi != INF else INF)
    if atom.kind == "floordiv" and blo >= 1 and alo >= 0:
        return (0, ahi)
    return (-INF, INF)


def decide_eq_or_none(d: Dim) -> Optional[bool]:
    """False when the interval of ``d`` excludes 0 (True for a plain 0), None when it cannot tell."""
    if isinstance(d, int):
        return d == 0
    lo, hi = bounds(d)
    if lo > 0 or hi < 0:
        return False
    return None


def decide_order(a: "Expr", rel: str, b: Dim, d: Dim, strict: bool) -> bool:
    """``a rel b``, where it holds exactly when ``d`` > 0 (``strict``) or ``d`` >= 0; raise when undecidable."""
    lo, hi = bounds(d)
    if (lo > 0) if strict else (lo >= 0):
        return True
    if (hi <= 0) if strict else (hi < 0):
        return False
    raise InconclusiveDimension(f"cannot decide whether {a} {rel} {b} before the symbols are bound")
