"""Resize as one interpolation-matrix MATMUL per resized axis (what TOSA RESIZE cannot express).

ONNX Resize is separable: along each axis, every output is a fixed weighted
sum of the inputs, so the axis is resized by a ``[in, out]`` weight matrix
(:func:`~tosaconv.interpreter.interpolation.interpolation_weights`, computed
exactly as ONNX's reference computes its coefficients). The axis is moved
last with a TRANSPOSE when it is not, the tensor is reshaped to
``[1, rows, in]`` and multiplied by the ``[1, in, out]`` matrix: a CONST when
both sizes are static, else an INTERP_MATRIX helper op that decays to that
CONST once the symbols are bound. Axes are resized from the innermost to the
outermost, as the reference nests them, so tf_crop_and_resize's
extrapolation (outputs outside the region of interest have an all-zero
weight row, and an ADD puts the extrapolation value there) composes the same
way. Identity axes are skipped; float data only.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..interpreter.interpolation import interpolation_weights
from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.expr import product, same
from .dims import index_for, reshape
from .errors import ConvertError

if TYPE_CHECKING:
    from ..ir.dtypes import DType
    from ..ir.graph import Value
    from .context import LoweringContext
    from .resize import Axis, ResizeSpec


def separable_resize(ctx: LoweringContext, spec: ResizeSpec, x: Value, mode: str, axes: Sequence[Axis],
                     order: Sequence[int], rois: dict) -> Value:
    """Resize ``x`` along ``order`` (the resized axes, outermost first); ``axes`` holds every axis's sizes,
    ``rois`` tf_crop_and_resize's (start, end) per resized axis (empty for the other modes)."""
    if not x.type.dtype.is_float:
        raise ConvertError(f"{mode} Resize of {x.type.dtype.value} data has no TOSA RESIZE form here, and the "
                           "interpolation-matrix form needs float data")
    rank = x.type.rank
    y, layout = x, list(range(rank))
    for a in reversed(order):
        step = _weights(ctx, spec, mode, axes[a], rois.get(a), x.type.dtype, a)
        if step is not None:
            y, layout = _apply(ctx, y, layout, a, axes[a], *step)
    if layout != list(range(rank)):
        y = ctx.b.emit(Op.TRANSPOSE, y, attrs=A.TransposeAttrs(tuple(layout.index(i) for i in range(rank))))
    return y


def _attrs(spec: ResizeSpec, mode: str, axis: Axis, dtype: DType) -> A.InterpMatrixAttrs:
    static = isinstance(axis.size, int) and isinstance(axis.out, int)
    if axis.by_sizes and not static:      # out / in, computed once the sizes are known
        scale, scale_dtype = 0.0, "float64"
    else:
        scale, scale_dtype = float(axis.ref_scale), axis.ref_scale.dtype.name
    antialias = spec.antialias and mode != "nearest"
    return A.InterpMatrixAttrs(mode, spec.coordinate_transformation_mode, spec.nearest_mode,
                               float(spec.cubic_coeff_a), bool(spec.exclude_outside), antialias, scale,
                               scale_dtype, dtype)


def _weights(ctx: LoweringContext, spec: ResizeSpec, mode: str, axis: Axis,
             roi: Optional[tuple[np.floating, np.floating]], dtype: DType,
             index: int) -> Optional[tuple[Value, Optional[np.ndarray]]]:
    """(the ``[1, in, out]`` weight value, the extrapolation row values or None), or None for an identity."""
    whole = roi is None or (float(roi[0]) == 0 and float(roi[1]) == 1)
    if whole and same(axis.size, axis.out) and (axis.scale is None or axis.scale == 1):
        return None       # an unchanged axis: identity weights in every mode (onnxruntime skips it too)
    attrs = _attrs(spec, mode, axis, dtype)
    if isinstance(axis.size, int) and isinstance(axis.out, int):
        weights, outside = interpolation_weights(axis.size, axis.out, attrs, roi)
        if not outside.any() and axis.size == axis.out and np.array_equal(weights, np.eye(axis.size)):
            return None
        extra = np.where(outside, spec.extrapolation_value, 0.0) if outside.any() else None
        return ctx.b.const(np.ascontiguousarray(weights.T[None]).astype(dtype.numpy)), extra
    if roi is not None:
        raise ConvertError(f"Resize tf_crop_and_resize on axis {index} of symbolic size {axis.size}: which outputs "
                           "take the extrapolation value depends on the size; bind the symbol first")
    sizes = index_for(ctx, axis.size), index_for(ctx, axis.out)
    return ctx.b.emit(Op.INTERP_MATRIX, *sizes, attrs=attrs), None


def _apply(ctx: LoweringContext, y: Value, layout: list[int], index: int, axis: Axis, weights: Value,
           extra: Optional[np.ndarray]) -> tuple[Value, list[int]]:
    """Resize ``index`` (an original axis) of ``y``, whose axes are ``layout``: move it last, MATMUL."""
    pos = layout.index(index)
    if pos != len(layout) - 1:
        perm = [i for i in range(len(layout)) if i != pos] + [pos]
        y = ctx.b.emit(Op.TRANSPOSE, y, attrs=A.TransposeAttrs(tuple(perm)))
        layout = [layout[p] for p in perm]
    lead = list(y.type.shape[:-1])
    rows = reshape(ctx, y, [1, product(lead), axis.size])
    y = reshape(ctx, ctx.b.emit(Op.MATMUL, rows, weights, attrs=A.MatMulAttrs()), lead + [axis.out])
    if extra is not None:
        shape = [1] * len(lead) + [len(extra)]
        y = ctx.b.emit(Op.ADD, y, ctx.b.const(extra.reshape(shape).astype(y.type.dtype.numpy)))
    return y, layout
