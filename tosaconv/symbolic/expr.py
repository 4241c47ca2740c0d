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

import math
import numbers
import re
from typing import Callable, Iterable, Mapping, Optional, Union

from .bounds import INF as INF, InconclusiveDimension as InconclusiveDimension, bounds as bounds  # re-exported
from .bounds import decide_eq_or_none, decide_order

Dim = Union[int, "Expr"]
Monomial = tuple[tuple["Atom", int], ...]   # atoms and their powers, sorted by atom key
class Atom:
    """A leaf of a polynomial: a symbol or an irreducible operation."""

    __slots__ = ("kind", "args", "key")

    def __init__(self, kind: str, args: tuple[Dim, ...] | tuple[str]) -> None:
        self.kind = kind
        self.args = args
        self.key = kind + ":" + (repr(args[0]) if kind == "sym" else ",".join(_key(a) for a in args if not isinstance(a, str)))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Atom) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    def __str__(self) -> str:
        if self.kind == "sym":
            return format_symbol(str(self.args[0]))
        return f"{self.kind}({', '.join(str(a) for a in self.args)})"


_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")
_RESERVED = {"floordiv", "mod", "min", "max"}


def format_symbol(name: str) -> str:
    """A symbol name as printed: bare when it is a plain identifier, else quoted."""
    if _PLAIN_NAME.match(name) and name not in _RESERVED:
        return name
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _key(d: Dim) -> str:
    return str(d) if isinstance(d, int) else "(" + d.key + ")"


class Expr:
    """A non-constant polynomial with integer coefficients over atoms.

    ``terms`` maps a monomial (a sorted tuple of ``(atom, power)``) to its
    coefficient; the constant term uses the empty monomial.
    """

    __slots__ = ("terms", "key", "_hash", "_free", "_bounds")

    def __init__(self, terms: dict[Monomial, int]) -> None:
        self.terms = terms
        self.key = ";".join(f"{c}*{'.'.join(a.key + '^' + str(p) for a, p in m)}"
                            for m, c in sorted(terms.items(), key=_term_order))
        self._hash = hash(self.key)
        self._free: Optional[frozenset[str]] = None    # free_symbols, computed once (an Expr never changes)
        self._bounds: Optional[tuple[float, float]] = None   # bounds(), computed once

    # -- structure -----------------------------------------------------
    def atoms(self) -> set[Atom]:
        return {a for m in self.terms for a, _ in m}

    def free_symbols(self) -> frozenset[str]:
        if self._free is not None:
            return self._free
        out: set[str] = set()
        for a in self.atoms():
            out |= {str(a.args[0])} if a.kind == "sym" else set().union(*(free_symbols(x) for x in a.args if not isinstance(x, str)))
        self._free = frozenset(out)
        return self._free

    def subs(self, env: Mapping[str, Dim]) -> Dim:
        """Replace symbols by dims from ``env`` (names not in env stay)."""
        total: Dim = 0
        for mono, coeff in self.terms.items():
            term: Dim = coeff
            for atom, power in mono:
                value = _subs_atom(atom, env)
                for _ in range(power):
                    term = mul(term, value)
            total = add(total, term)
        return total

    # -- arithmetic ----------------------------------------------------
    def __add__(self, o: Dim) -> Dim: return add(self, o)
    def __radd__(self, o: Dim) -> Dim: return add(o, self)
    def __sub__(self, o: Dim) -> Dim: return add(self, mul(-1, o))
    def __rsub__(self, o: Dim) -> Dim: return add(o, mul(-1, self))
    def __mul__(self, o: Dim) -> Dim: return mul(self, o)
    def __rmul__(self, o: Dim) -> Dim: return mul(o, self)
    def __neg__(self) -> Dim: return mul(-1, self)
    def __floordiv__(self, o: Dim) -> Dim: return floordiv(self, o)
    def __rfloordiv__(self, o: Dim) -> Dim: return floordiv(o, self)
    def __mod__(self, o: Dim) -> Dim: return mod(self, o)
    def __rmod__(self, o: Dim) -> Dim: return mod(o, self)

    # -- equality is structural (never raises); orderings by bounds, or raise --
    def __eq__(self, o: object) -> bool:
        if isinstance(o, Expr):
            return self.key == o.key
        if isinstance(o, numbers.Integral):   # int, bool and numpy integers
            return False   # a normalized Expr is never a constant
        return NotImplemented

    def __ne__(self, o: object) -> bool:
        r = self.__eq__(o)
        return r if r is NotImplemented else not r

    def __lt__(self, o: Dim) -> bool: return decide_order(self, "<", o, sub(o, self), strict=True)
    def __le__(self, o: Dim) -> bool: return decide_order(self, "<=", o, sub(o, self), strict=False)
    def __gt__(self, o: Dim) -> bool: return decide_order(self, ">", o, sub(self, o), strict=True)
    def __ge__(self, o: Dim) -> bool: return decide_order(self, ">=", o, sub(self, o), strict=False)

    def __bool__(self) -> bool:
        raise InconclusiveDimension(f"the truth value of symbolic dim '{self}' is undefined")

    def __hash__(self) -> int:
        return self._hash

    def __int__(self) -> int:
        raise InconclusiveDimension(f"symbolic dim '{self}' has no integer value until it is bound")

    __index__ = __int__

    def __repr__(self) -> str:
        return f"Expr({self})"

    def __str__(self) -> str:
        parts = []
        for mono, coeff in sorted(self.terms.items(), key=_term_order):
            body = "*".join(str(a) if p == 1 else "*".join([str(a)] * p) for a, p in mono)
            mag = abs(coeff)
            text = body if (mag == 1 and body) else (f"{mag}*{body}" if body else str(mag))
            parts.append(("-" if coeff < 0 else "+", text))
        sign, first = parts[0]
        out = ("-" if sign == "-" else "") + first
        for sign, text in parts[1:]:
            out += f" {sign} {text}"
        return out


