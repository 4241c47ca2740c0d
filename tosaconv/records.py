"""``@dataclass`` without its start-up cost: the same classes, built without compiling code per class.

The standard ``dataclasses.dataclass`` compiles up to six functions per class with ``exec``
(``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``): about 0.6 ms
a class, and a conversion imports about a hundred dataclasses (the forty attribute tables among
them), which was a third of tosaconv's own import time (start-up, issue 13). Modules import
:func:`dataclass` from here instead; it makes the same class:

- the fields are the standard ``dataclasses.Field`` records in ``__dataclass_fields__``, so
  ``dataclasses.fields``, ``replace``, ``asdict`` and ``is_dataclass`` work, and a standard
  ``@dataclass`` subclass inherits them;
- ``__repr__``, ``__eq__`` and ``__hash__`` are shared functions that read a per-class tuple of field
  names and behave as the generated ones (``__eq__`` compares the tuples of compared fields of two
  instances of the same class; a frozen class hashes that tuple, a mutable one with ``eq`` is
  unhashable), and a frozen class's ``__setattr__``/``__delattr__`` are closures that raise
  ``FrozenInstanceError`` as the generated ones do;
- ``__init__`` has the generated one's signature, defaults, ``default_factory`` calls and
  ``__post_init__`` call, and its speed (objects are made per op, up to millions of times); it is
  compiled the first time the class is instantiated, so a run compiles only the classes it uses.

A class's own ``__repr__`` is kept, as ``dataclasses`` keeps it, and so are its own ``__eq__`` and
``__hash__`` with ``eq=False``. ``slots=True`` (a mutable class whose only base is ``object``) makes the
class again with ``__slots__`` for its fields, and ``field(compare=False)`` leaves a field out of
``__eq__`` and ``__hash__``, as in ``dataclasses``. A class that asks for anything else (``order``,
``slots`` otherwise, ``kw_only``, ``ClassVar``/``InitVar`` fields, fields with ``init``, ``hash`` or
``metadata`` set, its own
``__init__``, ``__setattr__``, ``__delattr__`` or ``__slots__``, its own ``__eq__`` or ``__hash__`` with
``eq``) is handed to ``dataclasses.dataclass`` unchanged. Not reproduced: the generated ``__doc__`` of a class without a docstring, and the
annotations of ``__init__``. Type checkers see the standard decorator.
"""
from __future__ import annotations

import _thread
import dataclasses
from collections.abc import Callable
from operator import attrgetter
from types import CodeType, FunctionType, SimpleNamespace
from typing import TYPE_CHECKING, Any, TypeVar

T = TypeVar("T")

_OWN_METHODS = ("__init__", "__eq__", "__hash__", "__setattr__", "__delattr__")   # a class's own __repr__ is kept
_NOT_FIELDS = ("ClassVar", "InitVar", "KW_ONLY")


def _fast_dataclass(cls: type[T] | None = None, /, *, init: bool = True, repr: bool = True, eq: bool = True,
                    order: bool = False, unsafe_hash: bool = False, frozen: bool = False, **options: Any) -> Any:
    """``@dataclass`` / ``@dataclass(frozen=True, eq=False, ...)``: see the module docstring."""
    slots = options == {"slots": True} and not frozen
    plain = init and repr and not order and not unsafe_hash and (not options or slots)

    def wrap(c: type[T]) -> type[T]:
        if not plain or not _supported(c, eq) or (slots and not _slottable(c)):
            return dataclasses.dataclass(c, init=init, repr=repr, eq=eq, order=order,
                                         unsafe_hash=unsafe_hash, frozen=frozen, **options)
        return _build(c, eq, frozen, slots)
    return wrap if cls is None else wrap(cls)


def _supported(cls: type, eq: bool) -> bool:
    """Whether :func:`_build` makes ``cls`` exactly as ``dataclasses.dataclass`` would."""
    kept = () if eq else ("__eq__", "__hash__")   # without eq, dataclasses leaves a class's own to it
    if any(name in cls.__dict__ for name in (*_OWN_METHODS, "__slots__") if name not in kept):
        return False
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))
        if any(word in text for word in _NOT_FIELDS):
            return False
        default = cls.__dict__.get(name)
        if isinstance(default, dataclasses.Field) and (not default.init or default.metadata
                                                       or default.hash is not None
                                                       or default.kw_only is not dataclasses.MISSING):
            return False
    return True


