"""Kernels of the TOSA chapter "Elementwise Binary Operators" (TABLE has its own module).

Operands broadcast size-1 dims (the IR equalizes ranks first; numpy
broadcasting is accepted anyway). Integer arithmetic is done in int64 and
truncated to the result type, the spec's ``static_cast``; overflow is
unpredictable in the spec, so no check is spent on it. MUL with a shift uses
the int64 product and the ``1 << (shift - 1)`` rounding term; INTDIV
truncates toward zero; shifts reject amounts outside ``[0, bits - 1]``, which
the spec leaves unpredictable.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ..ir.dtypes import DType
from .numeric import as_int64, f32, float_result, in_dtype, out_dtype, wrap

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext, KernelValue


# a per-channel operand of at most this many channels, against a tensor of at least this many elements,
# is tiled along a row (see _channel_rows): rows took 40 % to 60 % less time at 12 to 32 channels from 9,216
# elements, 15 % to 20 % less at 64 to 96 channels from 36,864 (the row is made in about 2 us)
_TILE_CHANNELS = 64
_TILE_MIN_SIZE = 1 << 14


def _float_op(op: Operation, a: KernelValue, b: KernelValue, fn: Callable[..., np.ndarray]) -> np.ndarray:
    """``fn`` in float32, narrowed to the result type (IEEE specials without warnings: the caller's errstate)."""
    a, b = f32(a), f32(b)
    rows = _channel_rows(a, b)
    if rows is not None:
        return float_result(fn(*rows).reshape(a.shape), out_dtype(op))
    rows = _channel_rows(b, a)
    if rows is not None:
        return float_result(fn(rows[1], rows[0]).reshape(b.shape), out_dtype(op))
    return float_result(fn(a, b), out_dtype(op))


def channel_row(small: np.ndarray, shape: tuple) -> Optional[np.ndarray]:
    """``small`` tiled along a row of W*C values when it is ``[1, ..., 1, C]`` against a result of ``shape``
    ``[..., W, C]`` with few channels and many elements, else None. Broadcast along C, numpy's inner loop runs C
    elements at a time; over whole rows it took half the time (112x112x16: 72 us against 137 us). The
    elementwise results are the same. Also the plan's in-place steps' rule (:mod:`.inplace`)."""
    if len(shape) < 2 or math.prod(shape) < _TILE_MIN_SIZE or shape[-1] > _TILE_CHANNELS \
            or small.ndim != len(shape) or small.shape[-1] != shape[-1] or small.size != shape[-1]:
        return None
    row = np.empty(shape[-2] * shape[-1], dtype=small.dtype)
    row.reshape(shape[-2], shape[-1])[...] = small.reshape(shape[-1])      # np.tile, without its Python overhead
    return row


def _channel_rows(big: np.ndarray, small: np.ndarray) -> Optional[tuple]:
    """``(big as rows of W*C, small tiled W times)`` (:func:`channel_row`) for a C-contiguous ``big``, else None."""
    if not big.flags.c_contiguous:
        return None
    row = channel_row(small, big.shape)
    return None if row is None else (big.reshape(-1, row.size), row)


def _arith(op: Operation, args: Arrays, fn: Callable[..., np.ndarray]) -> list:
    """``fn`` in float32 for float types, else in int64 truncated to the result type."""
    a, b = args
    dtype = out_dtype(op)
    if dtype.is_float:
        return [_float_op(op, a, b, fn)]
    return [wrap(fn(as_int64(a), as_int64(b)), dtype)]


def add(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return _arith(op, args, np.add)


def sub(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return _arith(op, args, np.subtract)


def pow_(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [_float_op(op, args[0], args[1], np.power)]


def mul(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    a, b = args
    shift, dtype = op.attrs.shift, out_dtype(op)
    if dtype.is_float:
        return [_float_op(op, a, b, np.multiply)]
    if not 0 <= shift <= 63 or (shift and in_dtype(op) != DType.INT32):
        raise ValueError(f"MUL shift must be 0 (or 0..63 for int32 operands), got {shift}")
    product = as_int64(a) * as_int64(b)
    if shift > 0:
        product = (product + (np.int64(1) << (shift - 1))) >> shift
    return [wrap(product, dtype)]


def intdiv(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    a, b = as_int64(args[0]), as_int64(args[1])
    if np.any(b == 0):
        raise ValueError("INTDIV by zero")
    quotient = (np.abs(a) // np.abs(b)) * (np.sign(a) * np.sign(b))   # truncates toward zero
    return [wrap(quotient, out_dtype(op))]


def maximum(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    a, b = args
    if np.asarray(a).dtype.kind == "f" and op.attrs.nan_mode == "IGNORE":
        return [np.fmax(a, b)]
    return [np.maximum(a, b)]


def minimum(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    a, b = args
    if np.asarray(a).dtype.kind == "f" and op.attrs.nan_mode == "IGNORE":
        return [np.fmin(a, b)]
    return [np.minimum(a, b)]


def bitwise_and(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.bitwise_and(args[0], args[1])]


def bitwise_or(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.bitwise_or(args[0], args[1])]


def bitwise_xor(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.bitwise_xor(args[0], args[1])]


def logical_and(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.logical_and(args[0], args[1])]


def logical_or(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.logical_or(args[0], args[1])]


def logical_xor(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.logical_xor(args[0], args[1])]


def _shift_amount(op: Operation, amount: KernelValue) -> np.ndarray:
    amount, bits = as_int64(amount), out_dtype(op).bits
    if amount.size and (amount.min() < 0 or amount.max() >= bits):
        raise ValueError(f"{op.op.name} shift amounts must be in [0, {bits - 1}] for "
                         f"{out_dtype(op).value} data, got {amount.min()}..{amount.max()}")
    return amount


def logical_left_shift(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    amount = _shift_amount(op, args[1])
    return [wrap(as_int64(args[0]) << amount, out_dtype(op))]


def logical_right_shift(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    amount = _shift_amount(op, args[1])
    unsigned = as_int64(args[0]) & ((1 << out_dtype(op).bits) - 1)   # zero_extend, then shift
    return [wrap(unsigned >> amount, out_dtype(op))]


def arithmetic_right_shift(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    value, amount = as_int64(args[0]), _shift_amount(op, args[1])
    result = value >> amount
    if op.attrs.round:
        # Round half up: add the last bit shifted out, when anything was shifted out.
        last_out = (value >> np.maximum(amount - 1, 0)) & 1
        result = result + np.where(amount > 0, last_out, 0)
    return [wrap(result, out_dtype(op))]
