"""Tensor data as TOSA stores it: little-endian bytes per element type.

:func:`to_le_bytes` turns an array into the ``uint8`` view of its TOSA
encoding, copying at most once (only when the dtype or byte order differs),
so large weights are not duplicated on their way into the flatbuffer.
:func:`from_le_bytes` is the inverse and, where the bytes already have numpy's
layout, returns a zero-copy read-only view. BOOL is one byte per element,
INT48 six, BF16 the top half of a float32 (rounded to nearest even). INT4 is
packed two to a byte, the first element in the low nibble (as the official
serialization library packs it); it is held as int8 values in [-7, 7], the official range.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.dtypes import DType

# Numpy layouts of the element types stored as-is.
_LE = {
    DType.BOOL: "<u1", DType.INT8: "<i1", DType.INT16: "<i2", DType.INT32: "<i4",
    DType.FP16: "<f2", DType.FP32: "<f4",
}
_INT_RANGE = {
    DType.INT4: (-7, 7), DType.INT8: (-2**7, 2**7 - 1), DType.INT16: (-2**15, 2**15 - 1),
    DType.INT32: (-2**31, 2**31 - 1), DType.INT48: (-2**47, 2**47 - 1),
}
ELEMENT_BYTES = {DType.BOOL: 1, DType.INT8: 1, DType.INT16: 2, DType.INT32: 4, DType.INT48: 6,
                 DType.FP16: 2, DType.BF16: 2, DType.FP32: 4}


def to_le_bytes(values: np.ndarray, dtype: DType) -> np.ndarray:
    """The TOSA encoding of ``values`` as a flat ``uint8`` array (raises ValueError if impossible)."""
    arr = np.asarray(values)
    if dtype not in ELEMENT_BYTES and dtype != DType.INT4:
        raise ValueError(f"{dtype.name} data cannot be written yet")
    if dtype in _INT_RANGE:
        _check_int_range(arr, dtype)
    if dtype == DType.BOOL:
        arr = np.ascontiguousarray(arr).astype(bool, copy=False)
        return arr.reshape(-1).view(np.uint8)
    if dtype == DType.INT48:
        return _int48_bytes(arr)
    if dtype == DType.INT4:
        return _int4_bytes(arr)
    if dtype == DType.BF16:
        return _bf16_bytes(arr)
    arr = np.ascontiguousarray(arr).astype(_LE[dtype], copy=False)
    return arr.reshape(-1).view(np.uint8)


def le_array(values: np.ndarray, dtype: DType) -> np.ndarray:
    """Like :func:`to_le_bytes`, but a type stored as-is keeps its shape and strides (a transposed
    weight stays a view): the serializer copies its elements, in C order, straight into the output."""
    arr = np.asarray(values)
    if dtype not in _LE or dtype == DType.BOOL:
        return to_le_bytes(arr, dtype)
    if dtype in _INT_RANGE:
        _check_int_range(arr, dtype)
    return arr.astype(_LE[dtype], copy=False)


def _check_int_range(arr: np.ndarray, dtype: DType) -> None:
    if arr.size == 0 or arr.dtype.kind == "b":
        return
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr) & (arr == np.round(arr))):
        raise ValueError(f"{dtype.name} data holds non-integer values")
    # Same-width unsigned data (uint8 for INT8) is reinterpreted bit for bit, as TOSA's
    # unsigned flags expect; only wider sources are range-checked.
    if arr.dtype.kind in "iu" and arr.dtype.itemsize * 8 <= dtype.bits:
        return
    lo, hi = _INT_RANGE[dtype]
    if arr.min() < lo or arr.max() > hi:
        raise ValueError(f"data range [{arr.min()}, {arr.max()}] does not fit {dtype.name}")


def _int48_bytes(arr: np.ndarray) -> np.ndarray:
    wide = np.ascontiguousarray(arr).astype("<i8", copy=False).reshape(-1)
    return np.ascontiguousarray(wide.view(np.uint8).reshape(-1, 8)[:, :6]).reshape(-1)


def _int4_bytes(arr: np.ndarray) -> np.ndarray:
    nibbles = (np.ascontiguousarray(arr).astype(np.int64).reshape(-1) & 0xF).astype(np.uint8)
    if nibbles.size % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return nibbles[0::2] | (nibbles[1::2] << 4)


def _int4_values(raw: np.ndarray, count: int) -> np.ndarray:
    nibbles = np.empty(raw.size * 2, dtype=np.uint8)
    nibbles[0::2], nibbles[1::2] = raw & 0xF, raw >> 4
    return (nibbles[:count].astype(np.int8) ^ 8) - 8   # sign-extend the 4-bit values


def _bf16_bytes(arr: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(arr).astype("<f4").reshape(-1).view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(arr, dtype=np.float32).reshape(-1))
    rounded[nan] = 0x7FC0
    return rounded.astype("<u2").view(np.uint8)


def flat_bytes(data: bytes | memoryview | np.ndarray) -> np.ndarray:
    """A record's constant data as flat C-order ``uint8`` bytes: :func:`le_array` keeps a weight stored
    as-is in its own shape and strides (a transposed view), which readers of the bytes must flatten."""
    if isinstance(data, np.ndarray) and (data.dtype != np.uint8 or data.ndim != 1 or not data.flags.c_contiguous):
        return np.ascontiguousarray(data).reshape(-1).view(np.uint8)
    return data


def from_le_bytes(data: bytes | memoryview | np.ndarray, dtype: DType, shape: tuple) -> np.ndarray:
    """The array of ``shape`` encoded in ``data`` (raises ValueError on a size mismatch)."""
    if dtype not in ELEMENT_BYTES and dtype != DType.INT4:
        raise ValueError(f"{dtype.name} data cannot be read yet")
    count = math.prod(int(d) for d in shape)
    raw = np.frombuffer(data, dtype=np.uint8)
    need = (count + 1) // 2 if dtype == DType.INT4 else count * ELEMENT_BYTES[dtype]
    if raw.size < need:
        raise ValueError(f"{dtype.name} data of shape {list(shape)} needs {need} bytes, has {raw.size}")
    raw = raw[:need]
    if dtype == DType.INT4:
        return _int4_values(raw, count).reshape(shape)
    if dtype == DType.BOOL:
        return (raw != 0).reshape(shape)
    if dtype == DType.INT48:
        return _int48_values(raw).reshape(shape)
    if dtype == DType.BF16:
        return (raw.view("<u2").astype("<u4") << 16).view("<f4").reshape(shape)
    return raw.view(_LE[dtype]).reshape(shape)


def _int48_values(raw: np.ndarray) -> np.ndarray:
    six = raw.reshape(-1, 6)
    wide = np.zeros((six.shape[0], 8), dtype=np.uint8)
    wide[:, :6] = six
    wide[:, 6:] = np.where(six[:, 5:6] >= 0x80, 0xFF, 0)
    return wide.reshape(-1).view("<i8")
