"""Symbolic dims as integer polynomials: atoms, :class:`Expr`, and the sum and product that normalize.

The algebra and its rules are described in :mod:`tosaconv.symbolic.expr`, which is the module to import
dims from. Here is the polynomial part: :class:`Atom` (a symbol, or an irreducible floordiv, mod, min or
max), :class:`Expr` and the constructors that keep every expression in normal form. The non-polynomial
operations live in :mod:`.division` and are found through :data:`ATOM_OPS`, which that module fills when
it is imported (``Expr``'s ``//`` and ``%`` and substitution into an atom call them), so this module
imports nothing of them and the two form no import cycle.
"""
from __future__ import annotations

import importlib
import numbers
import re
from typing import Callable, Mapping, Optional, Union

from .bounds import InconclusiveDimension, decide_order

Dim = Union[int, "Expr"]
Monomial = tuple[tuple["Atom", int], ...]   # atoms and their powers, sorted by atom key

# The non-polynomial operations by atom kind ("floordiv", "mod", "min", "max"), registered by .division.
ATOM_OPS: dict[str, Callable[[Dim, Dim], Dim]] = {}


def atom_op(kind: str) -> Callable[[Dim, Dim], Dim]:
    """The operation of atom ``kind`` (importing :mod:`.division`, which registers them, on first use)."""
    if kind not in ATOM_OPS:
        importlib.import_module(".division", __package__)
    return ATOM_OPS[kind]


def atom_expr(kind: str, args: tuple[Dim, ...]) -> Expr:
    """The expression that is the one irreducible atom ``kind(args)``."""
    return Expr({((Atom(kind, args), 1),): 1})


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
            if a.kind == "sym":
                out.add(str(a.args[0]))
            else:
                out.update(*(x.free_symbols() for x in a.args if isinstance(x, Expr)))
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
    def __floordiv__(self, o: Dim) -> Dim: return atom_op("floordiv")(self, o)
    def __rfloordiv__(self, o: Dim) -> Dim: return atom_op("floordiv")(o, self)
    def __mod__(self, o: Dim) -> Dim: return atom_op("mod")(self, o)
    def __rmod__(self, o: Dim) -> Dim: return atom_op("mod")(o, self)

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
    return atom_op(atom.kind)(*args)


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
