"""The converter for ONNX Resize (opsets 11, 13, 18, 19) and the per-axis sizes both its forms share.

Every axis gets its input size, output size and ONNX's scale (exact, and as
ONNX's reference holds it: float32 from ``scales``, float64 from ``sizes``),
with opset 18's ``axes`` spread over the input rank and
``keep_aspect_ratio_policy`` applied. The shared :func:`tosaconv.lowering.resize.resize`
then builds it: nearest and linear resizes of H and W whose mapping TOSA
RESIZE expresses exactly become RESIZE; everything else on float data (cubic,
antialias when shrinking, tf_crop_and_resize, any axis, any scale, sizes
known only after binding) becomes one interpolation-matrix MATMUL per resized
axis. Integer data takes only the RESIZE form, in nearest mode (TOSA's
integer BILINEAR returns a scaled int32 result).
A linear Resize of 8-bit data is computed in float as onnxruntime does it
(:mod:`.resize_8bit`).
"""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ....lowering.resize import Axis, ResizeSpec, resize, scaled_axis, sized_axis
from ..reader import ConvertError
from ....lowering.limits import Limit, LimitKind, must_be_known
from ..registry import converter, publish
from ....ir.dtypes import DType
from .resize_8bit import linear_8bit

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ....lowering.context import Converted
    from ....symbolic.expr import Dim
    from ..context import ImportContext
    from ..reader import NodeReader

MODES = ("nearest", "linear", "cubic")


RESIZE_SCALES, RESIZE_SIZES, RESIZE_ROI = publish(
    "Resize",
    Limit("scales-from-data", LimitKind.INPUT, "scales", ("not a constant",),
          "the output size is the input size times the scales", "make the scales an initializer"),
    must_be_known("sizes-from-data", "sizes", "they are the output size"),
    Limit("roi-from-data", LimitKind.INPUT, "roi", ("not a constant (with tf_crop_and_resize)",),
          "the region of interest decides the sampling grid, which tosaconv computes at import",
          "make the roi an initializer"))
RESIZE_INT = publish("Resize", Limit(
    "int-interpolation", LimitKind.DTYPE, "X", ("int16 or int32 with mode linear, any integer with mode cubic",),
    "nearest takes any type and linear float and 8-bit data; TOSA's integer BILINEAR returns a scaled int32 "
    "result", "resize in float, or use mode nearest"))


@converter("Resize", since=11)
def convert_resize(ctx: ImportContext, node: NodeReader) -> Converted:
    x = ctx.tensor(node.inputs[0])
    mode = node.attr("mode")
    if mode not in MODES:
        raise ConvertError(f"Resize mode '{mode}' is not one of {', '.join(MODES)}")
    if mode == "linear" and x.type.dtype is DType.INT8:
        return linear_8bit(ctx, x, lambda f: _resize(ctx, node, f, mode))
    if mode != "nearest" and not x.type.dtype.is_float:
        raise RESIZE_INT.refuse(f"{mode} Resize on {x.type.dtype.value} data")
    return _resize(ctx, node, x, mode)


def _resize(ctx: ImportContext, node: NodeReader, x: Value, mode: str) -> Value:
    spec = _spec(node, mode)
    axes = _axes(ctx, node, x)
    order = resize_axes(node, x.type.rank)
    crop = spec.coordinate_transformation_mode == "tf_crop_and_resize" and x.type.dtype.is_float
    return resize(ctx, x, spec, axes, order, _rois(ctx, node, order) if crop else {})


def _spec(node: NodeReader, mode: str) -> ResizeSpec:
    antialias = bool(node.version >= 18 and node.attr("antialias"))
    return ResizeSpec(mode, node.attr("coordinate_transformation_mode"), node.attr("nearest_mode"),
                      float(node.attr("cubic_coeff_a")), bool(node.attr("exclude_outside")), antialias,
                      float(node.attr("extrapolation_value")))


# -- sizes and scales ---------------------------------------------------------------------

