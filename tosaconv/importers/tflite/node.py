"""Typed access to one TFLite operator: its operands and its builtin options.

``OpReader.opt("StrideW")`` calls the generated accessor of the op's options
table; when the model omits the table, an empty table of the same type is
read instead, so every default is the schema's own. Vector fields come back
as tuples of ints. Operands are the context's tensor keys (``None`` for an
optional input given as -1).
"""
from __future__ import annotations

import functools
from typing import Any, Optional, Union

import flatbuffers
import numpy as np

from ...ir.location import Location
from .flat import AccessorTable, generated
from .reader import ConvertError, OpInfo, TensorInfo
from .schema import tflite

_WINDOW_FIELDS = ("Stride", "Filter", "Dilation")   # window geometry option fields: each must be >= 1
_OPTION_TYPES = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}


@functools.lru_cache(maxsize=None)
def _empty_table(options: str) -> object:
    """A default-valued options table of class ``options`` (every field absent)."""
    b = flatbuffers.Builder(16)
    getattr(tflite, f"{options}Start")(b)
    b.Finish(getattr(tflite, f"{options}End")(b))
    obj = getattr(tflite, options)()
    buf = b.Output()
    obj.Init(buf, flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0))
    return obj


class _Operands(list):
    """An operator's inputs or outputs; reading one the operator does not have is a ConvertError
    naming the count, so a model with too few operands fails with a message, not an IndexError.
    (Made by :func:`_operands`: the list's own constructor, no Python ``__init__`` per list.)"""

    __slots__ = ("op_type", "what")

    def __getitem__(self, i: Union[int, slice]) -> Any:
        if type(i) is not int and isinstance(i, slice) and i.stop is not None and i.stop > len(self):
            # [:3] means three operands
            raise ConvertError(f"{self.op_type} has {len(self)} {self.what}s; it needs at least {i.stop} "
                               "(the operator has too few operands for its type)")
        try:
            return _LIST_ITEM(self, i)
        except IndexError:
            raise ConvertError(f"{self.op_type} has {len(self)} {self.what}s; {self.what} {i} is missing "
                               "(the operator has too few operands for its type)") from None


_LIST_ITEM = list.__getitem__   # (called directly: ``super()`` costs a lookup per operand read)


def _operands(op_type: str, what: str, items: list) -> _Operands:
    """``items`` as the operands (``what``: "input" or "output") of an op of type ``op_type``."""
    operands = _Operands(items)
    operands.op_type, operands.what = op_type, what
    return operands


_VECTOR, _WINDOW, _SCALAR = "vector", "window", "scalar"
# (options class, field) -> (one of the kinds above, how to read it directly or None); opt() reads ~2 per op
_FIELD_KINDS: dict = {}


def _field_kind(cls: type, field: str) -> tuple:
    """Whether ``field`` of options class ``cls`` is a vector (read through its AsNumpy), a window size,
    stride or dilation (each >= 1), or another scalar, and for a scalar its :func:`_direct` read;
    remembered per class and field."""
    kind = _VECTOR if hasattr(cls, f"{field}AsNumpy") else _WINDOW if field.startswith(_WINDOW_FIELDS) else _SCALAR
    _FIELD_KINDS[cls, field] = known = (kind, None if kind is _VECTOR else _direct(cls, field))
    return known


class _Recorder:
    """A stand-in table for a generated scalar accessor: records the vtable offset it asks for and the
    flags (struct and Python type) it reads the value with."""

    Pos = 0

    def __init__(self, present: bool) -> None:
        self.present, self.calls = present, []

    def Offset(self, offset: int) -> int:   # noqa: N802  (the generated code's names)
        self.calls.append(offset)
        return 4 if self.present else 0

    def Get(self, flags: Any, at: int) -> Any:   # noqa: N802
        self.calls.append(flags)
        return flags.py_type(0)


def _direct(cls: type, field: str) -> Optional[tuple]:
    """(vtable slot, struct unpack, Python type, default) of a generated accessor that reads one scalar at
    one vtable offset (the schema's scalar fields), found by running it on recording tables; None for
    any other accessor (read through the generated code)."""
    absent, present = _Recorder(False), _Recorder(True)
    try:
        default = _run(cls, field, absent)
        value = _run(cls, field, present)
    except Exception:
        return None
    if len(absent.calls) != 1 or len(present.calls) != 2 or present.calls[0] != absent.calls[0]:
        return None
    offset, flags = present.calls
    if not isinstance(offset, int) or offset < 4 or offset % 2 or value != flags.py_type(0) \
            or type(value) is not type(flags.py_type(0)) or type(default) not in (int, float, bool):
        return None
    return (offset - 4) >> 1, flags.packer_type.unpack_from, flags.py_type, default


def _run(cls: type, field: str, table: _Recorder) -> Any:
    obj = cls()
    obj._tab = table
    return getattr(obj, field)()


class OpReader:
    def __init__(self, op: OpInfo, keys: list, tensors: list, options: str | None):
        self.info = op
        self.op_type = op_type = op.op_type
        self.inputs = _operands(op_type, "input", [keys[i] if i >= 0 else None for i in op.inputs])
        self.outputs = _operands(op_type, "output", [keys[i] for i in op.outputs])
        self.input_infos = _operands(op_type, "input", [tensors[i] if i >= 0 else None for i in op.inputs])
        self._tensors = tensors
        self._options = self._read_options(options)
        self.name = tensors[op.outputs[0]].name if op.outputs else f"op_{op.index}"

    @functools.cached_property
    def output_infos(self) -> list[TensorInfo]:
        """The outputs' TensorInfos (made when first read: mostly by the quantized converters)."""
        return _operands(self.op_type, "output", [self._tensors[i] for i in self.info.outputs])

    @property
    def location(self) -> Location:
        return Location(self.op_type, self.name, "tflite")

    @property
    def version(self) -> int:
        return self.info.version

    def input(self, i: int) -> Optional[str]:
        """Key of input ``i``, or None when absent or left out (-1)."""
        return self.inputs[i] if i < len(self.inputs) else None

    def opt(self, field: str) -> Any:
        if self._options is None:
            raise ConvertError(f"{self.op_type} has no options table to read '{field}' from")
        options = self._options
        kind, direct = _FIELD_KINDS.get((type(options), field)) or _field_kind(type(options), field)
        if kind is _VECTOR:
            arr = getattr(options, f"{field}AsNumpy")()
            return () if isinstance(arr, int) else tuple(int(x) for x in np.asarray(arr).reshape(-1))
        table = options._tab
        if direct is not None and type(table) is AccessorTable:
            value = table.scalar_field(*direct)      # what the generated accessor reads, in fewer calls
        else:
            value = getattr(options, field)()
        if kind is _WINDOW and isinstance(value, int) and value < 1:
            raise ConvertError(f"{self.op_type} has {field} {value}; window sizes, strides and dilations "
                               "must be at least 1")
        return value

    def _read_options(self, options: str | None) -> Optional[object]:
        if options is None:
            return None
        table = self.info.options
        if table is None:
            return _empty_table(options)
        got = _OPTION_TYPES.get(self.info.options_type)
        if got != options:
            raise ConvertError(f"{self.op_type} carries {got or 'unknown'} options where {options} were expected")
        return generated(getattr(tflite, options), table)