def _slottable(cls: type) -> bool:
    """Whether ``slots=True`` needs no more than :func:`_with_slots` does: no base but ``object``."""
    return cls.__bases__ == (object,)


def _build(cls: type[T], eq: bool, frozen: bool, slots: bool = False) -> type[T]:
    fields = _inherited_fields(cls, frozen)
    fields.update(_own_fields(cls))
    _check_order(fields)
    if slots:
        cls = _with_slots(cls, tuple(fields))
    names = tuple(fields)
    members: dict[str, object] = {
        "__dataclass_fields__": fields, "__match_args__": names,
        "__dataclass_params__": SimpleNamespace(init=True, repr=True, eq=eq, order=False, unsafe_hash=False,
                                                frozen=frozen),
        "__record_repr__": tuple(n for n, f in fields.items() if f.repr),
        "__record_compare__": _values_getter(tuple(n for n, f in fields.items() if f.compare)),
        "__init__": _lazy_init(cls)}
    if "__repr__" not in cls.__dict__:   # as dataclasses: a class's own __repr__ stays
        members["__repr__"] = _repr
    if eq:
        members.update(__eq__=_eq, __hash__=_hash if frozen else None)
    if frozen:
        members.update(_frozen_methods(cls, names))
    for name, value in members.items():
        setattr(cls, name, value)
    _WAITING.append(cls)
    return cls


_WAITING: list[type] = []   # classes built with a lazy __init__, some perhaps compiled since


def compile_waiting() -> int:
    """Compile now the ``__init__`` of every class not instantiated yet; the number compiled. The conversion
    server (tosaconv.serve) calls it once, so that the workers it forks do not each compile them again."""
    compiled = 0
    while _WAITING:
        cls = _WAITING.pop()
        if getattr(cls.__dict__.get("__init__"), "__record_lazy__", False):
            type.__setattr__(cls, "__init__", _compile_init(cls))
            compiled += 1
    return compiled


def _with_slots(cls: type[T], names: tuple[str, ...]) -> type[T]:
    """``cls`` made again with ``__slots__`` for its fields (and without their class-level defaults, which
    ``__init__`` holds), as ``dataclasses`` does for ``slots=True``."""
    body = {k: v for k, v in cls.__dict__.items() if k not in names and k not in ("__dict__", "__weakref__")}
    body["__slots__"] = names
    metaclass: Any = type(cls)
    made: type[T] = metaclass(cls.__name__, cls.__bases__, body)
    made.__qualname__ = cls.__qualname__
    return made


def _inherited_fields(cls: type, frozen: bool) -> dict[str, dataclasses.Field[Any]]:
    """The fields of the dataclasses ``cls`` derives from, in their order (as ``dataclasses`` collects them)."""
    fields: dict[str, dataclasses.Field[Any]] = {}
    for base in cls.__mro__[-1:0:-1]:
        base_fields = base.__dict__.get("__dataclass_fields__")
        if base_fields is None:
            continue
        if base.__dict__["__dataclass_params__"].frozen != frozen:
            raise TypeError("cannot inherit frozen dataclass from a non-frozen one" if frozen
                            else "cannot inherit non-frozen dataclass from a frozen one")
        fields.update((n, f) for n, f in base_fields.items() if f._field_type is dataclasses._FIELD)  # type: ignore[attr-defined]
    return fields


def _own_fields(cls: type) -> dict[str, dataclasses.Field[Any]]:
    """The class's own annotated fields, as ``dataclasses`` makes their ``Field`` records (and its class attributes)."""
    out: dict[str, dataclasses.Field[Any]] = {}
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        default = cls.__dict__.get(name, dataclasses.MISSING)
        f: dataclasses.Field[Any] = default if isinstance(default, dataclasses.Field) else \
            dataclasses.field(default=default)
        if f.default is not dataclasses.MISSING and f.default.__class__.__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory")
        f.name, f.type, f.kw_only = name, annotation, False
        f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]  # what dataclasses.fields() selects
        if isinstance(default, dataclasses.Field):   # as dataclasses: the class attribute is the default, if any
            if f.default is dataclasses.MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        out[name] = f
    return out


def _check_order(fields: dict[str, dataclasses.Field[Any]]) -> None:
    seen_default = False
    for name, f in fields.items():
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        if seen_default and not has_default:
            raise TypeError(f"non-default argument {name!r} follows default argument")
        seen_default |= has_default