def _axes(ctx: ImportContext, node: NodeReader, x: Value) -> list:
    """Every input axis with its output size and scale."""
    shape = x.type.shape
    kind, values, axes = _full_rank(node, shape, _scales(ctx, node), _sizes(ctx, node))
    if kind == "sizes" and node.version >= 18 and node.attr("keep_aspect_ratio_policy") != "stretch":
        return _keep_aspect(node, shape, values, axes)
    if kind == "scales":
        return [scaled_axis(size, np.float32(v), i) for i, (size, v) in enumerate(zip(shape, values))]
    return [sized_axis(size, v, i) for i, (size, v) in enumerate(zip(shape, values))]


def _scales(ctx: ImportContext, node: NodeReader) -> Optional[list[np.float32]]:
    name = node.input(2)
    if name is None:
        return None
    c = ctx.const(name)
    if c is None:
        raise RESIZE_SCALES.refuse(f"Resize scales '{name}'")
    return None if c.size == 0 else [np.float32(v) for v in c.reshape(-1)]


def _sizes(ctx: ImportContext, node: NodeReader) -> Optional[list[Dim]]:
    name = node.input(3)
    if name is None:
        return None
    st = ctx.shape_tensor(name)
    if st is None:
        raise RESIZE_SIZES.refuse(f"Resize sizes '{name}'")
    return st.values() if st.dims else None


def _full_rank(node: NodeReader, shape: Sequence[Dim], scales: Optional[Sequence[np.float32]], sizes: Optional[Sequence[Dim]]) -> tuple[str, list, list[int]]:
    """(kind, one value per input axis, the axes given), spreading opset-18 ``axes``."""
    if (scales is None) == (sizes is None):
        raise ConvertError("Resize needs exactly one of scales and sizes")
    kind, values = ("scales", scales) if scales is not None else ("sizes", sizes)
    axes = resize_axes(node, len(shape))
    if len(values) != len(axes):
        raise ConvertError(f"Resize {kind} has {len(values)} entries for {len(axes)} axes")
    full = [1.0] * len(shape) if kind == "scales" else list(shape)
    for a, v in zip(axes, values):
        full[a] = v
    return kind, full, axes


def resize_axes(node: NodeReader, rank: int) -> list:
    """Opset 18's ``axes`` attribute (normalized), or every axis."""
    axes = node.attr("axes", None) if node.version >= 18 else None
    if axes is None:
        return list(range(rank))
    normalized = [a + rank if a < 0 else a for a in axes]
    if sorted(set(normalized)) != sorted(normalized) or not all(0 <= a < rank for a in normalized):
        raise ConvertError(f"Resize axes {list(axes)} are not distinct axes of a rank {rank} input")
    return normalized


def _keep_aspect(node: NodeReader, shape: Sequence[Dim], sizes: Sequence[Dim], axes: Sequence[int]) -> list:
    """not_larger / not_smaller: one scale for the given axes (the reference's float64 min or max of
    the size ratios), output sizes rounded half up as the reference rounds them."""
    if not all(isinstance(shape[a], int) and isinstance(sizes[a], int) for a in axes):
        raise ConvertError("Resize keep_aspect_ratio_policy needs static sizes")
    ratios = [Fraction(sizes[a], shape[a]) for a in axes]
    scale = min(ratios) if node.attr("keep_aspect_ratio_policy") == "not_larger" else max(ratios)
    ref = np.float64(scale)
    out = [int(ref * shape[a] + 0.5) if a in axes else shape[a] for a in range(len(shape))]
    return [Axis(shape[a], out[a], scale, ref, True) if a in axes else Axis(shape[a], shape[a], Fraction(1),
                                                                              np.float64(1.0), True)
            for a in range(len(shape))]


def _rois(ctx: ImportContext, node: NodeReader, order: Sequence[int]) -> dict:
    """tf_crop_and_resize's region of interest per axis: (start, end) in the roi tensor's type."""
    name = node.input(1)
    roi = ctx.const(name) if name else None
    if roi is None or roi.size == 0:
        raise RESIZE_ROI.refuse("Resize tf_crop_and_resize")
    flat = roi.reshape(-1)
    if flat.size != 2 * len(order):
        raise ConvertError(f"Resize roi has {flat.size} values; tf_crop_and_resize needs {2 * len(order)} "
                           "(a start and an end per resized axis)")
    return {a: (flat[i], flat[len(order) + i]) for i, a in enumerate(order)}
