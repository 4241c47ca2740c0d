"""Numeric helpers shared by the kernels: result types, integer wrap and saturation, float rounding.

Integer kernels compute in int64 (every TOSA 1.0 intermediate fits) and then
narrow with :func:`wrap` (two's complement truncation, the spec's
``static_cast``/``truncate``) or :func:`saturate` (the spec's ``apply_clip_s``
followed by a cast). Float kernels compute in float32 and narrow with
:func:`float_result`, which also rounds BF16 values (stored as float32,
because numpy has no bfloat16) to bfloat16 precision.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir.dtypes import DType

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..ir.graph import Operation


def out_dtype(op: Operation, index: int = 0) -> DType:
    """The IR element type of result ``index`` of ``op``."""
    return op.results[index].type.dtype


def in_dtype(op: Operation, index: int = 0) -> DType:
    """The IR element type of operand ``index`` of ``op`` (its array may be stored wider)."""
    return op.operands[index].type.dtype


def int_range(dtype: DType, unsigned: bool = False) -> tuple:
    """``(minimum, maximum)`` of an integer type, read as signed or unsigned."""
    bits = dtype.bits
    if unsigned:
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def as_int64(x: ArrayLike) -> np.ndarray:
    return np.asarray(x).astype(np.int64, copy=False)


def wrap(x: ArrayLike, dtype: DType) -> np.ndarray:
    """Keep the low ``dtype.bits`` bits of integer ``x``, read as signed (two's complement)."""
    x = as_int64(x)
    if dtype in (DType.INT48, DType.INT4):
        half = np.int64(1 << (dtype.bits - 1))
        mask = np.int64((1 << dtype.bits) - 1)
        return (((x + half) & mask) - half).astype(dtype.numpy)
    return x.astype(dtype.numpy)


def saturate(x: ArrayLike, dtype: DType, unsigned: bool = False) -> np.ndarray:
    """Clip integer ``x`` to the range of ``dtype`` and store it in ``dtype``'s numpy type.

    An unsigned result keeps its bit pattern in the signed storage type (200 as
    an unsigned 8-bit value is stored as int8 -56), as TOSA has no unsigned dtypes.
    """
    lo, hi = int_range(dtype, unsigned)
    return wrap(np.clip(as_int64(x), lo, hi), dtype)


F32 = np.dtype(np.float32)     # numpy's own float32 dtype: a native float32 array's dtype is this object


def f32(x: ArrayLike) -> np.ndarray:
    """``x`` as float32 (a no-op for float32 arrays), the precision float kernels compute in."""
    if x.__class__ is np.ndarray and x.dtype is F32:     # the common case, without asarray's and astype's calls
        return x
    return np.asarray(x).astype(np.float32, copy=False)


def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bfloat16 (ties to even), kept in float32 storage."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = (bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)
    out = rounded.view(np.float32)
    return np.where(np.isnan(x), np.float32(np.nan), out)


def float_result(x: ArrayLike, dtype: DType) -> np.ndarray:
    """A float32 result narrowed to the IR float type ``dtype``.

    Overflow to infinity is the specified result: like every kernel helper, this runs under the caller's
    ``np.errstate(all="ignore")`` (the evaluator's loop, constant folding), so no warning is raised."""
    if dtype is DType.FP32 and x.__class__ is np.ndarray and x.dtype is F32:    # already the result
        return x
    x = np.asarray(x)
    if dtype is DType.FP32 and x.dtype == np.float32:     # already the result: no cast to overflow
        return x
    if dtype == DType.BF16:
        return round_bf16(x.astype(np.float32, copy=False))
    return x.astype(dtype.numpy, copy=False)


def bit_length(x: ArrayLike) -> np.ndarray:
    """Number of significant bits of each non-negative integer below 2**53 (0 for 0)."""
    _, exponent = np.frexp(np.asarray(x, dtype=np.float64))
    return exponent.astype(np.int64)


def check_range(x: ArrayLike, lo: int, hi: int, what: str) -> None:
    """Raise ValueError when an integer array has values outside ``[lo, hi]``."""
    x = np.asarray(x)
    if x.size and (x.min() < lo or x.max() > hi):
        bad = x[(x < lo) | (x > hi)].flat[0]
        raise ValueError(f"{what} must be in [{lo}, {hi}], got {bad}")
