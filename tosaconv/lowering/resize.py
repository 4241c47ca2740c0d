"""Resize for both importers: per-axis sizes and scales, and the choice between TOSA RESIZE and MATMULs.

A resize is described in ONNX's terms (:class:`ResizeSpec`: mode,
coordinate_transformation_mode, nearest_mode, cubic coefficient, ...), which
also spell TFLite's RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR. Every axis
gets its input size, output size and scale (:class:`Axis`: exact, and as
ONNX's reference holds it: float32 from scales, float64 from sizes).
Nearest and linear resizes of H and W whose mapping TOSA RESIZE expresses
exactly become RESIZE (:mod:`.resize_tosa`); everything else on float data
(cubic, antialias when shrinking, tf_crop_and_resize, any axis, any scale,
sizes known only after binding) becomes one interpolation-matrix MATMUL per
resized axis (:mod:`.resize_separable`). Integer data takes only the RESIZE
form.
"""
from __future__ import annotations

import math
from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from fractions import Fraction
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..symbolic.expr import Dim, floordiv, mul, same
from . import resize_tosa
from .errors import ConvertError
from .resize_separable import separable_resize

if TYPE_CHECKING:
    from ..ir.graph import Value
    from .context import LoweringContext


@dataclass(frozen=True)
class ResizeSpec:
    """How to resize, with ONNX Resize's attribute names and meanings (``antialias`` already False
    where the source has no such setting)."""

    mode: str
    coordinate_transformation_mode: str
    nearest_mode: str = "round_prefer_floor"
    cubic_coeff_a: float = -0.75
    exclude_outside: bool = False
    antialias: bool = False
    extrapolation_value: float = 0.0


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


def resize(ctx: LoweringContext, x: Value, spec: ResizeSpec, axes: Sequence[Axis], order: Sequence[int],
           rois: dict) -> Value:
    """Resize NCHW-ordered ``x`` (``axes``: every axis's :class:`Axis`) along the axes ``order``;
    ``rois`` holds tf_crop_and_resize's (start, end) per axis. TOSA RESIZE when it is exact, else MATMULs."""
    if spec.mode != "nearest" and not x.type.dtype.is_float:
        raise ConvertError(f"{spec.mode} Resize on {x.type.dtype.value} data is not supported (TOSA's integer "
                           "BILINEAR returns a scaled int32 result)")
    if not _needs_separable(spec, axes):
        try:
            plans, requirements = resize_tosa.plan(spec, spec.mode, axes)
        except ConvertError:
            if not x.type.dtype.is_float:
                raise
        else:
            return resize_tosa.emit(ctx, x, spec.mode, axes, plans, requirements)
    return separable_resize(ctx, spec, x, spec.mode, axes, order, rois)


def _needs_separable(spec: ResizeSpec, axes: Sequence[Axis]) -> bool:
    """Cubic, tf_crop_and_resize and antialias when shrinking have no TOSA RESIZE form."""
    if spec.mode == "cubic" or spec.coordinate_transformation_mode == "tf_crop_and_resize":
        return True
    antialias = spec.antialias and spec.mode == "linear"
    return bool(antialias) and any(a.scale is None or a.scale < 1 for a in axes)


def scaled_axis(size: Dim, scale: np.float32, index: int) -> Axis:
    """An axis resized by a float32 ``scale`` (ONNX ``scales``): the output size as the reference floors it."""
    if not math.isfinite(float(scale)) or scale <= 0:
        raise ConvertError(f"Resize scale {float(scale)} on axis {index} must be positive and finite")
    exact = Fraction(float(scale))
    if isinstance(size, int):        # the reference: (float32 scales * int64 shape).astype(int)
        return Axis(size, positive(int(np.floor(size * np.float64(scale))), index), exact, scale)
    return Axis(size, floordiv(mul(size, exact.numerator), exact.denominator), exact, scale)


def positive(out: int, index: int) -> int:
    if out < 1:
        raise ConvertError(f"Resize output axis {index} would have size {out}; TOSA requires every dim to be >= 1")
    return out


def sized_axis(size: Dim, out: Dim, index: int) -> Axis:
    """An axis resized from ``size`` to ``out``: the scale is their ratio (None when symbolic and not a multiple)."""
    if isinstance(size, int) and isinstance(out, int):
        return Axis(size, positive(out, index), Fraction(out, size), np.int64(out) / size, True)
    q = floordiv(out, size)
    if isinstance(q, int) and same(mul(size, q), out):
        return Axis(size, out, Fraction(q), np.float64(q), True)
    return Axis(size, out, None, None, True)
