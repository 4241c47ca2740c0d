"""An inverse square root in int32 fixed point, as TOSA integer ops (CLZ, shifts, TABLE, MUL with shift).

:func:`normalized_rsqrt` takes a non-negative int32 ``v`` (plus an optional constant fraction ``frac``
in [0, 1) that is part of the value) and returns ``(r, h)`` with ``1 / sqrt(v + frac) = r * 2**(h - 44)``
to a relative error below 2**-26, ``r`` in Q30 (at most ``2**29.5``) and ``h`` an int32 in [0, 15]:

* **normalization**: ``sh = (CLZ(v) - 1) & ~1`` (even, so ``sqrt(2**sh) = 2**h`` with ``h = sh / 2``)
  puts ``m = v << sh`` in [2**29, 2**31); the fraction adds ``floor(frac * 2**sh)`` from a 4-byte
  TABLE indexed by ``sh`` (below ``2**sh``, and ``m`` is a multiple of it below 2**31, so the sum stays
  below 2**31). ``v = 0`` is treated as 1;
* **first guess**: an int8 TABLE indexed by ``m >> 23`` (the top bits: 64..255) holds ``rsqrt(m / 2**28)``
  at each bucket's middle in Q20 (wide_table: three int8 TABLEs), relative error at most 2**-8;
* **Newton-Raphson**: ``y <- y * (3 - m y^2) / 2``, three steps (the error squares each time, to the
  rounding of the Q30 arithmetic), in MULs with shift whose int64 products never leave int32 results:
  ``y^2`` in Q30, ``m y^2`` and ``3 - m y^2`` in Q29.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op
from .int32_ops import Int32Ops
from .tables import int32_table, wide_table

if TYPE_CHECKING:
    from ..ir.graph import Value
    from .context import LoweringContext

GUESS_SHIFT = 23          # m >> 23 indexes the first guess (m in [2**29, 2**31): 64..255)
NEWTON_STEPS = 3


def normalized_rsqrt(ctx: LoweringContext, v: Value, frac: float = 0.0) -> tuple:
    """``(r, h)`` for non-negative int32 ``v`` (see the module docstring)."""
    ops = Int32Ops(ctx, v.type.rank)
    v = ops.maximum(v, 1)
    sh = ops.bit_and(ops.sub(ops.clz(v), 1), ~1)
    m = ops.shift_left(v, sh)
    if frac:
        m = ops.add(m, int32_table(ctx, _int8(ctx, sh), _fraction_entries(frac)))
    index = _int8(ctx, ops.sub(ops.rdbpot_floor(m, GUESS_SHIFT), 128))
    y = ops.shift_left(wide_table(ctx, index, _guess_entries()), 10)
    for _ in range(NEWTON_STEPS):
        y2 = _mul(ctx, y, y, 30)
        t = ops.sub(3 << 29, _mul(ctx, m, y2, 29))
        y = _mul(ctx, y, t, 30)
    return y, ops.rdbpot_floor(sh, 1)


def _mul(ctx: LoweringContext, a: Value, b: Value, shift: int) -> Value:
    return ctx.b.emit(Op.MUL, a, b, attrs=A.MulAttrs(shift))


def _int8(ctx: LoweringContext, v: Value) -> Value:
    return ctx.b.emit(Op.CAST, v, attrs=A.CastAttrs(DType.INT8))


def _fraction_entries(frac: float) -> np.ndarray:
    """``floor(frac * 2**sh)`` at TABLE position ``sh + 128`` (sh in [0, 30]; other positions unused)."""
    entries = np.zeros(256, dtype=np.int64)
    sh = np.arange(31)
    entries[sh + 128] = np.floor(frac * np.exp2(sh.astype(np.float64))).astype(np.int64)
    return entries


def _guess_entries() -> np.ndarray:
    """``rsqrt`` of the middle of each bucket ``j = m >> 23`` (m / 2**28 in [j/32, (j+1)/32)), in Q20."""
    j = np.arange(256, dtype=np.float64)       # TABLE position j holds stored index j - 128, i.e. m >> 23 == j
    middle = np.maximum(j + 0.5, 64.5) / 32.0
    return np.rint(np.exp2(20) / np.sqrt(middle)).astype(np.int64)
