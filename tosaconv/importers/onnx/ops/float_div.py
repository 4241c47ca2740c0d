"""Float32 division from TOSA's MUL, ADD and SUB: ``x / s`` as ``x * (1/s)`` plus one exact correction.

TOSA has no float division. ``x * fl(1/s)`` can miss the correctly rounded
quotient by an ulp, and quantization then rounds the quotient to an integer,
so an ulp decides ties: ONNX's ``-2.5 / fl(5/255)`` is ``-127.4999955``
(rounds to -127) while ``-2.5 * fl(255/5)`` is exactly ``-127.5`` (rounds to
-128). One Newton step fixes that: ``q1 = q0 + (x - q0*s) * r`` with the
residual ``x - q0*s`` computed exactly by Dekker's TwoProduct (Veltkamp's
split of each float32 into two 12-bit halves, whose products are exact).
``q1`` is then the correctly rounded quotient except when ``x/s`` lies
within a tiny fraction of an ulp of a rounding boundary. Every step is a
float32 MUL/ADD/SUB rounded to nearest, which the numpy interpreter and the
reference model both compute exactly so. A constant divisor is split in numpy.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..context import ImportContext

SPLITTER = 4097.0   # 2**12 + 1, Veltkamp's constant for a 24-bit significand


def divide(ctx: ImportContext, x: Value, s: Union[np.ndarray, Value], reciprocal: Union[np.ndarray, Value]) -> Value:
    """``x / s`` in float32; ``s`` and ``reciprocal`` are numpy constants or IR values (broadcasting)."""
    q0 = _mul(ctx, x, reciprocal)
    product, error = _two_product(ctx, q0, s)
    residual = ctx.b.emit(Op.SUB, ctx.b.emit(Op.SUB, x, product), error)
    return ctx.b.emit(Op.ADD, q0, _mul(ctx, residual, reciprocal))


def _two_product(ctx: ImportContext, a: Value, b: Union[np.ndarray, Value]) -> tuple[Value, Value]:
    """``(p, e)`` with ``p = fl(a*b)`` and ``a*b = p + e`` exactly (when nothing overflows)."""
    p = _mul(ctx, a, b)
    a_hi, a_lo = _split(ctx, a)
    b_hi, b_lo = _split(ctx, b)
    e = ctx.b.emit(Op.SUB, _mul(ctx, a_hi, b_hi), p)
    e = ctx.b.emit(Op.ADD, e, _mul(ctx, a_hi, b_lo))
    e = ctx.b.emit(Op.ADD, e, _mul(ctx, a_lo, b_hi))
    return p, ctx.b.emit(Op.ADD, e, _mul(ctx, a_lo, b_lo))


def _split(ctx: ImportContext, a: Union[np.ndarray, Value]) -> tuple[Union[np.ndarray, Value], Union[np.ndarray, Value]]:
    if isinstance(a, np.ndarray):
        a = a.astype(np.float32)
        c = a * np.float32(SPLITTER)
        hi = c - (c - a)
        return hi, a - hi
    c = _mul(ctx, a, np.full((1,) * a.type.rank, SPLITTER, np.float32))
    hi = ctx.b.emit(Op.SUB, c, ctx.b.emit(Op.SUB, c, a))
    return hi, ctx.b.emit(Op.SUB, a, hi)


def _mul(ctx: ImportContext, a: Value, b: Union[np.ndarray, Value]) -> Value:
    a, b = (ctx.b.const(v) if isinstance(v, np.ndarray) else v for v in (a, b))
    return ctx.b.emit(Op.MUL, a, b, attrs=A.MulAttrs(0))
