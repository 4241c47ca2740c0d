"""Strided and reversed slices along one axis whose size may be symbolic.

Python, numpy and ONNX Slice share one rule for ``x[start:end:step]``: a
negative bound counts from the end, then bounds are clamped to ``[0, dim]``
for a positive step and to ``[-1, dim - 1]`` for a negative one, and the
slice has ``max(0, ceil((end - start) / step))`` elements. With a symbolic
dim those bounds and that count are dim expressions (min/max atoms where the
bounds cannot decide), so the result type stays exact and decays with the
symbols. TOSA has no strided SLICE; one axis is built from ops that all work
on symbolic dims and fold to static TOSA once the symbols are bound:
REVERSE the axis for a negative step, SLICE the rows from the first element
to the last, PAD the end by ``step - 1`` rows so the axis splits into
``count`` groups of ``step``, RESHAPE to ``[..., count, step, ...]``, SLICE
the first row of each group and RESHAPE the group axis away.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.constraints import Kind
from ..symbolic.expr import Dim, add, dmax, dmin, floordiv, mul, sub
from ..symbolic.scope import Decision, Rel, prove
from .dims import reshape, slice_
from .errors import ConvertError
from .limits import EMPTY_RESULT

if TYPE_CHECKING:
    from ..ir.graph import Value
    from .context import LoweringContext

BIG = 2 ** 31 - 1   # bounds at or beyond this mean "to the end" (ONNX writes INT64_MAX / INT64_MIN)


def strided_axis(ctx: LoweringContext, x: Value, axis: int, start: Dim, end: Dim, step: int) -> Value:
    """``x`` sliced ``start:end:step`` along ``axis`` (Python semantics; ``step`` != 0)."""
    if step == 0:
        raise ConvertError(f"Slice step on axis {axis} is 0")
    first, count = slice_extent(ctx, x.type.shape[axis], start, end, step, axis)
    if step < 0:
        x = ctx.b.emit(Op.REVERSE, x, attrs=A.AxisAttrs(axis))
        first = sub(sub(x.type.shape[axis], 1), first)   # the reversed position of the first element
    return take_every(ctx, x, axis, first, count, abs(step))


def slice_extent(ctx: LoweringContext, dim: Dim, start: Dim, end: Dim, step: int, axis: int) -> tuple:
    """(first element, element count) of ``start:end:step`` over ``dim``; the count may be 0."""
    if step > 0:
        s, e = (clamp_bound(ctx, dim, v, 0, dim, axis) for v in (start, end))
        return s, dmax(floordiv(add(sub(e, s), step - 1), step), 0)
    s = clamp_bound(ctx, dim, start, 0, sub(dim, 1), axis)
    e = clamp_bound(ctx, dim, end, -1, sub(dim, 1), axis)
    return s, dmax(floordiv(add(sub(s, e), -step - 1), -step), 0)


def clamp_bound(ctx: LoweringContext, dim: Dim, v: Dim, lo: Dim, hi: Dim, axis: int) -> Dim:
    """A slice bound wrapped (negative counts from the end) and clamped to ``[lo, hi]``.

    A wrapped negative bound is below ``dim`` and a non-negative one is at least 0, so each needs
    only the other clamp. A symbolic bound whose sign the bounds cannot decide is taken as
    non-negative, and the ledger records that fact."""
    if isinstance(v, int) and v >= BIG:
        return hi
    if isinstance(v, int) and v <= -BIG:
        return lo
    sign = prove(v, Rel.GE, 0)
    if sign is Decision.NO:
        return dmax(add(dim, v), lo)
    if sign is Decision.UNKNOWN:
        ctx.require(Kind.GE, v, 0, f"Slice bound {v} on axis {axis} must not be negative "
                                   "(a negative bound would count from the end)")
    return dmin(v, hi)


def take_every(ctx: LoweringContext, x: Value, axis: int, first: Dim, count: Dim, step: int) -> Value:
    """Elements ``first, first + step, ...`` (``count`` of them) of ``x`` along ``axis``."""
    shape = list(x.type.shape)
    if isinstance(count, int) and count <= 0:
        raise EMPTY_RESULT.refuse(f"the slice is empty on axis {axis}")
    span = add(mul(sub(count, 1), step), 1)                  # first element to last, inclusive
    rows = slice_(ctx, x, _along(len(shape), axis, first, 0), _with(shape, axis, span))
    if step == 1 or (isinstance(count, int) and count == 1):
        return rows
    padding = [0] * (2 * len(shape))
    padding[2 * axis + 1] = step - 1
    pad_value = 0.0 if x.type.dtype.is_float else 0
    rows = ctx.b.emit(Op.PAD, rows, attrs=A.PadAttrs(tuple(padding), pad_value))
    groups = reshape(ctx, rows, shape[:axis] + [count, step] + shape[axis + 1:])
    firsts = slice_(ctx, groups, [0] * (len(shape) + 1), shape[:axis] + [count, 1] + shape[axis + 1:])
    return reshape(ctx, firsts, _with(shape, axis, count))


def _along(rank: int, axis: int, value: Dim, fill: Dim) -> list:
    out = [fill] * rank
    out[axis] = value
    return out


def _with(shape: list, axis: int, value: Dim) -> list:
    out = list(shape)
    out[axis] = value
    return out
