"""Symbolic dimension expressions in a closed, normalized algebra.

A dimension is a plain ``int`` or an :class:`Expr`. Expressions are integer
polynomials over *atoms*: symbols (``batch``, ``input_ids.1``) and the
non-polynomial operations floordiv, mod, min and max. Every constructor
normalizes, so ``2*seq`` and ``seq+seq`` are the same object structurally and
print the same, and an expression that folds to a constant comes back as a
plain ``int``. Symbols are >= 1.

Comparisons follow jax's symbolic shapes. ``==`` and ``!=`` are *structural*:
two dims are equal when their normal forms are the same (so an Expr never
equals an ``int``), they never raise, and they agree with ``__hash__``, so
dims work as dict keys, in ``in`` tests and in tuples of shapes. Structural
inequality is not a proof that two dims differ (``a`` and ``b`` may be bound
to the same value): code that needs the semantic answer asks
:func:`tosaconv.symbolic.scope.prove` (YES / NO / UNKNOWN) and handles
UNKNOWN on purpose, by recording a constraint or refusing. The orderings
``<``, ``<=``, ``>``, ``>=`` (and so ``min``, ``max`` and ``sorted`` on
dims) are decided by interval bounds over symbols >= 1; when the bounds
cannot decide them they raise :class:`InconclusiveDimension`, which the
importers report as a shape error (exit 4) naming the op. ``bool()``,
``int()`` and ``range()`` of a symbolic dim raise the same error.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from .bounds import INF as INF, InconclusiveDimension as InconclusiveDimension, bounds as bounds  # re-exported
from .division import dmax as dmax, dmin as dmin, floordiv as floordiv, mod as mod   # re-exported
from .poly import Atom as Atom, Dim as Dim, Expr as Expr, Monomial as Monomial   # re-exported
from .poly import add as add, format_symbol as format_symbol, mul as mul, sub as sub, sym as sym   # re-exported


# -- helpers over Dim -----------------------------------------------------

def is_static(d: Dim) -> bool:
    return isinstance(d, int)


def free_symbols(d: Dim) -> frozenset[str]:
    return d.free_symbols() if isinstance(d, Expr) else frozenset()


def subs(d: Dim, env: Mapping[str, Dim]) -> Dim:
    return d.subs(env) if isinstance(d, Expr) else d


def same(a: Dim, b: Dim) -> bool:
    """Structural identity: True only when a and b are the same normal form."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return isinstance(a, Expr) and isinstance(b, Expr) and a.key == b.key


def dim_str(d: Dim) -> str:
    return str(d)


def product(dims: Iterable[Dim]) -> Dim:
    out: Dim = 1
    for d in dims:
        out = mul(out, d)
    return out
