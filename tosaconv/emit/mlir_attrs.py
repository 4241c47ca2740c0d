"""An operator record's attribute table as TOSA-dialect MLIR properties (``<{axis = 1 : i32}>``).

The table's fields and their kinds come from the flatbuffer schema
(:data:`.schema.ATTR_LAYOUTS`), so an op the writer or reader knows needs no
second table here. Each kind has one MLIR spelling: an ``int32`` field is an
``i32`` integer attribute; a ``bool`` is ``true``/``false``; an ``int32[]``
is ``array<i64: ...>`` except TRANSPOSE's ``perms`` (``array<i32: ...>``);
the enums are ``#tosa.nan_mode<...>``, ``#tosa.rounding_mode<...>`` and
``#tosa.resize_mode<...>`` (NEAREST is ``NEAREST_NEIGHBOR`` there), and ``acc_type`` is an element type (``i32``,
``f32``...). CLAMP's ``min_val``/``max_val`` bytes become scalars typed
like its input (``0 : i8``, ``6.0 : f32``). A field the record leaves out
takes the flatbuffer default the reader also uses (false, 0, PROPAGATE,
SINGLE_ROUND). String fields (the region names of COND_IF and WHILE_LOOP)
are not properties: the writer prints those regions in place.
"""
from __future__ import annotations

import numpy as np

from ..ir.dtypes import DType
from . import schema as S
from .mlir_text import element_type, float_literal, i32_array, i64_array
from .records import OpRecord
from .tensor_data import from_le_bytes, to_le_bytes

# field -> (MLIR attribute name, enum names by code, default when absent or 0)
_ENUMS = {
    "nan_mode": ("nan_mode", S.NAN_MODES, "PROPAGATE"),
    "rounding_mode": ("rounding_mode", S.ROUNDING_MODES, "SINGLE_ROUND"),
    "mode": ("resize_mode", S.RESIZE_MODES, None),
}
_MLIR_ENUM_NAMES = {("resize_mode", "NEAREST"): "NEAREST_NEIGHBOR"}   # where the dialect's name differs
_I32_ARRAYS = frozenset({"perms"})


def properties(op: OpRecord, input_dtype: DType | None) -> dict:
    """``{name: attribute text}`` of ``op``'s table; ``input_dtype`` types CLAMP's bounds."""
    props = {}
    for name, kind in S.attr_layout(op.attribute or op.op):
        if kind == S.STRING:
            continue
        props[name] = _field(op, name, kind, input_dtype)
    return props


def properties_text(props: dict) -> str:
    """`` <{a = 1 : i32, b = true}>`` in name order, or nothing for an empty table."""
    if not props:
        return ""
    return " <{" + ", ".join(f"{name} = {props[name]}" for name in sorted(props)) + "}>"


def _field(op: OpRecord, name: str, kind: str, input_dtype: DType | None) -> str:
    value = op.fields.get(name)
    if kind == S.BOOL:
        return "true" if value else "false"
    if kind == S.INT32:
        return f"{int(value or 0)} : i32"
    if kind == S.INT32_VEC:
        values = () if value is None else value
        return i32_array(values) if name in _I32_ARRAYS else i64_array(values)
    if kind == S.ENUM:
        return _enum(op, name, int(value or 0))
    if kind == S.BYTES:
        return _bound(op, name, value, input_dtype)
    raise ValueError(f"{op.op} field '{name}' of kind {kind} has no MLIR spelling")


def _enum(op: OpRecord, name: str, code: int) -> str:
    if name == "acc_type":
        if code not in S.DTYPE_FROM_CODE:
            raise ValueError(f"{op.op} has no acc_type (code {code})")
        return element_type(S.DTYPE_FROM_CODE[code])
    attr, names, default = _ENUMS[name]
    value = names[code] if 0 < code < len(names) else default if code == 0 else None
    if value is not None:
        return f"#tosa.{attr}<{_MLIR_ENUM_NAMES.get((attr, value), value)}>"
    raise ValueError(f"{op.op} field '{name}' has the unknown code {code}")


def _bound(op: OpRecord, name: str, data: object, dtype: DType | None) -> str:
    if data is None or dtype is None:
        raise ValueError(f"{op.op} has no {name}")
    value = from_le_bytes(np.frombuffer(bytes(data), dtype=np.uint8), dtype, (1,))[0]
    return f"{typed_scalar(value, dtype)} : {element_type(dtype)}"


def typed_scalar(value: float | int | bool, dtype: DType) -> str:
    """A scalar attribute's value: a float as a round-tripping decimal (NaN and infinities as the hex bit
    pattern MLIR accepts for a float attribute), an integer in decimal."""
    if dtype.is_float:
        if np.isfinite(value):
            return float_literal(value)
        bits = to_le_bytes(np.array([value], dtype=np.float32), dtype).tobytes()
        return "0x" + bits[::-1].hex().upper()
    if dtype is DType.BOOL:
        return "true" if bool(value) else "false"
    return str(int(value))