def _values_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """``obj -> (obj.<name>, ...)``: the tuple that ``__eq__`` and ``__hash__`` use, as the generated ones do."""
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
    __init__.__record_lazy__ = True   # type: ignore[attr-defined]   # compile_waiting's mark
    return __init__


class _Missing:
    """The default of a ``default_factory`` parameter: the factory is called when the caller passed nothing."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Missing()


def _compile_init(cls: type) -> Callable[..., None]:
    """``def __init__(self, a, b=<default>, c=<factory>): ...`` for ``cls``'s fields, as ``dataclasses`` writes it.

    The code is compiled once per form (frozen or not, the number of fields, which have a factory, a
    ``__post_init__`` call or not) with placeholder names, and each class gets a copy renamed to its own
    fields: a conversion makes objects of some fifty classes, and compiling each one's ``__init__`` cost
    ~0.1 ms (start-up, issue 13)."""
    fields: dict[str, dataclasses.Field[Any]] = cls.__dict__["__dataclass_fields__"]
    kinds = tuple("factory" if f.default_factory is not dataclasses.MISSING else
                  "default" if f.default is not dataclasses.MISSING else "plain" for f in fields.values())
    factories = tuple(kind == "factory" for kind in kinds)   # a default needs no code: the function holds it
    code = _init_template(factories, cls.__dict__["__dataclass_params__"].frozen, hasattr(cls, "__post_init__"))
    own = {f"_f{i}": name for i, name in enumerate(fields)}
    code = code.replace(co_varnames=tuple(own.get(n, n) for n in code.co_varnames),
                        co_names=tuple(own.get(n, n) for n in code.co_names),
                        co_consts=tuple(own.get(c, c) if type(c) is str else c for c in code.co_consts))
    scope: dict[str, Any] = {"__set": object.__setattr__, "__FACTORY": _FACTORY}
    scope.update((f"__factory_{i}", f.default_factory) for i, f in enumerate(fields.values()) if kinds[i] == "factory")
    defaults = tuple(_FACTORY if kind == "factory" else f.default for kind, f in zip(kinds, fields.values())
                     if kind != "plain")
    init: Callable[..., None] = FunctionType(code, scope, "__init__", defaults or None)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


_TEMPLATES: dict[tuple[tuple[bool, ...], bool, bool], CodeType] = {}


def _init_template(factories: tuple[bool, ...], frozen: bool, post_init: bool) -> CodeType:
    """The code of ``__init__`` for fields named ``_f<i>``, those flagged in ``factories`` made by a factory
    when not passed (defaults come with the function)."""
    key = (factories, frozen, post_init)
    code = _TEMPLATES.get(key)
    if code is None:
        body = []
        for i, factory in enumerate(factories):
            value = f"__factory_{i}() if _f{i} is __FACTORY else _f{i}" if factory else f"_f{i}"
            body.append(f"    __set(self, '_f{i}', {value})" if frozen else f"    self._f{i} = {value}")
        if post_init:
            body.append("    self.__post_init__()")
        params = ", ".join(["self"] + [f"_f{i}" for i in range(len(factories))])
        source = f"def __init__({params}):\n" + ("\n".join(body) or "    pass") + "\n"
        namespace: dict[str, Any] = {}
        exec(source, {}, namespace)   # source made above from placeholder names only
        code = _TEMPLATES[key] = namespace["__init__"].__code__
    return code


_REPRS: set[tuple[int, int]] = set()   # (object id, thread id) of the reprs being built, as reprlib.recursive_repr


def _repr(self: Any) -> str:
    key = (id(self), _thread.get_ident())
    if key in _REPRS:
        return "..."
    _REPRS.add(key)
    try:
        items = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_repr__)
    finally:
        _REPRS.discard(key)
    return f"{type(self).__qualname__}({items})"


def _eq(self: Any, other: object) -> Any:
    values: Callable[[object], tuple[Any, ...]] = self.__record_compare__
    if other.__class__ is self.__class__:
        return values(self) == values(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self.__record_compare__(self))


def _frozen_methods(cls: type[Any], names: tuple[str, ...]) -> dict[str, object]:
    """``__setattr__`` and ``__delattr__`` of a frozen class, as ``dataclasses`` generates them."""
    def __setattr__(self: Any, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)
    return {"__setattr__": __setattr__, "__delattr__": __delattr__}


if TYPE_CHECKING:
    from dataclasses import dataclass as dataclass
else:
    dataclass = _fast_dataclass
