"""The converter for ONNX Resize (opsets 11, 13, 18, 19) and the per-axis sizes both its forms share.

Every axis gets its input size, output size and ONNX's scale (exact, and as
ONNX's reference holds it: float32 from ``scales``, float64 from ``sizes``),
with opset 18's ``axes`` spread over the input rank and
``keep_aspect_ratio_policy`` applied. Nearest and linear resizes of H and W
whose mapping TOSA RESIZE expresses exactly become RESIZE
(:mod:`.resize_tosa`); everything else on float data (cubic, antialias when
shrinking, tf_crop_and_resize, any axis, any scale, sizes known only after
binding) becomes one interpolation-matrix MATMUL per resized axis
(:mod:`.resize_separable`). Integer data takes only the RESIZE form, in
nearest mode (TOSA's integer BILINEAR returns a scaled int32 result), except
a linear Resize of 8-bit data, computed in float as onnxruntime does it
(:mod:`.resize_8bit`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

import numpy as np

from ....ir.dtypes import DType
from ....symbolic.expr import Dim, floordiv, mul, same
from ..reader import ConvertError
from ..registry import converter
from . import resize_tosa
from .resize_8bit import linear_8bit
from .resize_separable import separable_resize

MODES = ("nearest", "linear", "cubic")


@dataclass(frozen=True)
class Axis:
    """One input axis: input and output size, ONNX's scale as an exact fraction (None when it is
    out/in of symbolic sizes), the scale as ONNX's reference computes with it, and whether it came
    from ``sizes`` (then it is a ratio of the two sizes)."""

    size: Dim
    out: Dim
    scale: Optional[Fraction]
    ref_scale: Optional[np.floating]
    by_sizes: bool = False


@converter("Resize", since=11)
def convert_resize(ctx, node):
    x = ctx.tensor(node.inputs[0])
    mode = node.attr("mode")
    if mode not in MODES:
        raise ConvertError(f"Resize mode '{mode}' is not one of {', '.join(MODES)}")
    if mode == "linear" and x.type.dtype is DType.INT8:
        return linear_8bit(ctx, x, lambda f: _resize(ctx, node, f, mode))
    if mode != "nearest" and not x.type.dtype.is_float:
        raise ConvertError(f"{mode} Resize on {x.type.dtype.value} data is not supported (nearest takes any "
                           "type, linear takes float and 8-bit data)")
    return _resize(ctx, node, x, mode)


def _resize(ctx, node, x, mode: str):
    axes = _axes(ctx, node, x)
    if not _needs_separable(node, mode, axes):
        try:
            plans, requirements = resize_tosa.plan(node, mode, axes)
        except ConvertError:
            if not x.type.dtype.is_float:
                raise
        else:
            return resize_tosa.emit(ctx, x, mode, axes, plans, requirements)
    return separable_resize(ctx, node, x, mode, axes, resize_axes(node, x.type.rank))


def _needs_separable(node, mode: str, axes) -> bool:
    """Cubic, tf_crop_and_resize and antialias when shrinking have no TOSA RESIZE form."""
    if mode == "cubic" or node.attr("coordinate_transformation_mode") == "tf_crop_and_resize":
        return True
    antialias = node.version >= 18 and node.attr("antialias") and mode == "linear"
    return bool(antialias) and any(a.scale is None or a.scale < 1 for a in axes)


# -- sizes and scales ---------------------------------------------------------------------

def _axes(ctx, node, x) -> list:
    """Every input axis with its output size and scale."""
    shape = x.type.shape
    kind, values, axes = _full_rank(node, shape, _scales(ctx, node), _sizes(ctx, node))
    if kind == "sizes" and node.version >= 18 and node.attr("keep_aspect_ratio_policy") != "stretch":
        return _keep_aspect(node, shape, values, axes)
    if kind == "scales":
        return [_scaled_axis(size, np.float32(v), i) for i, (size, v) in enumerate(zip(shape, values))]
    return [_sized_axis(size, v, i) for i, (size, v) in enumerate(zip(shape, values))]


def _scales(ctx, node):
    name = node.input(2)
    if name is None:
        return None
    c = ctx.const(name)
    if c is None:
        raise ConvertError(f"Resize scales '{name}' must be a constant")
    return None if c.size == 0 else [np.float32(v) for v in c.reshape(-1)]


def _sizes(ctx, node):
    name = node.input(3)
    if name is None:
        return None
    st = ctx.shape_tensor(name)
    if st is None:
        raise ConvertError(f"Resize sizes '{name}' must be a constant or computed from shapes")
    return st.values() if st.dims else None


def _full_rank(node, shape, scales, sizes):
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


def resize_axes(node, rank: int) -> list:
    """Opset 18's ``axes`` attribute (normalized), or every axis."""
    axes = node.attr("axes", None) if node.version >= 18 else None
    if axes is None:
        return list(range(rank))
    normalized = [a + rank if a < 0 else a for a in axes]
    if sorted(set(normalized)) != sorted(normalized) or not all(0 <= a < rank for a in normalized):
        raise ConvertError(f"Resize axes {list(axes)} are not distinct axes of a rank {rank} input")
    return normalized


def _keep_aspect(node, shape, sizes, axes) -> list:
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


def _scaled_axis(size: Dim, scale: np.float32, index: int) -> Axis:
    if not math.isfinite(float(scale)) or scale <= 0:
        raise ConvertError(f"Resize scale {float(scale)} on axis {index} must be positive and finite")
    exact = Fraction(float(scale))
    if isinstance(size, int):        # the reference: (float32 scales * int64 shape).astype(int)
        return Axis(size, _positive(int(np.floor(size * np.float64(scale))), index), exact, scale)
    return Axis(size, floordiv(mul(size, exact.numerator), exact.denominator), exact, scale)


def _positive(out: int, index: int) -> int:
    if out < 1:
        raise ConvertError(f"Resize output axis {index} would have size {out}; TOSA requires every dim to be >= 1")
    return out


def _sized_axis(size: Dim, out: Dim, index: int) -> Axis:
    if isinstance(size, int) and isinstance(out, int):
        return Axis(size, _positive(out, index), Fraction(out, size), np.int64(out) / size, True)
    q = floordiv(out, size)
    if isinstance(q, int) and same(mul(size, q), out):
        return Axis(size, out, Fraction(q), np.float64(q), True)
    return Axis(size, out, None, None, True)
