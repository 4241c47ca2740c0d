"""TOSA TABLE lookups of values computed at import time, for any importer's integer lowering.

**Why a table is exact.** An int8 elementwise function maps each of the 256
input values to one output value, whatever arithmetic it uses inside, so a
converter can evaluate that arithmetic once for the 256 values and emit one
TOSA TABLE (:func:`int8_table`). TOSA's int8 TABLE reads entry ``stored +
128`` and yields int8 entries; uint8 results are stored by their bits (the
convention both importers share), so no RESCALE is needed around the lookup.

**int32-valued tables.** :func:`int32_table` looks up an int32 per int8 index
with four byte tables and reassembles the bytes with CAST, BITWISE_AND,
LOGICAL_LEFT_SHIFT and BITWISE_OR.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike

    from ..ir.graph import Value
    from .context import LoweringContext


def int8_table(ctx: LoweringContext, x: Value, entries: ArrayLike, out_range: tuple) -> Value:
    """One TOSA TABLE on int8 storage ``x``; ``entries`` are output values in TABLE order (storage
    -128..127), each within ``out_range`` (e.g. (0, 255) for uint8 results, stored by their bits)."""
    entries = np.asarray(entries, dtype=np.int64)
    lo, hi = out_range
    if entries.min() < lo or entries.max() > hi:
        raise ValueError("table entries outside the output type's range")
    table = (entries & 0xFF).astype(np.uint8).view(np.int8)   # uint8 results keep their bits
    return ctx.b.emit(Op.TABLE, x, attrs=A.TableAttrs(table))


def int32_table(ctx: LoweringContext, index: Value, entries: ArrayLike) -> Value:
    """An int32 per int8 ``index`` value: ``entries`` (256 non-negative int32s in TABLE order)."""
    entries = np.asarray(entries, dtype=np.int64)
    if entries.min() < 0 or entries.max() > (1 << 31) - 1:
        raise ValueError("int32 table entries must be non-negative int32 values")
    result = None
    for byte in range(4):
        part = ((entries >> (8 * byte)) & 0xFF).astype(np.uint8).view(np.int8)
        value = ctx.b.emit(Op.CAST, ctx.b.emit(Op.TABLE, index, attrs=A.TableAttrs(part)),
                           attrs=A.CastAttrs(DType.INT32))
        if byte < 3:
            value = ctx.b.emit(Op.BITWISE_AND, value, int_const(ctx, 0xFF, index.type.rank))
        if byte:
            value = ctx.b.emit(Op.LOGICAL_LEFT_SHIFT, value, int_const(ctx, 8 * byte, index.type.rank))
            value = ctx.b.emit(Op.BITWISE_OR, result, value)
        result = value
    return result


def wide_table(ctx: LoweringContext, index: Value, entries: ArrayLike, piece_bits: int = 7) -> Value:
    """An int32 per int8 ``index`` value: ``entries`` (256 signed values in TABLE order, magnitudes below
    ``2**(3 * piece_bits)``) from three int8 TABLEs, the signed top piece and two unsigned
    ``piece_bits``-bit pieces, combined with MUL and ADD (two ops fewer than :func:`int32_table`'s bytes)."""
    entries = np.asarray(entries, dtype=np.int64)
    top = entries >> (2 * piece_bits)
    if top.min() < -128 or top.max() > 127:
        raise ValueError(f"table entries need at most {3 * piece_bits} magnitude bits")
    mask = (1 << piece_bits) - 1
    result = None
    for part in (top, (entries >> piece_bits) & mask, entries & mask):
        value = ctx.b.emit(Op.CAST, ctx.b.emit(Op.TABLE, index, attrs=A.TableAttrs(part.astype(np.int8))),
                           attrs=A.CastAttrs(DType.INT32))
        if result is not None:
            shifted = ctx.b.emit(Op.MUL, result, int_const(ctx, 1 << piece_bits, index.type.rank),
                                 attrs=A.MulAttrs(0))
            value = ctx.b.emit(Op.ADD, shifted, value)
        result = value
    return result


def int_const(ctx: LoweringContext, value: int, rank: int, dtype: DTypeLike = np.int32) -> Value:
    """An int32 constant of ``rank`` ones, ready to broadcast."""
    return ctx.b.const(np.full((1,) * rank, value, dtype=dtype))
