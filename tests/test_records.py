"""Classes made by :func:`tosaconv.records.dataclass` behave as the standard library's ``@dataclass`` makes them.

Each attribute class of the IR is compared with a twin that ``dataclasses.dataclass`` builds from the same
annotations and defaults, and classes that use the other supported features (mutable classes,
``default_factory``, ``field(repr=False)``, ``__post_init__``, inheritance, exceptions) are built by
both decorators from one class body and compared; what is not supported is seen to be handed to
``dataclasses.dataclass``."""
from __future__ import annotations

import dataclasses
import pickle
import typing

import pytest

from tosaconv.ir import attrs as A
from tosaconv.records import dataclass as fast

CLASSES = typing.get_args(A.Attrs)


def twin(cls: type) -> type:
    """``cls`` as ``dataclasses.dataclass`` makes it, from the same class body."""
    body = {"__annotations__": dict(cls.__annotations__), "__qualname__": cls.__qualname__}
    body.update({f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING})
    return dataclasses.dataclass(frozen=True, eq=cls.__dataclass_params__.eq)(type(cls.__name__, (), body))


def values(cls: type, salt: int) -> list:
    """One value per field: distinct, hashable, and not the default."""
    return [(salt, i, f.name) for i, f in enumerate(dataclasses.fields(cls))]


def test_every_attribute_class_is_built_here():
    assert len(CLASSES) > 30
    for cls in CLASSES:
        assert "__record_compare__" in cls.__dict__, cls


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_same_as_a_standard_dataclass(cls):
    ref = twin(cls)
    assert [(f.name, f.type, f.default, f.kw_only) for f in dataclasses.fields(cls)] == \
        [(f.name, f.type, f.default, f.kw_only) for f in dataclasses.fields(ref)]
    a, b = cls(*values(cls, 1)), cls(*values(cls, 1))
    ra, rb = ref(*values(cls, 1)), ref(*values(cls, 1))
    assert repr(a) == repr(ra)
    assert (a == b) == (ra == rb) and (a != b) == (ra != rb)
    assert (a == a) and (a == "other") == (ra == "other")
    assert (type(a).__hash__ is None) == (type(ra).__hash__ is None)
    if cls.__dataclass_params__.eq:
        assert hash(a) == hash(ra) == hash(b)
    if dataclasses.fields(cls):
        name = dataclasses.fields(cls)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(a, name, 0)
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(a, name)
        changed = dataclasses.replace(a, **{name: "x"})
        assert repr(changed) == repr(dataclasses.replace(ra, **{name: "x"}))
        assert dataclasses.asdict(changed) == dataclasses.asdict(dataclasses.replace(ra, **{name: "x"}))
    assert cls.__match_args__ == ref.__match_args__


def test_defaults_keywords_and_argument_errors_as_a_dataclass():
    cls, ref = A.RescaleAttrs, twin(A.RescaleAttrs)
    assert repr(cls((1,), (2,), output_zp=3)) == repr(ref((1,), (2,), output_zp=3))
    assert cls((1,), (2,)) == cls(multiplier=(1,), shift=(2,), input_zp=0)
    for args, kwargs in [((), {}), (((1,),), {}), (((1,), (2,)), {"nope": 1}), (tuple(range(20)), {}),
                         (((1,),), {"multiplier": (1,)})]:
        with pytest.raises(TypeError) as ours:
            cls(*args, **kwargs)
        with pytest.raises(TypeError) as theirs:
            ref(*args, **kwargs)
        assert str(ours.value).split("()")[1] == str(theirs.value).split("()")[1]


def test_nan_fields_compare_as_a_dataclass_tuple():
    nan = float("nan")
    assert A.ClampAttrs(nan, 1.0) == A.ClampAttrs(nan, 1.0)          # the same object: tuple identity
    assert A.ClampAttrs(nan, 1.0) != A.ClampAttrs(float("nan"), 1.0)


def test_a_dataclass_subclass_inherits_the_fields():
    @dataclasses.dataclass(frozen=True)
    class Sub(A.MulAttrs):
        extra: int = 7
    assert Sub(2) == Sub(shift=2, extra=7) and repr(Sub(2)) == "test_a_dataclass_subclass_inherits_the_fields." \
        "<locals>.Sub(shift=2, extra=7)"
    with pytest.raises(TypeError, match="non-frozen"):
        dataclasses.dataclass(type("Thawed", (A.MulAttrs,), {"__annotations__": {"x": "int"}}))


