"""Frozen dataclasses for the attribute tables, built without ``dataclasses.dataclass``'s code generation.

``@dataclass(frozen=True)`` compiles six functions per class with ``exec`` (``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``): for the ~40 attribute classes of
:mod:`tosaconv.ir.attrs` that was 28 ms of every conversion's start-up (issue 13), a quarter of the
package's own import time. :func:`frozen_dataclass` makes the same classes for a fraction of that:

- the fields are real :class:`dataclasses.Field` records in ``__dataclass_fields__``, so
  ``dataclasses.fields``, ``replace`` and ``is_dataclass`` work, and a ``@dataclass(frozen=True)``
  subclass (``IntRecurrentAttrs``) inherits them as from any frozen dataclass;
- ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` are shared functions that
  behave as the generated ones (``__eq__`` and ``__hash__`` compare and hash the tuple of field values,
  only with ``eq=True``; assigning or deleting a field raises ``FrozenInstanceError``);
- ``__init__`` keeps the per-class signature and speed of the generated one (instances are made per
  op, up to millions of times), but is compiled the first time the class is instantiated: a
  conversion compiles the handful its model uses, not all forty.

Only what the attribute tables use is supported: annotated fields with plain (immutable) defaults.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from operator import attrgetter
from types import SimpleNamespace
from typing import Any, TypeVar

T = TypeVar("T")

# What dataclasses reads of a class's ``__dataclass_params__`` (a subclass checks ``frozen``).
_PARAMS = {eq: SimpleNamespace(init=True, repr=True, eq=eq, order=False, unsafe_hash=False, frozen=True)
           for eq in (False, True)}


def frozen_dataclass(cls: type[T] | None = None, /, *, frozen: bool = True,
                     eq: bool = True) -> Any:
    """``@frozen_dataclass(frozen=True[, eq=False])``: the class as ``@dataclass`` with the same arguments
    would make it (see the module docstring)."""
    if not frozen:
        raise TypeError("frozen_dataclass makes frozen classes only")

    def wrap(c: type[T]) -> type[T]:
        return _build(c, eq)
    return wrap if cls is None else wrap(cls)


def _build(cls: type[T], eq: bool) -> type[T]:
    fields = _fields(cls)
    names = tuple(fields)
    members: dict[str, object] = {
        "__dataclass_fields__": fields, "__dataclass_params__": _PARAMS[eq], "__match_args__": names,
        "_field_values": _values_getter(names), "__init__": _lazy_init(cls), "__repr__": _repr,
        "__setattr__": _setattr, "__delattr__": _delattr}
    if eq:
        members.update(__eq__=_eq, __hash__=_hash)
    for name, value in members.items():
        setattr(cls, name, value)
    return cls


def _fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The class's own annotated fields, in order, as dataclasses' ``Field`` records."""
    out: dict[str, dataclasses.Field[Any]] = {}
    seen_default = False
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if isinstance(annotation, str) and annotation.startswith(("ClassVar", "InitVar")):
            raise TypeError(f"{cls.__name__}.{name}: frozen_dataclass has no ClassVar or InitVar fields")
        default = cls.__dict__.get(name, dataclasses.MISSING)
        if default is dataclasses.MISSING and seen_default:
            raise TypeError(f"non-default argument {name!r} follows default argument")
        seen_default = default is not dataclasses.MISSING
        f: dataclasses.Field[Any] = dataclasses.field(default=default, kw_only=False)
        f.name, f.type = name, annotation
        f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what dataclasses.fields() selects
        out[name] = f
    return out


def _values_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """``obj -> (obj.<name>, ...)``: the tuple that ``__eq__`` and ``__hash__`` use, as dataclass's do."""
    if len(names) > 1:
        return staticmethod(attrgetter(*names))
    if len(names) == 1:
        get = attrgetter(names[0])
        return staticmethod(lambda obj: (get(obj),))
    return staticmethod(lambda obj: ())


def _lazy_init(cls: type) -> Callable[..., None]:
    """An ``__init__`` that compiles the class's real one on first use, installs it and calls it."""
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init = _compile_init(cls)
        type.__setattr__(cls, "__init__", init)
        init(self, *args, **kwargs)
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _compile_init(cls: type) -> Callable[..., None]:
    """``def __init__(self, a, b=<default>): object.__setattr__(self, 'a', a); ...`` for ``cls``'s fields."""
    fields: dict[str, dataclasses.Field[Any]] = cls.__dict__["__dataclass_fields__"]
    params, body = ["self"], []
    scope: dict[str, Any] = {"__set": object.__setattr__}
    for name, f in fields.items():
        if f.default is dataclasses.MISSING:
            params.append(name)
        else:
            scope[f"__default_{name}"] = f.default
            params.append(f"{name}=__default_{name}")
        body.append(f"    __set(self, {name!r}, {name})")
    source = f"def __init__({', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    namespace: dict[str, Any] = {}
    exec(source, scope, namespace)   # noqa: S102  (source made above from the class's own field names)
    init: Callable[..., None] = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _repr(self: Any) -> str:
    items = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__match_args__)
    return f"{type(self).__qualname__}({items})"


def _eq(self: Any, other: object) -> Any:
    values: Callable[[object], tuple[Any, ...]] = self._field_values
    if other.__class__ is self.__class__:
        return values(self) == values(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self._field_values(self))


def _setattr(self: Any, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
