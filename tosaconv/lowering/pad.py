"""Padding and tiling along axes, for both importers: edge, reflect and wrap rows; TILE by Index values.

TOSA PAD pads with one constant. The other modes build each padded axis as a
CONCAT of slices of the input (:func:`pad_axis`): TILEd edge rows, REVERSEd
inner rows (reflect: the edge row is not repeated), or the opposite end
(wrap). Slices stay valid with symbolic dims; the ledger records that
reflect pads stay below the dim and wrap pads do not exceed it.
"""
from __future__ import annotations

from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.constraints import Kind
from .dims import slice_
from .errors import ConvertError


def pad_axis(ctx, x, axis, lo: int, hi: int, mode: str):
    """``lo`` rows before and ``hi`` after ``x`` on ``axis``, in ``mode`` edge, reflect or wrap."""
    n = x.type.shape[axis]
    if mode == "reflect":
        ctx.require(Kind.GE, n - 1, max(lo, hi), f"reflect Pad of {max(lo, hi)} needs a dim of at least "
                    f"{max(lo, hi) + 1} on axis {axis}")
    if mode == "wrap":
        ctx.require(Kind.GE, n, max(lo, hi), f"wrap Pad of {max(lo, hi)} needs a dim of at least "
                    f"{max(lo, hi)} on axis {axis}")
    parts = []
    if lo:
        parts.append(_side(ctx, x, axis, lo, mode, front=True))
    parts.append(x)
    if hi:
        parts.append(_side(ctx, x, axis, hi, mode, front=False))
    return ctx.b.emit(Op.CONCAT, *parts, attrs=A.AxisAttrs(axis))


def _side(ctx, x, axis, p: int, mode: str, front: bool):
    """The ``p`` rows added before (``front``) or after ``x`` on ``axis``."""
    n = x.type.shape[axis]
    if mode == "edge":
        row = axis_rows(ctx, x, axis, 0 if front else n - 1, 1)
        return row if p == 1 else ctx.b.emit(Op.TILE, row, attrs=A.TileAttrs(_unit(x.type.rank, axis, p)))
    if mode == "reflect":
        rows = axis_rows(ctx, x, axis, 1 if front else n - 1 - p, p)
        return rows if p == 1 else ctx.b.emit(Op.REVERSE, rows, attrs=A.AxisAttrs(axis))
    return axis_rows(ctx, x, axis, n - p if front else 0, p)     # wrap: the opposite end


def axis_rows(ctx, x, axis, start, size):
    """Rows ``start:start+size`` of ``x`` along ``axis`` (a SLICE)."""
    starts = [0] * x.type.rank
    starts[axis] = start
    sizes = list(x.type.shape)
    sizes[axis] = size
    return slice_(ctx, x, starts, sizes)


def _unit(rank: int, axis: int, value: int) -> tuple:
    out = [1] * rank
    out[axis] = value
    return tuple(out)


def tile(ctx, x, repeats: list):
    """TILE ``x`` by ``repeats`` (Index values, one per axis), or DYN_TILE when a count is symbolic."""
    if len(repeats) != x.type.rank:
        raise ConvertError(f"Tile has {len(repeats)} repeats for a rank {x.type.rank} input")
    values = [r.type.value for r in repeats]
    if any(isinstance(v, int) and v < 1 for v in values):
        raise ConvertError(f"Tile repeats {values} include a count below 1; TOSA requires every dim to be >= 1")
    if all(isinstance(v, int) for v in values):
        return x if all(v == 1 for v in values) else ctx.b.emit(Op.TILE, x, attrs=A.TileAttrs(tuple(values)))
    for axis, v in enumerate(values):
        if not isinstance(v, int):
            ctx.require(Kind.GE, v, 1, f"Tile repeats on axis {axis} must be >= 1 (TOSA dims are >= 1)")
    return ctx.b.emit(Op.DYN_TILE, x, *repeats)
