"""Requantization that rounds as ONNX does: half to even, also at exact ties.

ONNX's QuantizeLinear rounds half to even; TOSA's RESCALE (SINGLE_ROUND)
rounds half up. They differ only when ``r = acc * multiplier / 2**shift``
is exactly ``k + 1/2``. For a scale with many significant bits that never
happens in practice (one accumulator residue class in ``2**shift``), but a
dyadic scale ratio (equal scales around ``x + 1``, a hard-swish's ``x + 3``,
a mean over 2**k elements) makes *every* element a tie, and a one-unit bias on
most elements then grows through the layers after it. So when the scale is
such a ratio (:func:`tie_prone`), the rounding is made exact with integer
ops: ``up = RESCALE(c)`` is ``floor(r + 1/2)``, ``down = -RESCALE(-c)`` is
``ceil(r - 1/2)``; they differ by one exactly at a tie, where the even one of
the two is taken. Otherwise one RESCALE is used, as before.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

import numpy as np

from ....ir.dtypes import DType
from ....ir.graph import Value
from ....ir.ops import Op
from ....lowering.quant_scale import multipliers_shifts, value_bounds
from .qtypes import clamp_int32, rescale

if TYPE_CHECKING:
    from ..context import ImportContext

TIE_BITS = 16        # a scale whose fraction has at most this many bits makes ties likely


def tie_prone(scales: Union[float, np.ndarray]) -> bool:
    """True when ``acc * scale`` can be an exact half for one accumulator value in 2**TIE_BITS or more."""
    mults, shifts = multipliers_shifts(scales)
    for m, s in zip(mults, shifts):
        m, s = int(m), int(s)
        while s > 0 and m % 2 == 0:
            m, s = m // 2, s - 1
        if 0 < s <= TIE_BITS:
            return True
    return False


def requantize_int8(ctx: ImportContext, v: Value, scales: Union[float, np.ndarray], *, input_zp: int = 0, output_zp: int = 0) -> Value:
    """``round_half_even((v - input_zp) * scale) + output_zp``, saturated to int8 (``v``: int8 or int32)."""
    if not tie_prone(scales):
        return rescale(ctx, _in_range(ctx, v, scales, symmetric=False), scales, DType.INT8,
                       input_zp=input_zp, output_zp=output_zp)
    return rescale(ctx, round_half_even(ctx, v, scales, input_zp=input_zp), 1.0, DType.INT8, output_zp=output_zp)


def round_half_even(ctx: ImportContext, v: Value, scales: Union[float, np.ndarray], *, input_zp: int = 0) -> Value:
    """``round_half_even((v - input_zp) * scale)`` as int32 (exact for int8 data and int32 accumulators
    whose clamped part saturates any 8-bit result anyway)."""
    c = v if v.type.dtype == DType.INT32 and not input_zp else rescale(ctx, v, 1.0, DType.INT32, input_zp=input_zp)
    if not tie_prone(scales):
        return rescale(ctx, _in_range(ctx, c, scales, symmetric=False), scales, DType.INT32)
    c = _in_range(ctx, c, scales, symmetric=True)
    zero = ctx.b.scalar_like(0, c.type)
    up = rescale(ctx, c, scales, DType.INT32)
    down = ctx.b.emit(Op.SUB, zero, rescale(ctx, ctx.b.emit(Op.SUB, zero, c), scales, DType.INT32))
    tie = ctx.b.emit(Op.SUB, up, down)                                    # 1 at an exact tie, else 0
    odd = ctx.b.emit(Op.BITWISE_AND, up, ctx.b.scalar_like(1, c.type))
    return ctx.b.emit(Op.SUB, up, ctx.b.emit(Op.BITWISE_AND, tie, odd))


def _in_range(ctx: ImportContext, v: Value, scales: Union[float, np.ndarray], symmetric: bool) -> Value:
    """Clamp int32 ``v`` into the input range ``apply_scale_32`` accepts for each channel's shift (exact for
    8-bit results, which saturate beyond it); ``symmetric`` also keeps ``-v`` in range."""
    if v.type.dtype != DType.INT32:
        return v
    bounds = np.array([value_bounds([s]) for s in multipliers_shifts(scales)[1]], dtype=np.int64)
    if symmetric:        # -v must fit int32 and the bounds too
        bounds[:, 0] = np.maximum(bounds[:, 0] + 1, -(1 << 31) + 1)
    elif bounds[:, 0].max() <= -(1 << 31) and bounds[:, 1].min() >= (1 << 31) - 1:
        return v
    bounds = np.clip(bounds, -(1 << 31), (1 << 31) - 1)     # a channel that needs no clamp gets the int32 range
    if np.all(bounds == bounds[0]):
        return clamp_int32(ctx, v, int(bounds[0, 0]), int(bounds[0, 1]))
    return clamp_int32(ctx, v, bounds[:, 0], bounds[:, 1])

