"""Padding and tiling along axes, for both importers: edge, reflect and wrap rows; TILE by Index values.

TOSA PAD pads with one constant. The other modes build each padded axis as a
CONCAT of slices of the input (:func:`pad_axis`): TILEd edge rows, REVERSEd
inner rows (reflect: the edge row is not repeated), or the opposite end
(wrap), or REVERSEd rows from the edge (symmetric: TFLite's MIRROR_PAD).
Slices stay valid with symbolic dims; the ledger records that reflect pads
stay below the dim and wrap and symmetric pads do not exceed it.

Pad amounts known at import go through :func:`pad_static` (a SLICE crops
negative amounts, then one PAD or the per-axis CONCATs). Amounts computed
from symbolic dims (an STFT front-end padding its time axis to a multiple of
the hop) are Index values: :func:`dyn_pad` emits the data-dependent DYN_PAD,
whose decay rule calls :func:`pad_static` once binding makes them ints, so
both paths share one lowering (an amount that binds to 0 or to a crop is
handled there).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.constraints import Kind
from ..symbolic.expr import add, dmax, sub
from .dims import slice_
from .errors import ConvertError

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..symbolic.expr import Dim
    from .context import LoweringContext


def pad_axis(ctx: LoweringContext, x: Value, axis: int, lo: int, hi: int, mode: str) -> Value:
    """``lo`` rows before and ``hi`` after ``x`` on ``axis``, in ``mode`` edge, reflect, symmetric or wrap."""
    n = x.type.shape[axis]
    if mode == "reflect":
        ctx.require(Kind.GE, n - 1, max(lo, hi), f"reflect Pad of {max(lo, hi)} needs a dim of at least "
                    f"{max(lo, hi) + 1} on axis {axis}")
    if mode in ("wrap", "symmetric"):
        ctx.require(Kind.GE, n, max(lo, hi), f"{mode} Pad of {max(lo, hi)} needs a dim of at least "
                    f"{max(lo, hi)} on axis {axis}")
    parts = []
    if lo:
        parts.append(_side(ctx, x, axis, lo, mode, front=True))
    parts.append(x)
    if hi:
        parts.append(_side(ctx, x, axis, hi, mode, front=False))
    return ctx.b.emit(Op.CONCAT, *parts, attrs=A.AxisAttrs(axis))


def _side(ctx: LoweringContext, x: Value, axis: int, p: int, mode: str, front: bool) -> Value:
    """The ``p`` rows added before (``front``) or after ``x`` on ``axis``."""
    n = x.type.shape[axis]
    if mode == "edge":
        row = axis_rows(ctx, x, axis, 0 if front else n - 1, 1)
        return row if p == 1 else ctx.b.emit(Op.TILE, row, attrs=A.TileAttrs(_unit(x.type.rank, axis, p)))
    if mode in ("reflect", "symmetric"):   # symmetric repeats the edge row, reflect does not
        skip = 1 if mode == "reflect" else 0
        rows = axis_rows(ctx, x, axis, skip if front else n - skip - p, p)
        return rows if p == 1 else ctx.b.emit(Op.REVERSE, rows, attrs=A.AxisAttrs(axis))
    return axis_rows(ctx, x, axis, n - p if front else 0, p)     # wrap: the opposite end


def axis_rows(ctx: LoweringContext, x: Value, axis: int, start: Dim, size: Dim) -> Value:
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


def tile(ctx: LoweringContext, x: Value, repeats: list) -> Value:
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


def pad_static(ctx: LoweringContext, x: Value, before: list, after: list, mode: str, pad_const: float = 0) -> Value:
    """``x`` padded by int amounts per axis in ``mode``; negative amounts crop first (ONNX semantics)."""
    x = crop(ctx, x, before, after)
    before, after = [max(p, 0) for p in before], [max(p, 0) for p in after]
    if not any(before) and not any(after):
        return x
    if mode == "constant":
        padding = tuple(p for pair in zip(before, after) for p in pair)
        return ctx.b.emit(Op.PAD, x, attrs=A.PadAttrs(padding, pad_const))
    for axis, (lo, hi) in enumerate(zip(before, after)):
        if lo or hi:
            x = pad_axis(ctx, x, axis, lo, hi, mode)
    return x


def crop(ctx: LoweringContext, x: Value, before: list, after: list) -> Value:
    """Negative pads remove elements: a SLICE of what is left (which must not be empty)."""
    if min(list(before) + list(after)) >= 0:
        return x
    starts, sizes = [], []
    for axis, (lo, hi) in enumerate(zip(before, after)):
        cut_lo, cut_hi = max(-lo, 0), max(-hi, 0)
        starts.append(cut_lo)
        sizes.append(x.type.shape[axis] - cut_lo - cut_hi)
    return slice_(ctx, x, starts, sizes)


def dyn_pad(ctx: LoweringContext, x: Value, before: list, after: list, mode: str, pad_const: float = 0) -> Value:
    """DYN_PAD of ``x`` by Index values ``before``/``after`` (one each per axis); the ledger records
    that every padded dim stays >= 1 and, for reflect, wrap and symmetric, that no pad outgrows its dim."""
    for axis, (lo, hi) in enumerate(zip(before, after)):
        n, lo, hi = x.type.shape[axis], lo.type.value, hi.type.value
        ctx.require(Kind.GE, add(add(n, lo), hi), 1, f"Pad on axis {axis} must leave a dim >= 1")
        if mode in ("reflect", "wrap", "symmetric"):
            limit = sub(n, 1) if mode == "reflect" else n
            ctx.require(Kind.GE, limit, dmax(lo, hi), f"{mode} Pad of {dmax(lo, hi)} needs a dim of at least "
                        f"{add(dmax(lo, hi), 1 if mode == 'reflect' else 0)} on axis {axis}")
    operands = [p for pair in zip(before, after) for p in pair]
    return ctx.b.emit(Op.DYN_PAD, x, *operands, attrs=A.DynPadAttrs(mode, pad_const))


def pad_by(ctx: LoweringContext, x: Value, before: list, after: list, mode: str, pad_const: float = 0) -> Value:
    """``x`` padded by ``before``/``after`` (one each per axis; Index values, or ints for amounts read from a
    constant): lowered at once when they are all ints, else DYN_PAD, which decays to the same lowering once
    they are bound."""
    lo, hi = [_amount(p) for p in before], [_amount(p) for p in after]
    if all(isinstance(v, int) for v in lo + hi):
        return pad_static(ctx, x, lo, hi, mode, pad_const)
    return dyn_pad(ctx, x, before, after, mode, pad_const)


def _amount(p: "Value | int") -> Dim:
    return p if isinstance(p, int) else p.type.value


def paddings_pairs(ctx: LoweringContext, name: str, rank: int, what: str) -> tuple:
    """TFLite's ``[rank, 2]`` paddings as ``(before, after)`` lists for :func:`pad_by`: ints from a constant,
    or Index values traced back to shapes (``SHAPE -> ... -> PACK``); amounts must be >= 0 (the ledger
    checks symbolic ones)."""
    c = ctx.const(name)
    if c is None:
        from .index_elements import traced_elements   # traced amounts are rare: not on every convert (issue 13)
    flat = [int(v) for v in c.reshape(-1)] if c is not None else traced_elements(ctx, name)
    if flat is None:
        raise ConvertError(f"{what} '{name}' must be a constant or computed from tensor shapes: TOSA PAD takes "
                           "padding fixed before the model runs, and these amounts depend on tensor data that is "
                           "only known at run time")
    if len(flat) != 2 * rank:
        raise ConvertError(f"{what} has {len(flat)} values for a rank {rank} input (it needs {rank} pairs)")
    for i, p in enumerate(flat):
        v = _amount(p)
        if isinstance(v, int) and v < 0:
            raise ConvertError(f"{what} needs non-negative (before, after) pairs, got {v} on axis {i // 2}")
        if not isinstance(v, int):
            ctx.require(Kind.GE, v, 0, f"{what} on axis {i // 2} must be >= 0")
    return flat[0::2], flat[1::2]
