"""Converters for ONNX Pad (modes constant, edge, reflect, wrap) and Tile.

Pad amounts must be known at import (TOSA PAD takes constant padding). Pads
come from the ``pads`` attribute before opset 11 and from input 1 after,
optionally restricted to the ``axes`` of input 3 (opset 18). Negative pads
crop: the input is SLICEd first, then padded. ``constant`` is one TOSA PAD;
a ``constant_value`` only known at run time pads with 0 and then SELECTs the
value where a padded all-true mask is false. ``edge``, ``reflect`` and
``wrap`` build each padded axis as a CONCAT of slices of the input
(:func:`tosaconv.lowering.pad.pad_axis`). Tile is TILE, or DYN_TILE when the
repeats are computed from shapes (:func:`tosaconv.lowering.pad.tile`).
"""
from __future__ import annotations

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import norm_axis, slice_
from ....lowering.index_math import fill
from ....lowering.pad import pad_axis, tile
from ..reader import ConvertError
from ..registry import converter

MODES = ("constant", "edge", "reflect", "wrap")


@converter("Pad", since=2)
def convert_pad(ctx, node):
    x = ctx.tensor(node.inputs[0])
    mode = node.attr("mode")
    if mode not in MODES:
        raise ConvertError(f"Pad mode '{mode}' is not one of {', '.join(MODES)}")
    before, after = _pads(ctx, node, x.type.rank)
    x = _crop(ctx, x, before, after)
    before, after = [max(p, 0) for p in before], [max(p, 0) for p in after]
    if not any(before) and not any(after):
        return x
    if mode == "constant":
        return _constant(ctx, node, x, before, after)
    for axis, (lo, hi) in enumerate(zip(before, after)):
        if lo or hi:
            x = pad_axis(ctx, x, axis, lo, hi, mode)
    return x


def _pads(ctx, node, rank: int) -> tuple:
    """Per-axis (before, after) pad amounts as ints."""
    raw = node.attr("pads") if node.version < 11 else _const_ints(ctx, node.input(1), "pads")
    axes = list(range(rank))
    if node.version >= 18 and node.input(3) is not None:
        axes = [norm_axis(a, rank) for a in _const_ints(ctx, node.input(3), "axes")]
    if len(raw) != 2 * len(axes):
        raise ConvertError(f"Pad has {len(raw)} pad amounts for {len(axes)} axes (it needs two per axis)")
    before, after = [0] * rank, [0] * rank
    for i, a in enumerate(axes):
        before[a], after[a] = int(raw[i]), int(raw[len(axes) + i])
    return before, after


def _const_ints(ctx, name, what: str) -> list:
    c = ctx.const(name)
    if c is None:
        raise ConvertError(f"Pad {what} input '{name}' must be a constant: TOSA PAD takes constant padding "
                           "(pad amounts computed at run time or from symbolic dims are not supported)")
    return [int(v) for v in np.asarray(c).reshape(-1)]


def _crop(ctx, x, before, after):
    """Negative pads remove elements: a SLICE of what is left (which must not be empty)."""
    if min(before + after) >= 0:
        return x
    starts, sizes = [], []
    for axis, (lo, hi) in enumerate(zip(before, after)):
        cut_lo, cut_hi = max(-lo, 0), max(-hi, 0)
        starts.append(cut_lo)
        sizes.append(x.type.shape[axis] - cut_lo - cut_hi)
    return slice_(ctx, x, starts, sizes)


def _constant(ctx, node, x, before, after):
    padding = tuple(p for pair in zip(before, after) for p in pair)
    if node.version < 11:
        value = node.attr("value")
    else:
        name = node.input(2)
        value = 0 if name is None else ctx.const(name)
        if value is None:
            return _runtime_constant(ctx, x, padding, ctx.tensor(name))
    value = np.asarray(value).reshape(-1)[0]
    if value.dtype.kind == "u" and value.dtype.itemsize < 4:
        # uint8/uint16 data is stored as the same bits in int8/int16 (see .qtypes): pad with those bits
        value = value.astype(np.dtype(f"i{value.dtype.itemsize}"))
    return ctx.b.emit(Op.PAD, x, attrs=A.PadAttrs(padding, _typed(value.item(), x.type.dtype)))


def _typed(value, dtype: DType):
    """The pad value as PadAttrs carries it: a float for float data, else an int (bools as 0/1)."""
    return float(value) if dtype.is_float else int(value)


def _runtime_constant(ctx, x, padding, value):
    """The pad value is data: pad with 0, then SELECT ``value`` where a padded true mask is false."""
    padded = ctx.b.emit(Op.PAD, x, attrs=A.PadAttrs(padding, _typed(0, x.type.dtype)))
    inside = fill(ctx, True, DType.BOOL, x.type.shape)
    mask = ctx.b.emit(Op.PAD, inside, attrs=A.PadAttrs(padding, 0))
    if value.type.rank != x.type.rank:
        value = ctx.b.emit(Op.RESHAPE, value, attrs=A.ReshapeAttrs((1,) * x.type.rank))
    return ctx.b.emit(Op.SELECT, mask, padded, value)


@converter("Tile", since=6)
def convert_tile(ctx, node):
    return tile(ctx, ctx.tensor(node.inputs[0]), ctx.dims(node.inputs[1]).dims)
