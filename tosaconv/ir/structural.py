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

:func:`interned` makes equal attribute objects one object: the builder hands
each op the first attribute object made with its key, so the shape-rule answers
and verdicts that structurally equal ops share are found by the identity of the
attributes, without a value key made and hashed per op (a key of nested tuples
hashes slowly). Only keys of plain numbers, strings, enums and tuples of them
are interned (the objects are frozen, their values immutable, and equal keys mean
values that no reader can tell apart): never a key with a list (mutable), a
symbolic dim or a NaN (whose payload bits its key does not hold).
"""
from __future__ import annotations

import enum
from dataclasses import fields, is_dataclass
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Optional, TypeVar, cast

import numpy as np

from ..symbolic.expr import Expr
from .types import IndexType, TensorType, ValueType

_NO_KEY = object()
_INTS = object()      # the tag of a tuple whose items are all exactly ``int``: ``(_INTS, the tuple)``
_INT = {int}
# by class: a function giving the tuple of its field values (None: not a dataclass, (): no fields)
_FIELD_VALUES: dict[type, Optional[Callable[[object], tuple[object, ...]]] | tuple[()]] = {}


def attrs_key(attrs: object) -> Optional[tuple[object, ...]]:
    """The attribute object's class and field values with their exact types; None when a value has no key."""
    cls = type(attrs)
    values_of = _FIELD_VALUES.get(cls, _NO_KEY)
    if values_of is _NO_KEY:
        values_of = _FIELD_VALUES[cls] = _field_values(cls)
    if not values_of:
        return None if values_of is None else (cls, ())
    values = tuple(map(_exact_key, values_of(attrs)))   # type: ignore[operator]
    return None if _NO_KEY in values else (cls, values)


def _field_values(cls: type) -> Optional[Callable[[object], tuple[object, ...]]] | tuple[()]:
    if not is_dataclass(cls):
        return None
    names = tuple(f.name for f in fields(cls))
    if not names:
        return ()
    get = attrgetter(*names)
    return get if len(names) > 1 else lambda attrs: (get(attrs),)


def _exact_key(v: object) -> object:
    t = type(v)
    if t is int or t is str or t is bool or v is None:
        return (t, v)
    if t is float:
        return (t, repr(v))
    if t is tuple and v and set(map(type, v)) == _INT:    # type: ignore[call-overload]
        return (_INTS, v)            # (the common case, without a key per item)
    if t is tuple or t is list:
        items = tuple(map(_exact_key, v))       # type: ignore[call-overload]
        return _NO_KEY if _NO_KEY in items else (t, items)
    if isinstance(v, Expr):
        return (Expr, v.key)
    if isinstance(v, enum.Enum):
        return (t, v.name)
    return _NO_KEY


# Interned attribute objects: value key -> (the attributes, the key), and the same entries by id of the
# attributes (holding them keeps the ids); process-wide (the keys are values alone), cleared past _LIMIT.
_INTERNED: dict[tuple[object, ...], tuple[object, tuple[object, ...]]] = {}
_INTERNED_IDS: dict[int, tuple[object, tuple[object, ...]]] = {}
_LIMIT = 100_000


_A = TypeVar("_A")


def interned(attrs: _A) -> tuple[_A, Optional[tuple[object, ...]]]:
    """``(canonical attributes, their key)``: the first attribute object interned with ``attrs``'s value key
    (``attrs`` itself the first time), or ``attrs`` as it is when its key is None or not internable."""
    known = _INTERNED_IDS.get(id(attrs))
    if known is not None:
        return cast(tuple[_A, tuple[object, ...]], known)
    key = attrs_key(attrs)
    if key is None:
        return attrs, None
    entry = _INTERNED.get(key)
    if entry is not None:
        return cast(tuple[_A, tuple[object, ...]], entry)
    if not _plain(key[1]):
        return attrs, key
    if len(_INTERNED) >= _LIMIT:
        _INTERNED.clear()
        _INTERNED_IDS.clear()
    _INTERNED[key] = _INTERNED_IDS[id(attrs)] = (attrs, key)
    return attrs, key


def is_interned(attrs: object) -> bool:
    """Whether ``attrs`` is an interned object (one the builder may hand to many ops)."""
    return id(attrs) in _INTERNED_IDS


