"""The pieces of MLIR's textual syntax the TOSA MLIR writer needs: types, literals, dense constants.

Tensor types print as ``tensor<2x?x3xf32>`` (a dim of −1 is dynamic, ``?``;
rank 0 is ``tensor<f32>``), shape values as ``!tosa.shape<N>``. Dense
constants print small ones and splats as literals (``dense<[1, 2]>``,
``dense<0.0>``) and large ones as ``dense<"0xHEX">``: the raw little-endian bytes of MLIR's own storage, which
for every TOSA element type but two is the bytes TOSA stores. INT4 is packed
two to a byte in TOSA but one byte per element in MLIR, and BOOL is always
written as ``true``/``false`` literals (MLIR's bit-packed ``i1`` storage is
best not relied on). Floats print so that MLIR reads back the very same
value: the shortest decimal that round-trips the double (every FP16, BF16 and
FP32 value is a double), with a ``.`` as MLIR's float grammar requires;
NaN and infinity only occur in the hex form, which is used for any tensor
holding one.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from ..ir.dtypes import DType
from .tensor_data import ELEMENT_BYTES, from_le_bytes

ELEMENT_TYPES = {
    DType.BOOL: "i1", DType.INT4: "i4", DType.INT8: "i8", DType.INT16: "i16", DType.INT32: "i32",
    DType.INT48: "i48", DType.FP16: "f16", DType.BF16: "bf16", DType.FP32: "f32",
}
LITERAL_LIMIT = 16   # constants with more elements than this (and not a splat) print as hex


def element_type(dtype: DType) -> str:
    if dtype not in ELEMENT_TYPES:
        raise ValueError(f"element type {getattr(dtype, 'name', dtype)} has no MLIR spelling")
    return ELEMENT_TYPES[dtype]


def dims_text(shape: Iterable[int]) -> str:
    return "x".join("?" if int(d) < 0 else str(int(d)) for d in shape)


def tensor_type(shape: Iterable[int], dtype: DType) -> str:
    dims = dims_text(shape)
    return f"tensor<{dims + 'x' if dims else ''}{element_type(dtype)}>"


def shape_type(rank: int) -> str:
    return f"!tosa.shape<{int(rank)}>"


def string_literal(text: str) -> str:
    """An MLIR string literal: quotes, backslashes and non-printable bytes escaped as ``\\XX``."""
    out = []
    for byte in text.encode("utf-8"):
        ch = chr(byte)
        if ch in '"\\' or not 0x20 <= byte < 0x7F:
            out.append(f"\\{byte:02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def float_literal(value: float) -> str:
    """A decimal MLIR reads back as exactly ``value`` (finite values only)."""
    text = repr(float(value))
    mantissa, _, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


def scalar_literal(value: float | int | bool | np.generic, dtype: DType) -> str:
    if dtype is DType.BOOL:
        return "true" if bool(value) else "false"
    if dtype.is_float:
        return float_literal(value)
    return str(int(value))


def dense_values(data: np.ndarray, dtype: DType, shape: tuple) -> str:
    """``dense<...>`` of a constant whose TOSA bytes are ``data`` (flat uint8, little-endian)."""
    shape = tuple(int(d) for d in shape)
    count = math.prod(shape)
    values = from_le_bytes(data, dtype, shape)
    if count == 0:
        return "dense<>"
    flat = values.reshape(-1)
    literal_ok = dtype is DType.BOOL or not dtype.is_float or bool(np.all(np.isfinite(flat)))
    if literal_ok and _is_splat(flat):
        return f"dense<{scalar_literal(flat[0], dtype)}>"
    if dtype is DType.BOOL or (literal_ok and count <= LITERAL_LIMIT):
        return f"dense<{_nested(values, dtype)}>"
    return f'dense<"0x{_storage_bytes(data, values, dtype, count).hex().upper()}">'


def _is_splat(flat: np.ndarray) -> bool:
    """Every element has the same bits (so 0.0 and -0.0 differ, as they do for TOSA)."""
    if flat.dtype.kind == "f":
        flat = flat.view(f"u{flat.dtype.itemsize}")
    return bool(np.all(flat == flat[0]))


def _nested(values: np.ndarray, dtype: DType) -> str:
    if values.ndim == 0:
        return scalar_literal(values[()], dtype)
    return "[" + ", ".join(_nested(v, dtype) for v in values) + "]"


def _storage_bytes(data: np.ndarray, values: np.ndarray, dtype: DType, count: int) -> bytes:
    """MLIR's raw storage of the elements: TOSA's bytes, except INT4 (one byte per element)."""
    if dtype is DType.INT4:
        return np.ascontiguousarray(values, dtype=np.int8).tobytes()
    return np.asarray(data, dtype=np.uint8)[:count * ELEMENT_BYTES[dtype]].tobytes()


def index_values(values: Iterable[int]) -> str:
    """``dense<[...]> : tensor<Nxindex>``, the value of a CONST_SHAPE (or a variable's shape)."""
    ints = [int(v) for v in values]
    if not ints:
        body = "dense<>"
    elif all(v == ints[0] for v in ints):
        body = f"dense<{ints[0]}>"
    else:
        body = "dense<[" + ", ".join(map(str, ints)) + "]>"
    return f"{body} : tensor<{len(ints)}xindex>"


def i64_array(values: Iterable[int]) -> str:
    return _array("i64", values)


def i32_array(values: Iterable[int]) -> str:
    return _array("i32", values)


def _array(kind: str, values: Iterable[int]) -> str:
    ints = [str(int(v)) for v in values]
    return f"array<{kind}: {', '.join(ints)}>" if ints else f"array<{kind}>"
