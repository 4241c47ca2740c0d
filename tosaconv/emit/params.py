"""Constant operands of TOSA 1.0 ops, and the enum fields of attribute tables.

TOSA 1.0 passes what the IR keeps as attributes (zero points, MUL's shift,
RESHAPE/PAD/SLICE/TILE/RESIZE shapes, TABLE's table, RESCALE's multiplier and
shift) as operands produced by CONST or CONST_SHAPE. A :class:`Param` is one
such operand on its way out; the helpers here build them from attribute values
and turn folded operand arrays back into attribute values. Problems raise
plain ``ValueError``; the writer and reader add the op and its location.
"""
from __future__ import annotations

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import Iterable, Optional

import numpy as np

from ..ir.dtypes import DType
from .schema import DTYPE_CODE, DTYPE_FROM_CODE

_UNSIGNED = {DType.INT8: np.uint8, DType.INT16: np.uint16}
_SIGNED = {DType.INT8: np.int8, DType.INT16: np.int16}


@dataclass(frozen=True, eq=False)
class Param:
    role: str                 # operand name in the spec: "input_zp", "shift", "shape"...
    dtype: Optional[DType]    # element type; None for a SHAPE operand
    values: np.ndarray        # 1-D


def shape_param(role: str, values: Iterable[int]) -> Param:
    vals = [int(v) for v in values]
    if any(v < 0 for v in vals) and role not in ("offset", "border"):
        raise ValueError(f"{role} {vals} has a negative entry (a dim that is not static?)")
    return Param(role, None, np.array(vals, dtype=np.int64))


def scalar_param(role: str, value: float | int | bool, dtype: DType, unsigned: bool = False) -> Param:
    """A [1] tensor of ``dtype`` holding ``value``.

    With ``unsigned`` (RESCALE's input/output_unsigned), INT8/INT16 zero points may be given as
    unsigned values (128, 32768): they are stored as the same bits, which the spec zero-extends.
    An int ``value`` (a zero point, a shift: a program has a few, on every convolution) gives one shared,
    read-only Param per role, value and type, made once (:data:`_SCALARS`).
    """
    key = (role, value, dtype, unsigned) if type(value) is int else None
    known = _SCALARS.get(key) if key is not None else None
    if known is not None:
        return known
    param = _scalar_param(role, value, dtype, unsigned)
    if key is not None and len(_SCALARS) < _SCALARS_LIMIT:
        param.values.flags.writeable = False
        _SCALARS[key] = param
        _KEYS[id(param)] = _content_key(param)
    return param


_SCALARS: dict[tuple[object, ...], Param] = {}   # (role, int value, dtype, unsigned) -> its Param, kept for the process
_SCALARS_LIMIT = 4096
_KEYS: dict[int, tuple[object, ...]] = {}        # id of a Param in _SCALARS (alive for good) -> param_key of it


def param_key(param: Param) -> tuple[object, ...]:
    """What makes two params one constant in a block: their type, shape and bytes (worked out once for a
    shared scalar Param)."""
    key = _KEYS.get(id(param))
    return key if key is not None else _content_key(param)


def _content_key(param: Param) -> tuple[object, ...]:
    values = np.asarray(param.values)
    return ("param", param.dtype, values.shape, values.dtype.str, values.tobytes())


def _scalar_param(role: str, value: float | int | bool, dtype: DType, unsigned: bool) -> Param:
    if dtype.is_float:
        return Param(role, dtype, np.array([float(value)], dtype=np.float32))
    ints = int(value)
    if unsigned and dtype in _UNSIGNED and ints >= 0:
        arr = _fitting(ints, _UNSIGNED[dtype], role).view(_SIGNED[dtype])
    else:
        arr = _fitting(ints, dtype.numpy, role)
    return Param(role, dtype, arr)


def vector_param(role: str, values: Iterable[int], dtype: DType) -> Param:
    ints = [int(v) for v in values]
    info = np.iinfo(dtype.numpy)
    bad = [v for v in ints if not info.min <= v <= info.max]
    if bad:
        raise ValueError(f"{role} value {bad[0]} does not fit {dtype.name}")
    return Param(role, dtype, np.array(ints, dtype=dtype.numpy))


def _fitting(value: int, np_type: type | np.dtype, role: str) -> np.ndarray:
    info = np.iinfo(np_type)
    if not info.min <= value <= info.max:
        raise ValueError(f"{role} {value} does not fit {np.dtype(np_type).name}")
    return np.array([value], dtype=np_type)


# -- folding operands back --------------------------------------------------------

def scalar_value(arr: np.ndarray, role: str, unsigned: bool = False) -> float | int | bool:
    """The single value of a folded [1] operand: int for integer data, float for float data."""
    arr = np.asarray(arr)
    if arr.shape != (1,):   # TOSA 1.0: zero points, MUL's shift and pad_const are [1] tensors
        raise ValueError(f"{role} must be a tensor of shape [1], got shape {list(arr.shape)}")
    flat = arr.reshape(-1)
    if flat.dtype.kind == "f":
        return float(flat[0])
    if unsigned and flat.dtype.itemsize in (1, 2):
        return int(flat.view(np.uint8 if flat.dtype.itemsize == 1 else np.uint16)[0])
    return int(flat[0])


def int_value(arr: np.ndarray, role: str, unsigned: bool = False) -> int:
    value = scalar_value(arr, role, unsigned)
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{role} {value} is not an integer")
        return int(value)
    return value


def int_tuple(arr: np.ndarray) -> tuple:
    return tuple(int(v) for v in np.asarray(arr).reshape(-1))


# -- enum fields ------------------------------------------------------------------

def enum_code(names: tuple, value: str, what: str) -> int:
    if value not in names[1:]:
        raise ValueError(f"{what} {value!r} is not one of {', '.join(names[1:])}")
    return names.index(value)


def enum_name(names: tuple, code: int, what: str, default: Optional[str] = None) -> str:
    if code == 0 and default is not None:
        return default
    if not 0 < code < len(names):
        raise ValueError(f"{what} code {code} is not a known value")
    return names[code]


def acc_code(dtype: DType) -> int:
    if dtype not in DTYPE_CODE:
        raise ValueError(f"acc_type {dtype.name} has no TOSA code")
    return DTYPE_CODE[dtype]


def acc_dtype(code: int) -> DType:
    if code not in DTYPE_FROM_CODE:
        raise ValueError(f"acc_type code {code} is missing or unknown")
    return DTYPE_FROM_CODE[code]
