"""The attribute classes (built by :func:`tosaconv.ir.frozen.frozen_dataclass`) behave as the standard library's
``@dataclass(frozen=True)`` would make them: each is compared with a twin that ``dataclasses.dataclass``
builds from the same annotations and defaults."""
from __future__ import annotations

import dataclasses
import pickle
import typing

import pytest

from tosaconv.ir import attrs as A
from tosaconv.ir.frozen import frozen_dataclass

CLASSES = typing.get_args(A.Attrs)


def twin(cls: type) -> type:
    """``cls`` as ``dataclasses.dataclass`` makes it, from the same class body."""
    body = {"__annotations__": dict(cls.__annotations__), "__qualname__": cls.__qualname__}
    body.update({f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING})
    return dataclasses.dataclass(frozen=True, eq=cls.__dataclass_params__.eq)(type(cls.__name__, (), body))


def values(cls: type, salt: int) -> list:
    """One value per field: distinct, hashable, and not the default."""
    return [(salt, i, f.name) for i, f in enumerate(dataclasses.fields(cls))]


def test_every_attribute_class_is_built_by_frozen_dataclass():
    assert len(CLASSES) > 30
    for cls in CLASSES:
        assert "_field_values" in cls.__dict__, cls


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
        frozen_dataclass(frozen=True)(type("Bad", (), {"__annotations__": {"a": "int", "b": "int"}, "a": 1}))
    with pytest.raises(TypeError, match="frozen"):
        frozen_dataclass(frozen=False)
