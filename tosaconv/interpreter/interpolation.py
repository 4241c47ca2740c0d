"""ONNX Resize's 1-D interpolation weights, and the kernel of the INTERP_MATRIX helper op.

ONNX Resize is separable: along each resized axis, output ``x`` is a weighted
sum of input elements. :func:`interpolation_weights` computes those weights as
an ``[out, in]`` matrix exactly the way ONNX's reference implementation
(``onnx/reference/ops/op_resize.py``) computes each output: the source
coordinate per coordinate_transformation_mode (in the reference's numpy
scalar types: a ``scales`` value stays float32, so ``scale * in`` is float32),
the ratio in ``(0, 1]``, the nearest / linear / cubic coefficients (antialias
widens linear and cubic when shrinking), the ``n`` nearest input indices with
edge padding (an index outside the input reads the edge element) and
``exclude_outside``'s renormalization. ``tf_crop_and_resize`` also returns
which outputs fall outside the region of interest: their row is zero and they
take the extrapolation value. The importer uses the matrix as a constant when
both sizes are static; INTERP_MATRIX computes it when they are known only
after binding (the op decays to that constant at specialization).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional, Union

import numpy as np

if TYPE_CHECKING:
    from ..ir.attrs import InterpMatrixAttrs
    from ..ir.graph import Operation
    from .registry import KernelContext, KernelValue


def interpolation_weights(in_size: int, out_size: int, attrs: InterpMatrixAttrs,
                          roi: Optional[tuple[np.floating, np.floating]] = None) -> tuple:
    """``(weights [out, in] float64, outside [out] bool)`` for one axis (``roi``: tf_crop_and_resize's
    ``(start, end)`` as numpy scalars of the roi tensor's type)."""
    scale = _scale(in_size, out_size, attrs)
    weights = np.zeros((out_size, in_size), dtype=np.float64)
    outside = np.zeros(out_size, dtype=bool)
    for x in range(out_size):
        x_ori = _source(np.int64(x), in_size, out_size, scale, attrs.coordinate_mode, roi)
        if x_ori is None:
            outside[x] = True
            continue
        coeffs, idxes = _taps(x_ori, scale, in_size, attrs)
        np.add.at(weights[x], np.clip(idxes, 0, in_size - 1), coeffs)
    return weights, outside


def _scale(in_size: int, out_size: int, attrs: InterpMatrixAttrs) -> np.floating:
    if attrs.scale == 0.0:
        return np.int64(out_size) / in_size            # the reference: output_size[i] / data.shape[i]
    return np.dtype(attrs.scale_dtype).type(attrs.scale)


def _source(x: np.int64, in_size: int, out_size: int, scale: np.floating, ctm: str,
            roi: Optional[tuple[np.floating, np.floating]]) -> Optional[Union[float, np.floating]]:
    """The reference's ``x_ori`` for output ``x``, or None outside tf_crop_and_resize's region."""
    output_width = scale * in_size
    if ctm == "align_corners":
        return 0.0 if output_width == 1 else x * (in_size - 1) / (output_width - 1)
    if ctm == "asymmetric":
        return x / scale
    if ctm == "tf_crop_and_resize":
        return _crop_source(x, in_size, output_width, roi)
    if ctm == "pytorch_half_pixel":
        return -0.5 if output_width == 1 else (x + 0.5) / scale - 0.5
    if ctm == "half_pixel":
        return (x + 0.5) / scale - 0.5
    if ctm == "tf_half_pixel_for_nn":     # opset 11 only; not in the reference (onnxruntime's formula)
        return (x + 0.5) / scale
    if ctm == "half_pixel_symmetric":
        adjustment = np.int64(out_size) / output_width
        offset = in_size / 2 * (1 - adjustment)
        return offset + (x + 0.5) / scale - 0.5
    raise ValueError(f"unknown coordinate_transformation_mode {ctm!r}")


def _crop_source(x: np.int64, in_size: int, output_width: np.floating,
                 roi: Optional[tuple[np.floating, np.floating]]) -> Optional[Union[float, np.floating]]:
    start, end = roi
    if output_width == 1:
        x_ori = (end - start) * (in_size - 1) / 2
    else:
        x_ori = x * (end - start) * (in_size - 1) / (output_width - 1)
    x_ori += start * (in_size - 1)
    return None if x_ori < 0 or x_ori > in_size - 1 else x_ori


def _taps(x_ori: Union[float, np.floating], scale: np.floating, in_size: int, attrs: InterpMatrixAttrs) -> tuple:
    """(coefficients, input indices before edge clamping) of one output."""
    x_ori_int = int(np.floor(x_ori))
    ratio = 1 if float(x_ori).is_integer() else x_ori - x_ori_int
    coeffs = np.asarray(_coeffs(ratio, scale, attrs), dtype=np.float64)
    idxes = _neighbors(x_ori, len(coeffs), in_size)
    if attrs.exclude_outside:
        coeffs = np.where((idxes < 0) | (idxes >= in_size), 0.0, coeffs)
        coeffs = coeffs / sum(coeffs)
    return coeffs, idxes


def _coeffs(ratio: Union[float, np.floating], scale: np.floating, attrs: InterpMatrixAttrs) -> Union[list, np.ndarray]:
    if attrs.mode == "nearest":
        return _nearest(ratio, attrs.nearest_mode)
    if attrs.mode == "linear":
        return _linear_antialias(ratio, scale) if attrs.antialias else [1 - ratio, ratio]
    if attrs.mode == "cubic":
        a = attrs.cubic_a
        return _cubic_antialias(ratio, scale, a) if attrs.antialias else _cubic(ratio, a)
    raise ValueError(f"unknown Resize mode {attrs.mode!r}")


def _nearest(ratio: Union[float, np.floating], mode: str) -> list:
    if isinstance(ratio, int) or float(ratio).is_integer():
        return [0, 1]
    up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": False, "ceil": True}
    if mode not in up:
        raise ValueError(f"unknown nearest_mode {mode!r}")
    return [int(not up[mode]), int(up[mode])]


def _cubic(ratio: Union[float, np.floating], a: float) -> list:
    r, s = ratio, 1 - ratio
    return [((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a]


def _cubic_antialias(ratio: Union[float, np.floating], scale: np.floating, a: float) -> np.ndarray:
    scale = min(scale, 1.0)
    start = int(np.floor(-2 / scale) + 1)
    coeffs = [_cubic_kernel(scale * (i - ratio), a) for i in range(start, 2 - start)]
    return np.array(coeffs) / sum(coeffs)


def _cubic_kernel(x: Union[float, np.floating], a: float) -> float:
    x = abs(x)
    x2 = x * x
    x3 = x * x2
    if x <= 1:
        return (a + 2) * x3 - (a + 3) * x2 + 1
    if x < 2:
        return a * x3 - 5 * a * x2 + 8 * a * x - 4 * a
    return 0.0


def _linear_antialias(ratio: Union[float, np.floating], scale: np.floating) -> np.ndarray:
    scale = min(scale, 1.0)
    start = int(np.floor(-1 / scale) + 1)
    args = (np.arange(start, 2 - start) - ratio) * scale
    coeffs = np.clip(1 - np.abs(args), 0, 1)
    return coeffs / sum(coeffs)


def _neighbors(x_ori: Union[float, np.floating], n: int, in_size: int) -> np.ndarray:
    """The reference's ``_get_neighbor``: the ``n`` indices nearest ``x_ori`` (ties to the smaller)
    within the input padded by ``ceil(n/2)`` on both sides, in unpadded coordinates."""
    pad = math.ceil(n / 2)
    x, limit = x_ori + pad, in_size + 2 * pad
    centre = min(max(int(np.floor(x)), 0), limit - 1)
    candidates = range(max(0, centre - n - 1), min(limit, centre + n + 2))
    nearest = sorted(candidates, key=lambda i: (abs(x - i), i))[:n]
    return np.array(sorted(nearest), dtype=np.int64) - pad


def interp_matrix(op: Operation, args: Sequence[KernelValue], ctx: Optional[KernelContext]) -> list[KernelValue]:
    in_size, out_size = (int(v) for v in args)
    if in_size < 1 or out_size < 1:
        raise ValueError(f"INTERP_MATRIX needs sizes >= 1, got in={in_size}, out={out_size}")
    weights, _ = interpolation_weights(in_size, out_size, op.attrs)
    return [np.ascontiguousarray(weights.T[None]).astype(op.attrs.dtype.numpy)]
