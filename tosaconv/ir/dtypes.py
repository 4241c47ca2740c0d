"""Element types of the IR and their TOSA and numpy counterparts.

The IR uses TOSA's element types. ``INDEX`` is the seed's Index Type: a signed
64-bit scalar that carries a dimension value; it exists only in symbolic
programs and never reaches a static ``.tosa``. ONNX int64 data becomes INT32,
because TOSA 1.0 has no 64-bit tensors.
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


class DType(enum.Enum):
    __hash__ = object.__hash__   # a member is its own identity; Enum's hash is a Python call
    BOOL = "bool"
    INT4 = "i4"
    INT8 = "i8"
    INT16 = "i16"
    INT32 = "i32"
    INT48 = "i48"
    FP16 = "f16"
    BF16 = "bf16"
    FP32 = "f32"
    INDEX = "index"

    __hash__ = object.__hash__    # members are singletons: hashing by identity spares Enum's Python-level hash

    # Looked up by the member's value string: an Enum member's own hash and equality run in Python,
    # and the interpreter asks these once or twice per op.
    @property
    def is_float(self) -> bool:
        return self._value_ in _FLOAT_VALUES

    @property
    def is_int(self) -> bool:
        return self._value_ in _INT_VALUES

    @property
    def numpy(self) -> np.dtype[Any]:
        return _NUMPY_BY_VALUE[self._value_]

    @property
    def bits(self) -> int:
        return _BITS_BY_VALUE[self._value_]


_NUMPY = {
    DType.BOOL: np.bool_, DType.INT4: np.int8, DType.INT8: np.int8, DType.INT16: np.int16,
    DType.INT32: np.int32, DType.INT48: np.int64, DType.FP16: np.float16, DType.BF16: np.float32,
    DType.FP32: np.float32, DType.INDEX: np.int64,
}

_BITS = {
    DType.BOOL: 1, DType.INT4: 4, DType.INT8: 8, DType.INT16: 16, DType.INT32: 32, DType.INT48: 48,
    DType.FP16: 16, DType.BF16: 16, DType.FP32: 32, DType.INDEX: 64,
}

_FLOAT_VALUES = frozenset(d.value for d in (DType.FP16, DType.BF16, DType.FP32))
_INT_VALUES = frozenset(d.value for d in (DType.INT4, DType.INT8, DType.INT16, DType.INT32, DType.INT48, DType.INDEX))
_NUMPY_BY_VALUE = {d.value: np.dtype(t) for d, t in _NUMPY.items()}
_BITS_BY_VALUE = {d.value: b for d, b in _BITS.items()}

# Values of the official schema's ``enum DType:uint32`` (tosa.fbs).
TOSA_DTYPE_CODE = {
    DType.BOOL: 1, DType.INT4: 2, DType.INT8: 3, DType.INT16: 4, DType.INT32: 5, DType.INT48: 6,
    DType.FP32: 7, DType.FP16: 8, DType.BF16: 9,
}
SHAPE_DTYPE_CODE = 10


_FROM_NUMPY = {
    np.dtype(np.bool_): DType.BOOL, np.dtype(np.int8): DType.INT8, np.dtype(np.uint8): DType.INT8,
    np.dtype(np.int16): DType.INT16, np.dtype(np.int32): DType.INT32, np.dtype(np.int64): DType.INT32,
    np.dtype(np.float16): DType.FP16, np.dtype(np.float32): DType.FP32, np.dtype(np.float64): DType.FP32,
}


def from_numpy(dt: "DTypeLike") -> DType:
    """The IR type for a numpy dtype (int64 data narrows to INT32)."""
    dt = np.dtype(dt)
    if dt not in _FROM_NUMPY:
        raise TypeError(f"element type {dt} has no TOSA equivalent")
    return _FROM_NUMPY[dt]
