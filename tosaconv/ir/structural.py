"""Structural keys: what an op's shape rule and checks read of it, as a hashable value.

Shape rules and the verifier's per-op checks are pure functions of an op's
kind, its attribute values and its operand (and result) types. Two ops with
equal keys get the same answers, so a long chain of ``ADD`` on ``[batch, 16]``
needs one answer, not one per node. A key is equal only for what the rules
cannot tell apart: attribute values are compared with their exact types
(``1``, ``True`` and ``1.0`` differ, and so do ``0.0`` and ``-0.0``), dims in
their normal form (:class:`~tosaconv.symbolic.expr.Expr` ``key``). Attribute
values that have no such key (arrays, regions) make the whole attribute object
unkeyable: :func:`attrs_key` gives None, and callers key it by identity or
not at all.
"""
from __future__ import annotations

import enum
from dataclasses import fields, is_dataclass
from typing import Optional

from ..symbolic.expr import Expr
from .types import IndexType, TensorType, ValueType

_NO_KEY = object()
_FIELD_NAMES: dict[type, Optional[tuple[str, ...]]] = {}   # None: not a dataclass


def attrs_key(attrs: object) -> Optional[tuple[object, ...]]:
    """The attribute object's class and field values with their exact types; None when a value has no key."""
    cls = type(attrs)
    if cls not in _FIELD_NAMES:
        _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls)) if is_dataclass(cls) else None
    names = _FIELD_NAMES[cls]
    if not names:
        return None if names is None else (cls, ())
    values = tuple([_exact_key(getattr(attrs, n)) for n in names])
    return None if _NO_KEY in values else (cls, values)


def _exact_key(v: object) -> object:
    t = type(v)
    if t is int or t is str or t is bool or v is None:
        return (t, v)
    if t is float:
        return (t, repr(v))
    if t is tuple or t is list:
        items = tuple(_exact_key(x) for x in v)       # type: ignore[attr-defined]
        return _NO_KEY if _NO_KEY in items else (t, items)
    if isinstance(v, Expr):
        return (Expr, v.key)
    if isinstance(v, enum.Enum):
        return (t, v.name)
    return _NO_KEY


def types_key(types: list[ValueType]) -> Optional[tuple[object, ...]]:
    """Each type's kind and normal form (dtype and dims, or an index value); None for another kind of type."""
    out: list[tuple[object, ...]] = []
    for t in types:
        if type(t) is TensorType:
            out.append((t.dtype, t.shape))
        elif type(t) is IndexType:
            out.append((IndexType, t.value))
        else:
            return None
    return tuple(out)