def test_instances_pickle_and_refuse_what_dataclass_refuses():
    c = A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), A.DType.INT32)
    assert pickle.loads(pickle.dumps(c)) == c
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):
        fast(frozen=True)(type("Bad", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1}))
    with pytest.raises(ValueError, match="mutable default <class 'list'> for field a is not allowed"):
        fast(type("Bad", (), {"__annotations__": {"a": "list"}, "a": []}))


def both(name: str, body: dict, bases: tuple = (), **options) -> tuple:
    """The class ``name`` made from ``body`` by this module's decorator and by the standard one."""
    def make(decorator, suffix):
        namespace = {k: (dataclasses.field(**v.kw) if isinstance(v, F) else v) for k, v in body.items()}
        namespace["__qualname__"] = name
        chosen = tuple(b[suffix] for b in bases)
        return decorator(**options)(type(name, chosen, namespace))
    return make(fast, 0), make(dataclasses.dataclass, 1)


class F:
    """A ``dataclasses.field(...)`` to make afresh for each class (a Field belongs to one class)."""

    def __init__(self, **kw):
        self.kw = kw


def same(ours, theirs, *args, **kwargs) -> tuple:
    a, b = ours(*args, **kwargs), theirs(*args, **kwargs)
    assert repr(a) == repr(b)
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    assert [(f.name, f.type, f.default, f.repr) for f in dataclasses.fields(a)] == \
        [(f.name, f.type, f.default, f.repr) for f in dataclasses.fields(b)]
    assert (a == ours(*args, **kwargs)) == (b == theirs(*args, **kwargs))
    assert (type(a).__hash__ is None) == (type(b).__hash__ is None)
    return a, b


def test_mutable_classes_factories_and_hidden_fields():
    body = {"__annotations__": {"name": "str", "items": "list", "hidden": "int", "n": "int"},
            "items": F(default_factory=list), "hidden": F(default=3, repr=False), "n": 0}
    ours, theirs = both("Bag", body)
    a, b = same(ours, theirs, "x")
    a.items.append(1)
    b.items.append(1)
    a.n = b.n = 5
    assert repr(a) == repr(b) and a.items is not ours("y").items
    assert same(ours, theirs, "x", [1], 4, n=2)
    with pytest.raises(TypeError):
        hash(a)
    assert "items" not in ours.__dict__ and ours.hidden == theirs.hidden == 3


def test_post_init_inheritance_and_exceptions():
    calls = []
    body = {"__annotations__": {"code": "str", "notes": "tuple"}, "notes": (),
            "__post_init__": lambda self: calls.append(self.code)}
    base_ours, base_theirs = both("Failure", body, bases=((Exception, Exception),))
    ours, theirs = both("ShapeFailure", {"__annotations__": {"hint": "str"}, "hint": ""},
                        bases=((base_ours, base_theirs),))
    a, b = same(ours, theirs, "E-X", ("n",), hint="h")
    assert calls == ["E-X"] * 4 and isinstance(a, Exception)
    assert ours.__match_args__ == theirs.__match_args__ == ("code", "notes", "hint")
    with pytest.raises(TypeError, match="cannot inherit frozen dataclass from a non-frozen one"):
        fast(frozen=True)(type("Frozen", (base_ours,), {"__annotations__": {}}))


def test_frozen_classes_refuse_assignment_but_subclasses_may_add_attributes():
    ours, theirs = both("Point", {"__annotations__": {"x": "int", "y": "int"}, "y": 0}, frozen=True)
    a, b = same(ours, theirs, 1)
    assert hash(a) == hash(b)
    for obj in (a, b):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
            obj.x = 2
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'y'"):
            del obj.y
    sub_ours, sub_theirs = type("Sub", (ours,), {}), type("Sub", (theirs,), {})
    for cls in (sub_ours, sub_theirs):
        obj = cls(1)
        obj.extra = 1   # not a field, and not the dataclass itself: allowed, as dataclasses allows it
        with pytest.raises(dataclasses.FrozenInstanceError):
            obj.x = 3


def test_a_class_keeps_its_own_repr():
    ours, theirs = both("Shown", {"__annotations__": {"x": "int"}, "__repr__": lambda self: f"<{self.x}>"})
    assert "__record_compare__" in ours.__dict__
    same(ours, theirs, 1)
    assert repr(ours(2)) == "<2>"