def _term_order(item: tuple[Monomial, int]) -> tuple[int, tuple[tuple[str, int], ...]]:
    mono, _ = item
    degree = sum(p for _, p in mono)
    return (-degree if mono else 1, tuple((a.key, p) for a, p in mono))


def _subs_atom(atom: Atom, env: Mapping[str, Dim]) -> Dim:
    if atom.kind == "sym":
        name = str(atom.args[0])
        return env[name] if name in env else Expr({((atom, 1),): 1})
    args = [a.subs(env) if isinstance(a, Expr) else a for a in atom.args if not isinstance(a, str)]
    return _ATOM_OPS[atom.kind](*args)


# -- constructors ---------------------------------------------------------

def sym(name: str) -> Expr:
    """The symbol ``name`` as an expression."""
    return Expr({((Atom("sym", (name,)), 1),): 1})


def _poly(d: Dim) -> dict[Monomial, int]:
    if isinstance(d, Expr):
        return d.terms
    if isinstance(d, (int,)) and not isinstance(d, bool):
        return {(): int(d)} if d else {}
    if hasattr(d, "__index__"):
        return _poly(int(d))
    raise TypeError(f"not a dimension: {d!r}")


def _make(terms: dict[Monomial, int]) -> Dim:
    terms = {m: c for m, c in terms.items() if c}
    if not terms:
        return 0
    if list(terms) == [()]:
        return int(terms[()])
    return Expr(terms)


# Sums and products of expressions already computed, by operands: a converter or a rule meets the same
# symbolic sizes again and again (every conv of a net on [N, C, H, W]), and an Expr never changes, so the
# result can be shared.
_KNOWN: dict[tuple[str, Dim, Dim], Dim] = {}
_MAX_KNOWN = 1 << 16
_DIM_TYPES = (int, Expr)   # exact types only: a float or a bool operand is left to _poly (which refuses a float)


def _known(op: str, a: Dim, b: Dim, compute: Callable[[Dim, Dim], Dim]) -> Dim:
    key = (op, a, b)
    value = _KNOWN.get(key)
    if value is None:
        if len(_KNOWN) >= _MAX_KNOWN:
            _KNOWN.clear()
        value = _KNOWN[key] = compute(a, b)
    return value


def add(a: Dim, b: Dim) -> Dim:
    if type(a) is int and type(b) is int:   # static dims (most of them): no polynomial to build
        return a + b
    if type(a) in _DIM_TYPES and type(b) in _DIM_TYPES:
        return _known("+", a, b, _add)
    return _add(a, b)


def _add(a: Dim, b: Dim) -> Dim:
    out = dict(_poly(a))
    for m, c in _poly(b).items():
        out[m] = out.get(m, 0) + c
    return _make(out)


def sub(a: Dim, b: Dim) -> Dim:
    if type(a) is int and type(b) is int:
        return a - b
    return add(a, mul(-1, b))


def _mono_mul(m1: Monomial, m2: Monomial) -> Monomial:
    powers: dict[Atom, int] = {}
    for atom, p in m1 + m2:
        powers[atom] = powers.get(atom, 0) + p
    return tuple(sorted(powers.items(), key=lambda ap: ap[0].key))


def mul(a: Dim, b: Dim) -> Dim:
    if type(a) is int and type(b) is int:
        return a * b
    if type(a) in _DIM_TYPES and type(b) in _DIM_TYPES:
        return _known("*", a, b, _mul)
    return _mul(a, b)


def _mul(a: Dim, b: Dim) -> Dim:
    out: dict[Monomial, int] = {}
    for m1, c1 in _poly(a).items():
        for m2, c2 in _poly(b).items():
            m = _mono_mul(m1, m2)
            out[m] = out.get(m, 0) + c1 * c2
    return _make(out)


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
        return add(q, _atom_expr("floordiv", (r, b)))
    if isinstance(a, Expr) and decide_eq_or_none(sub(a, b)) is True:
        return 1
    quotient = _exact_quotient(a, b)
    if quotient is not None:
        return quotient
    return _atom_expr("floordiv", (a, b))


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
        return _atom_expr("mod", (r, b))
    if _exact_quotient(a, b) is not None:
        return 0
    return _atom_expr("mod", (a, b))


def dmin(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    d = sub(b, a)
    lo, hi = bounds(d)
    if lo >= 0:
        return a
    if hi <= 0:
        return b
    return _atom_expr("min", tuple(sorted((a, b), key=_key)))


def dmax(a: Dim, b: Dim) -> Dim:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    d = sub(b, a)
    lo, hi = bounds(d)
    if lo >= 0:
        return b
    if hi <= 0:
        return a
    return _atom_expr("max", tuple(sorted((a, b), key=_key)))


_ATOM_OPS: dict[str, Callable[[Dim, Dim], Dim]] = {"floordiv": floordiv, "mod": mod, "min": dmin, "max": dmax}


def _atom_expr(kind: str, args: tuple[Dim, ...]) -> Expr:
    return Expr({((Atom(kind, args), 1),): 1})


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
