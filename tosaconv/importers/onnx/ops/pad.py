"""Converters for ONNX Pad (modes constant, edge, reflect, wrap) and Tile.

Pads come from the ``pads`` attribute before opset 11 and from input 1 after,
optionally restricted to the ``axes`` of input 3 (opset 18). Negative pads
crop: the input is SLICEd first, then padded. Pad amounts known at import
lower at once; amounts computed from symbolic shapes (Shape -> arithmetic ->
Concat -> Cast, the STFT front-end idiom, also rearranged as torch.onnx does)
are Index values and become DYN_PAD, which decays to the same lowering once
the symbols are bound (:func:`tosaconv.lowering.pad.pad_by`). Amounts read
from tensor data are refused: TOSA PAD's padding is fixed before the model
runs. ``constant`` is one TOSA PAD; a ``constant_value`` only known at run
time pads with 0 and then SELECTs the value where a padded all-true mask is
false. ``edge``, ``reflect`` and ``wrap`` build each padded axis as a CONCAT
of slices of the input (:func:`tosaconv.lowering.pad.pad_axis`). Tile is TILE, or DYN_TILE when the
repeats are computed from shapes (:func:`tosaconv.lowering.pad.tile`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Union

import numpy as np

from ....ir import attrs as A
from ....ir.dtypes import DType
from ....ir.ops import Op
from ....lowering.dims import norm_axis
from ....lowering.index_elements import traced_shape_tensor
from ....lowering.index_math import fill
from ....lowering.pad import pad_by, tile
from ..reader import ConvertError
from ....lowering.limits import must_be_known, size_from_data
from ..registry import converter, publish

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ..context import ImportContext
    from ..reader import NodeReader

MODES = ("constant", "edge", "reflect", "wrap")


PAD_PADS, PAD_AXES = publish(
    "Pad",
    must_be_known("pads-from-data", "pads", "TOSA PAD takes padding fixed before the model runs (pads computed "
                  "from input shapes with Shape, Gather, Add/Sub/Mul/Div/Mod, Unsqueeze, Concat and Cast, and "
                  "rearranged by Reshape, Transpose or Slice, are supported)"),
    must_be_known("axes-from-data", "axes", "the padded axes decide the output shape"))
publish("Tile", size_from_data("repeats"))


@converter("Pad", since=2)
def convert_pad(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    mode = node.attr("mode")
    if mode not in MODES:
        raise ConvertError(f"Pad mode '{mode}' is not one of {', '.join(MODES)}")
    before, after = _pads(ctx, node, x.type.rank)
    if all(isinstance(p.type.value, int) and p.type.value == 0 for p in before + after):
        return x
    pad = _padder(ctx, before, after, mode)
    return pad(x, 0) if mode != "constant" else _constant(ctx, node, x, pad)


def _padder(ctx: ImportContext, before: list, after: list, mode: str) -> Callable[[Value, float], Value]:
    """``pad(tensor, value)`` by these Index amounts (a static pad when they are ints, else DYN_PAD)."""
    return lambda t, value: pad_by(ctx, t, before, after, mode, value)


def _pads(ctx: ImportContext, node: NodeReader, rank: int) -> tuple:
    """Per-axis (before, after) pad amounts as Index values (constants, or computed from shapes)."""
    raw = [ctx.index(int(v)) for v in node.attr("pads")] if node.version < 11 else _amounts(ctx, node)
    axes = list(range(rank))
    if node.version >= 18 and node.input(3) is not None:
        axes = [norm_axis(a, rank) for a in _const_ints(ctx, node.input(3), "axes")]
    if len(raw) != 2 * len(axes):
        raise ConvertError(f"Pad has {len(raw)} pad amounts for {len(axes)} axes (it needs two per axis)")
    before, after = [ctx.index(0)] * rank, [ctx.index(0)] * rank
    for i, a in enumerate(axes):
        before[a], after[a] = raw[i], raw[len(axes) + i]
    return before, after


def _amounts(ctx: ImportContext, node: NodeReader) -> list:
    """The ``pads`` input as Index values: known ints, or values computed from (symbolic) shapes."""
    name = node.input(1)
    st = ctx.shape_tensor(name) or traced_shape_tensor(ctx, name)
    if st is None:
        raise PAD_PADS.refuse(f"Pad pads input '{name}'")
    return st.dims


def _const_ints(ctx: ImportContext, name: str, what: str) -> list:
    c = ctx.const(name)
    if c is None:
        raise PAD_AXES.refuse(f"Pad {what} input '{name}'")
    return [int(v) for v in np.asarray(c).reshape(-1)]


def _constant(ctx: ImportContext, node: NodeReader, x: Value, pad: Callable[[Value, float], Value]) -> Value:
    """A constant-mode pad: with the pad value known at import, or SELECTed in when it is data."""
    if node.version < 11:
        value = node.attr("value")
    else:
        name = node.input(2)
        value = 0 if name is None else ctx.const(name)
        if value is None:
            return _runtime_constant(ctx, x, pad, ctx.tensor(name))
    value = np.asarray(value).reshape(-1)[0]
    if value.dtype.kind == "u" and value.dtype.itemsize < 4:
        # uint8/uint16 data is stored as the same bits in int8/int16 (see .qtypes): pad with those bits
        value = value.astype(np.dtype(f"i{value.dtype.itemsize}"))
    return pad(x, _typed(value.item(), x.type.dtype))


def _typed(value: float, dtype: DType) -> Union[float, int]:
    """The pad value as PadAttrs carries it: a float for float data, else an int (bools as 0/1)."""
    return float(value) if dtype.is_float else int(value)


def _runtime_constant(ctx: ImportContext, x: Value, pad: Callable[[Value, float], Value], value: Value) -> Value:
    """The pad value is data: pad with 0, then SELECT ``value`` where a padded true mask is false."""
    padded = pad(x, _typed(0, x.type.dtype))
    mask = pad(fill(ctx, True, DType.BOOL, x.type.shape), 0)
    if value.type.rank != x.type.rank:
        value = ctx.b.emit(Op.RESHAPE, value, attrs=A.ReshapeAttrs((1,) * x.type.rank))
    return ctx.b.emit(Op.SELECT, mask, padded, value)


@converter("Tile", since=6)
def convert_tile(ctx: ImportContext, node: NodeReader) -> Converted:
    return tile(ctx, ctx.tensor(node.inputs[0]), ctx.dims(node.inputs[1]).dims)
