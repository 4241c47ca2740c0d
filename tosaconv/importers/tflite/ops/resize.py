"""Converters for TFLite's RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (NHWC).

Both call the shared resize lowering (:func:`tosaconv.lowering.resize.resize`)
on the NCHW view of the input (its TOSA RESIZE form transposes back to NHWC,
so the two TRANSPOSEs meet and cancel), with TFLite's coordinate rules
spelled as ONNX modes (a :class:`~tosaconv.lowering.resize.ResizeSpec`):

* bilinear: ``align_corners`` is ONNX align_corners (``x * (in-1)/(out-1)``),
  ``half_pixel_centers`` is half_pixel (``(x + 0.5) * in/out - 0.5``, clamped
  to the input), neither is asymmetric (``x * in/out``);
* nearest: ``align_corners`` rounds ``x * (in-1)/(out-1)`` half up
  (round_prefer_ceil), ``half_pixel_centers`` floors ``(x + 0.5) * in/out``
  (tf_half_pixel_for_nn), neither floors ``x * in/out`` (asymmetric).

The output size is input 1 (a constant or a shape tensor); N and C keep the
input's dims. TFLite's nearest kernel computes ``(x + offset) * scale`` in
float32, which breaks some exact ties the other way (14 -> 18 rows: ``9 *
float32(14/18)`` floors to 6, not 7). On static axes the pixels it picks are
computed here the same way; when they differ from what the ONNX form picks,
the resize is two GATHERs of exactly those rows and columns instead
(a symbolic H or W that is resized is refused: the picks depend on its size).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, Sequence

import numpy as np

from ....lowering.gather import take
from ....lowering.resize import ResizeSpec, resize, sized_axis
from ....lowering.resize_tosa import reference_nearest
from ....lowering.window import to_nchw, to_nhwc
from ....symbolic.expr import same
from ..reader import ConvertError
from ..registry import converter

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..node import OpReader
    from ..context import TfliteContext


def _resize(mode: str) -> Callable[[TfliteContext, OpReader], Value]:
    def convert(ctx: TfliteContext, node: OpReader) -> Value:
        x = ctx.tensor(node.inputs[0])
        if x.type.rank != 4:
            raise ConvertError(f"{node.op_type} needs a rank 4 (NHWC) input, got rank {x.type.rank}")
        align, half = bool(node.opt("AlignCorners")), bool(node.opt("HalfPixelCenters"))
        if align and half:
            raise ConvertError(f"{node.op_type} with both align_corners and half_pixel_centers (TFLite refuses it)")
        size = ctx.dims(node.inputs[1]).dims
        if len(size) != 2:
            raise ConvertError(f"{node.op_type} size has {len(size)} entries; it needs (height, width)")
        spec = _spec(mode, align, half)
        if mode == "nearest":
            picks = _tflite_picks(ctx, spec, x, size, align, half)
            if picks is not None:
                return picks
        nchw = to_nchw(ctx, x)
        out = (x.type.shape[0], x.type.shape[3], size[0].type.value, size[1].type.value)
        axes = [sized_axis(d, o, i) for i, (d, o) in enumerate(zip(nchw.type.shape, out))]
        return to_nhwc(ctx, resize(ctx, nchw, spec, axes, [0, 1, 2, 3], {}))
    return convert


def _spec(mode: str, align: bool, half: bool) -> ResizeSpec:
    """TFLite's coordinate rules as ONNX modes (see the module docstring)."""
    if mode == "linear":
        ctm = "align_corners" if align else "half_pixel" if half else "asymmetric"
        return ResizeSpec(mode, ctm, "floor")
    ctm = "align_corners" if align else "tf_half_pixel_for_nn" if half else "asymmetric"
    return ResizeSpec(mode, ctm, "round_prefer_ceil" if align else "floor")


def tflite_nearest(n_in: int, n_out: int, align: bool, half: bool) -> np.ndarray:
    """The input index TFLite's GetNearestNeighbor reads per output index (float32 arithmetic)."""
    f = np.float32
    scale = f(n_in - 1) / f(n_out - 1) if align and n_out > 1 else f(n_in) / f(n_out)
    src = (np.arange(n_out, dtype=f) + f(0.5 if half else 0.0)) * scale
    low = np.floor(src)
    idx = np.where(src - low >= f(0.5), low + 1, low) if align else low   # std::round: halves away from 0
    idx = np.minimum(idx.astype(np.int64), n_in - 1)
    return np.maximum(idx, 0) if half else idx


def _tflite_picks(ctx: TfliteContext, spec: ResizeSpec, x: Value, size: Sequence[Value], align: bool, half: bool) -> Optional[Value]:
    """Two GATHERs of TFLite's picks when the ONNX form would pick other pixels on a static axis; else None."""
    tables, differs = [], False
    for axis, out in ((1, size[0].type.value), (2, size[1].type.value)):
        n_in = x.type.shape[axis]
        if not (isinstance(n_in, int) and isinstance(out, int)):
            if same(n_in, out):
                tables.append(None)
                continue
            raise ConvertError(f"RESIZE_NEAREST_NEIGHBOR of symbolic input axis {axis} (size {n_in}) to {out}: "
                               "TFLite's float32 arithmetic picks pixels that depend on the size; bind the "
                               "symbol first")
        table = tflite_nearest(n_in, out, align, half)
        tables.append(table)
        if n_in != out:
            onnx_axis = sized_axis(n_in, out, axis)
            picked = reference_nearest(spec.coordinate_transformation_mode, onnx_axis, spec.nearest_mode)
            differs |= not np.array_equal(table, picked)
    if not differs:
        return None
    y = x
    for axis, table in zip((1, 2), tables):
        if table is not None and not np.array_equal(table, np.arange(x.type.shape[axis])):
            y = take(ctx, y, axis, ctx.b.const(table.astype(np.int32)))
    return y


converter("RESIZE_BILINEAR", options="ResizeBilinearOptions")(_resize("linear"))
converter("RESIZE_NEAREST_NEIGHBOR", options="ResizeNearestNeighborOptions", form="any")(_resize("nearest"))