def test_without_eq_a_class_keeps_its_own_eq_and_hash():
    body = {"__annotations__": {"x": "int"}, "__eq__": lambda self, other: self.x % 2 == other.x % 2,
            "__hash__": lambda self: self.x % 2, "__post_init__": lambda self: object.__setattr__(self, "x", abs(self.x))}
    ours, theirs = both("Parity", body, frozen=True, eq=False)
    assert "__record_compare__" in ours.__dict__
    a, b = same(ours, theirs, -3)
    assert a.x == 3 and a == ours(5) and hash(a) == hash(b) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 1


def test_a_recursive_repr_stops_as_a_dataclass_repr_does():
    ours, theirs = both("Node", {"__annotations__": {"next": "object"}, "next": None})
    a, b = ours(), theirs()
    a.next, b.next = a, b
    assert repr(a) == repr(b) == "Node(next=...)"


def test_slots_classes_as_a_dataclass_makes_them():
    body = {"__annotations__": {"name": "str", "producer": "object"}, "producer": None,
            "__repr__": lambda self: f"%{self.name}", "size": property(lambda self: len(self.name))}
    ours, theirs = both("Value", body, eq=False, slots=True)
    assert "__record_compare__" in ours.__dict__
    assert ours.__slots__ == theirs.__slots__ == ("name", "producer")
    assert ours.__qualname__ == theirs.__qualname__
    assert not hasattr(ours("v"), "__dict__") and not hasattr(theirs("v"), "__dict__")
    a, b = same(ours, theirs, "v")
    assert a.size == b.size == 1 and a.producer is None and a != ours("v") and hash(a) != hash(ours("v"))
    for obj in (a, b):
        obj.producer = 3
        with pytest.raises(AttributeError):
            obj.other = 1
    assert repr(ours("w", 2)) == "%w" and ours("w", 2).producer == 2 and ours.producer.__class__ is theirs.producer.__class__


def test_a_field_left_out_of_comparison_as_a_dataclass_leaves_it():
    body = {"__annotations__": {"x": "int", "cache": "dict", "seen": "int"}, "cache": F(default_factory=dict,
            compare=False), "seen": F(default=0, compare=False, repr=False)}
    for options in ({}, {"frozen": True}):
        ours, theirs = both("Cached", body, **options)
        assert "__record_compare__" in ours.__dict__
        same(ours, theirs, 1)
        for cls in (ours, theirs):
            assert cls(1, {1: 2}, 5) == cls(1) and cls(1) != cls(2)
        if options:   # the dict field is out of the hash too: the instance is hashable
            assert hash(ours(1, {}, 4)) == hash(theirs(1, {}, 3)) == hash((1,))


@pytest.mark.parametrize("options, body", [
    ({"order": True}, {"__annotations__": {"x": "int"}}),
    ({"slots": True, "frozen": True}, {"__annotations__": {"x": "int"}}),
    ({}, {"__annotations__": {"x": "int", "k": "ClassVar[int]"}, "k": 1}),
    ({}, {"__annotations__": {"x": "int"}, "x": F(default=1, hash=False)}),
    ({}, {"__annotations__": {"x": "int"}, "__eq__": lambda self, other: True}),
])
def test_what_is_not_supported_is_made_by_dataclasses(options, body):
    ours, theirs = both("Other", body, **options)
    assert "__record_compare__" not in ours.__dict__
    assert repr(ours(1)) == repr(theirs(1))


def test_classes_of_one_form_keep_their_own_names_defaults_and_factories():
    """Two classes whose ``__init__`` share one compiled form (a plain field, a default, a factory) each take
    their own keywords, defaults and factories, and fail with their own names, as dataclasses' do."""
    made = {}
    for name, fields in (("First", ("a", "b", "c")), ("Second", ("x", "y", "z"))):
        body = {"__annotations__": {f: "object" for f in fields}, fields[1]: len(name),
                fields[2]: F(default_factory=lambda n=name: [n])}
        made[name] = both(name, body)
    for ours, theirs in made.values():
        keys = tuple(ours.__dataclass_fields__)
        for cls in (ours, theirs):
            obj = cls(**{keys[0]: 1})
            assert [getattr(obj, k) for k in keys] == [1, len(cls.__name__), [cls.__name__]]
            assert getattr(cls(1), keys[2]) is not getattr(cls(1), keys[2])   # a new list each time
        same(ours, theirs, 0, 5, [6])
        for args, kwargs in [((), {}), ((1,), {"nope": 2}), ((1,), {keys[0]: 1})]:
            with pytest.raises(TypeError) as mine:
                ours(*args, **kwargs)
            with pytest.raises(TypeError) as ref:
                theirs(*args, **kwargs)
            assert str(mine.value) == str(ref.value)