def interned_key(attrs: object) -> Optional[tuple[object, ...]]:
    """``attrs_key(attrs)``, looked up when ``attrs`` is an interned object."""
    known = _INTERNED_IDS.get(id(attrs))
    return known[1] if known is not None and known[0] is attrs else attrs_key(attrs)


def _plain(values: object) -> bool:
    """Exact keys (``_exact_key``) of values that are interchangeable when equal: no list, no symbolic dim, no NaN."""
    for tag, payload in values:    # type: ignore[attr-defined]
        if tag is tuple:
            if not _plain(payload):
                return False
        elif tag is list or tag is Expr or (tag is float and payload == "nan"):
            return False
    return True


# Types by their normal form ((dtype, shape) of a tensor type, (IndexType, value) of an index type): the
# builder gives the results of structurally equal ops one type object, so verdicts and rule answers keyed
# by the identity of types are found across passes and programs. A type is immutable and its dims ints or
# expressions in normal form (equal when their normal forms are), so equal ones are interchangeable.
_TYPES: dict[tuple[object, ...], ValueType] = {}


def shared_types(types: Sequence[ValueType]) -> tuple[ValueType, ...]:
    """``types`` with each tensor or index type replaced by the one object of its normal form."""
    return tuple(map(_shared_type, types))


def shared_type(t: ValueType) -> ValueType:
    """The one object of ``t``'s normal form (``t`` itself the first time)."""
    return _shared_type(t)


def _shared_type(t: ValueType) -> ValueType:
    kind = type(t)
    if kind is TensorType:
        key: tuple[object, ...] = (t.dtype, t.shape)     # type: ignore[union-attr]
    elif kind is IndexType:
        key = (IndexType, t.value)                        # type: ignore[union-attr]
    else:
        return t
    known = _TYPES.get(key)
    if known is None:
        if len(_TYPES) >= _LIMIT:
            _TYPES.clear()
        known = _TYPES[key] = t
    return known


# Shape-rule answers by identity: (id of the op kind, id of the attributes, ids of the operand types) ->
# (the operand types, the result types the rule gives on them, the attributes, the op kind); the builder
# fills it (every builder: passes make their own) and reads it before making a structural key, and the
# verifier reads it to skip a rule run whose answer the op's results are. Process-wide; the entries hold
# the objects their key names, so no id in a key is reused while it is in the table; cleared past _LIMIT.
RULE_ANSWERS: dict[tuple[int, ...], tuple[tuple[object, ...], tuple[object, ...], object, object]] = {}


def remember_rule_answer(key: tuple[int, ...], answer: tuple[tuple[object, ...], tuple[object, ...], object, object]) -> None:
    """Enter ``answer`` under ``key`` in :data:`RULE_ANSWERS`."""
    if len(RULE_ANSWERS) >= _LIMIT:
        RULE_ANSWERS.clear()
    RULE_ANSWERS[key] = answer


def const_types(attrs: object) -> Sequence[ValueType]:
    """CONST's shape rule on ``attrs``, remembered by what it reads (the array's dtype and shape and the
    element-type fields): a program has hundreds of CONSTs of a few types. The verifier reads
    :func:`known_const_types` to skip a second run for a CONST whose result is this answer."""
    key = _const_rule_key(attrs)
    known = _CONST_TYPES.get(key) if key is not None else None
    if known is None:
        from .ops import Op    # (the op table imports this module's users)
        known = shared_types(Op.CONST.shape_rule([], attrs))
        if key is not None:
            if len(_CONST_TYPES) >= _LIMIT:
                _CONST_TYPES.clear()
            _CONST_TYPES[key] = known
    return known


def known_const_types(attrs: object) -> Optional[Sequence[ValueType]]:
    """:func:`const_types`'s remembered answer for ``attrs`` (None when it has none)."""
    key = _const_rule_key(attrs)
    return _CONST_TYPES.get(key) if key is not None else None


def _const_rule_key(attrs: object) -> Optional[tuple[object, ...]]:
    values = getattr(attrs, "values", None)
    if type(values) is not np.ndarray:
        return None
    return (type(attrs), values.dtype, values.shape, getattr(attrs, "int48", None), getattr(attrs, "element_type", None))


_CONST_TYPES: dict[tuple[object, ...], tuple[ValueType, ...]] = {}


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
