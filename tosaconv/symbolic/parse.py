"""Parse the printed form of a dimension expression back into a Dim.

The grammar is what :mod:`tosaconv.symbolic.expr` prints: integers, symbol
names (bare identifiers, possibly dotted, or double-quoted strings), ``+ - *``,
parentheses, and the calls ``floordiv(a, b)``, ``mod(a, b)``, ``min(a, b)``
and ``max(a, b)``.
"""
from __future__ import annotations

import re
from typing import Callable, Union

from .expr import Dim, add, dmax, dmin, floordiv, mod, mul, sub, sym

Token = tuple[str, Union[int, str]]   # ("int", 12), ("name", "batch"), ("sym", "x y"), ("op", "+")

_TOKEN = re.compile(r'\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_.]*)|("(?:[^"\\]|\\.)*")|(.))')
_CALLS: dict[str, Callable[[Dim, Dim], Dim]] = {"floordiv": floordiv, "mod": mod, "min": dmin, "max": dmax}


class DimSyntaxError(ValueError):
    """The text is not a dimension expression."""


def parse_dim(text: str) -> Dim:
    """Parse ``text`` (for example ``2*batch*seq + 1``) into a Dim."""
    tokens = _tokenize(text)
    value, pos = _parse_sum(tokens, 0)
    if pos != len(tokens):
        raise DimSyntaxError(f"unexpected {tokens[pos][1]!r} in dimension {text!r}")
    return value


def _tokenize(text: str) -> list[Token]:
    out: list[Token] = []
    for m in _TOKEN.finditer(text):
        num, name, quoted, other = m.groups()
        if num is not None:
            out.append(("int", int(num)))
        elif name is not None:
            out.append(("name", name))
        elif quoted is not None:
            out.append(("sym", re.sub(r"\\(.)", r"\1", quoted[1:-1])))
        elif other is not None and other.strip():
            out.append(("op", other))
    return out


def _parse_sum(tokens: list[Token], pos: int) -> tuple[Dim, int]:
    value, pos = _parse_product(tokens, pos)
    while pos < len(tokens) and tokens[pos] in (("op", "+"), ("op", "-")):
        op = tokens[pos][1]
        rhs, pos = _parse_product(tokens, pos + 1)
        value = add(value, rhs) if op == "+" else sub(value, rhs)
    return value, pos


def _parse_product(tokens: list[Token], pos: int) -> tuple[Dim, int]:
    value, pos = _parse_atom(tokens, pos)
    while pos < len(tokens) and tokens[pos] == ("op", "*"):
        rhs, pos = _parse_atom(tokens, pos + 1)
        value = mul(value, rhs)
    return value, pos


def _expect(tokens: list[Token], pos: int, op: str) -> int:
    if pos >= len(tokens) or tokens[pos] != ("op", op):
        raise DimSyntaxError(f"expected {op!r} in dimension expression")
    return pos + 1


def _parse_atom(tokens: list[Token], pos: int) -> tuple[Dim, int]:
    if pos >= len(tokens):
        raise DimSyntaxError("dimension expression ends too early")
    kind, val = tokens[pos]
    if isinstance(val, int):
        return val, pos + 1
    if kind == "sym":
        return sym(val), pos + 1
    if kind == "op" and val == "-":
        inner, pos = _parse_atom(tokens, pos + 1)
        return mul(-1, inner), pos
    if kind == "op" and val == "(":
        inner, pos = _parse_sum(tokens, pos + 1)
        return inner, _expect(tokens, pos, ")")
    if kind == "name" and val in _CALLS and pos + 1 < len(tokens) and tokens[pos + 1] == ("op", "("):
        a, pos = _parse_sum(tokens, pos + 2)
        pos = _expect(tokens, pos, ",")
        b, pos = _parse_sum(tokens, pos)
        return _CALLS[val](a, b), _expect(tokens, pos, ")")
    if kind == "name":
        return sym(val), pos + 1
    raise DimSyntaxError(f"unexpected {val!r} in dimension expression")
