"""The non-polynomial operations on symbolic dims: floordiv, mod, min and max.

Each folds what it can (a constant, a divisible part, an answer the interval bounds decide) and
leaves the rest as an irreducible atom of :mod:`.poly`. Importing this module registers the four
in :data:`.poly.ATOM_OPS`, where ``Expr``'s ``//`` and ``%`` find them; import them from
:mod:`tosaconv.symbolic.expr`.
"""
from __future__ import annotations

import math
from typing import Optional

from .bounds import bounds, decide_eq_or_none
from .poly import ATOM_OPS, Dim, Expr, Monomial, _key, _make, _poly, add, atom_expr, mul, sub


def _split_divisible(a: Dim, d: int) -> tuple[Dim, Dim]:
    """Split ``a`` into (quotient of the terms divisible by d, remainder terms)."""
    q: dict[Monomial, int] = {}
    r: dict[Monomial, int] = {}
    for m, c in _poly(a).items():
        if c % d == 0:
            q[m] = c // d
        else:
            r[m] = c
    return _make(q), _make(r)


def floordiv(a: Dim, b: Dim) -> Dim:
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("floordiv of a dimension by zero")
        if isinstance(a, int):
            return a // b
        if b < 0:
            return floordiv(mul(-1, a), -b)
        g = _content_gcd(a, b)
        if g > 1:
            return floordiv(_scale_down(a, g), b // g)
        q, r = _split_divisible(a, b)
        if isinstance(r, int):
            return add(q, r // b)
        lo, hi = bounds(r)
        if lo >= 0 and hi < b:
            return q
        return add(q, atom_expr("floordiv", (r, b)))
    if isinstance(a, Expr) and decide_eq_or_none(sub(a, b)) is True:
        return 1
    quotient = _exact_quotient(a, b)
    if quotient is not None:
        return quotient
    return atom_expr("floordiv", (a, b))


def _content_gcd(a: Dim, d: int) -> int:
    """gcd of ``d`` and every coefficient of ``a``."""
    g = abs(d)
    for c in _poly(a).values():
        g = math.gcd(g, c)
    return g


def _scale_down(a: Dim, g: int) -> Dim:
    return _make({m: c // g for m, c in _poly(a).items()})


def _exact_quotient(a: Dim, b: Dim) -> Optional[Dim]:
    """``a / b`` when b is a single monomial dividing every term of a."""
    terms = _poly(b)
    if len(terms) != 1:
        return None
    (bm, bc), = terms.items()
    out: dict[Monomial, int] = {}
    for m, c in _poly(a).items():
        powers = dict(m)
        for atom, p in bm:
            if powers.get(atom, 0) < p:
                return None
            powers[atom] -= p
        if c % bc:
            return None
        key = tuple(sorted(((x, p) for x, p in powers.items() if p), key=lambda ap: ap[0].key))
        out[key] = out.get(key, 0) + c // bc
    return _make(out)


def mod(a: Dim, b: Dim) -> Dim:
    if isinstance(b, int):
        if b == 0:
            raise ZeroDivisionError("mod of a dimension by zero")
        if isinstance(a, int):
            return a % b
        g = _content_gcd(a, abs(b))
        if g > 1 and b > 0:
            return mul(g, mod(_scale_down(a, g), b // g))
        _, r = _split_divisible(a, abs(b))
        if isinstance(r, int):
            return r % b
        lo, hi = bounds(r)
        if b > 0 and lo >= 0 and hi < b:
            return r
        return atom_expr("mod", (r, b))
    if _exact_quotient(a, b) is not None:
        return 0
    return atom_expr("mod", (a, b))


def dmin(a: Dim, b: Dim) -> Dim:
    return _extreme("min", a, b)


def dmax(a: Dim, b: Dim) -> Dim:
    return _extreme("max", a, b)


def _extreme(kind: str, a: Dim, b: Dim) -> Dim:
    """``min`` or ``max`` of two dims: folded when both are numbers or the bounds of ``b - a`` order them,
    else the atom ``kind(a, b)`` with its arguments in key order (so min(a, b) and min(b, a) are one)."""
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b) if kind == "min" else max(a, b)
    lo, hi = bounds(sub(b, a))
    if lo >= 0:        # a <= b
        return a if kind == "min" else b
    if hi <= 0:        # b <= a
        return b if kind == "min" else a
    return atom_expr(kind, tuple(sorted((a, b), key=_key)))


ATOM_OPS.update(floordiv=floordiv, mod=mod, min=dmin, max=dmax)
