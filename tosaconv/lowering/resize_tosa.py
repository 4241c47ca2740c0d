"""Resize as TOSA RESIZE: nearest and linear modes whose coordinate mapping is affine, on H and W.

ONNX maps output index ``x`` of a spatial axis to the input coordinate
``x_src = A*x + B`` (A and B rational, from the scale and the
coordinate_transformation_mode); TOSA RESIZE computes ``(x*scale_d + offset)
/ scale_n``, clamps the two neighbours to the input, and in NEAREST mode
rounds halves up. So every mode that is affine in ``x`` is exact in TOSA:
``scale_n`` is the common denominator, ``scale_d = A*scale_n``, ``offset =
B*scale_n``, and ``border`` makes TOSA's output size ONNX's. The other
nearest_modes shift ``x_src`` before that rounding: by -1/2 (floor), by +1/2
(ceil), and by a fraction of the coordinate grid's unit, which only decides
exact ties. On a static axis the picked pixels are checked against ONNX's
reference arithmetic (a float scale such as 0.6 breaks some exact ties one
way). An axis on which every output reads input element 0 is a SLICE and TILE
instead. :func:`plan` raises a ConvertError, before emitting anything, for what
has no such form (resizing N or C, scales that are not small fractions,
symbolic sizes whose border would depend on the size, mappings outside TOSA's
limits); :func:`.resize.resize` then builds the separable form of :mod:`.resize_separable`.
The modes are ONNX's (a :class:`~.resize.ResizeSpec`); TFLite's resizes are
spelled in them.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

import numpy as np

from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.constraints import Kind
from ..symbolic.expr import add, mul, same, sub
from .dims import slice_
from .errors import ConvertError
from .window import to_nchw, to_nhwc

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..symbolic.expr import Dim
    from .context import LoweringContext
    from .resize import Axis, ResizeSpec

MAX_SCALE_N = 1 << 11   # TOSA: scale_n <= 2048
IDENTITY = (1, 1, 0, 0)  # (scale_n, scale_d, offset, border) of an axis that does not change


def plan(spec: ResizeSpec, mode: str, axes: Sequence[Axis]) -> tuple:
    """(per H/W axis: TOSA (scale_n, scale_d, offset, border) or None to repeat element 0,
    the ledger requirements to record when the plan is used)."""
    if len(axes) != 4:
        raise ConvertError(f"TOSA RESIZE takes 4-D NCHW input (2-D spatial), not rank {len(axes)}")
    if not all(same(a.size, a.out) and (a.scale is None or a.scale == 1 or same(a.size, 1)) for a in axes[:2]):
        raise ConvertError("TOSA RESIZE cannot resize the batch or channel axis; only H and W")
    requirements = []
    return [_plan_axis(spec, mode, a, i, requirements) for i, a in enumerate(axes[2:])], requirements


def emit(ctx: LoweringContext, x: Value, mode: str, axes: Sequence[Axis], plans: Sequence[Optional[tuple]],
         requirements: Iterable[tuple[Kind, Dim, Dim, str]]) -> Value:
    for kind, a, b, reason in requirements:
        ctx.require(kind, a, b, reason)
    y, params = to_nhwc(ctx, x), []
    for i, (axis, p) in enumerate(zip(axes[2:], plans)):
        if p is None:
            y, p = _repeat_first(ctx, y, 1 + i, axis.out), IDENTITY
        params.append(p)
    if params != [IDENTITY, IDENTITY]:
        (yn, yd, yo, yb), (xn, xd, xo, xb) = params
        mode_name = "NEAREST" if mode == "nearest" else "BILINEAR"
        y = ctx.b.emit(Op.RESIZE, y, attrs=A.ResizeAttrs((yn, yd, xn, xd), (yo, xo), (yb, xb), mode_name))
    return to_nchw(ctx, y)


def _plan_axis(spec: ResizeSpec, mode: str, axis: Axis, index: int,
               requirements: list[tuple[Kind, Dim, Dim, str]]) -> Optional[tuple]:
    scale = _tosa_scale(axis, index)
    if scale == 1 and same(axis.size, axis.out):     # an unchanged axis (onnxruntime skips it too)
        return IDENTITY
    a, b = _mapping(spec, axis, scale, requirements)
    if a == 0:
        if not isinstance(axis.out, int):
            raise ConvertError("Resize repeating one element needs a static output size")
        return None
    if a == 1 and b == 0:
        return IDENTITY
    if mode == "nearest":
        return _nearest_params(spec, axis, a, b)
    return _tosa_params(axis, a, b)


def _tosa_scale(axis: Axis, index: int) -> Fraction:
    """The axis's scale as a fraction with a small denominator (TOSA's scale_n is at most 2048)."""
    if axis.scale is None:
        raise ConvertError(f"Resize output size {axis.out} of axis {index + 2} is not a known multiple of the "
                           f"input size {axis.size}; TOSA RESIZE needs a static scale (bind the symbols first)")
    if axis.by_sizes:
        return axis.scale
    nice = axis.scale.limit_denominator(MAX_SCALE_N)
    if np.float32(nice.numerator / nice.denominator) != np.float32(axis.ref_scale):
        raise ConvertError(f"Resize scale {float(axis.ref_scale)} on axis {index + 2} is not a fraction with a "
                           f"denominator up to {MAX_SCALE_N}")
    return nice


# -- coordinate mapping -------------------------------------------------------------------

def _mapping(spec: ResizeSpec, axis: Axis, s: Fraction, requirements: list[tuple[Kind, Dim, Dim, str]]) -> tuple:
    """(A, B) with x_src = A*x + B, per coordinate_transformation_mode; A = 0 means 'element 0'."""
    ctm = spec.coordinate_transformation_mode
    half = (1 / s - 1) / 2
    if ctm == "asymmetric":
        return 1 / s, Fraction(0)
    if ctm == "half_pixel":
        return 1 / s, half
    if ctm == "tf_half_pixel_for_nn":
        return 1 / s, 1 / (2 * s)
    if ctm == "pytorch_half_pixel":
        return _pytorch_half_pixel(axis, s, half, requirements)
    if ctm == "align_corners":
        return _align_corners(axis, s)
    if ctm == "half_pixel_symmetric":
        return 1 / s, half + _symmetric_shift(axis, s)
    raise ConvertError(f"Resize coordinate_transformation_mode '{ctm}' has no TOSA RESIZE form")


def _pytorch_half_pixel(axis: Axis, s: Fraction, half: Fraction,
                        requirements: list[tuple[Kind, Dim, Dim, str]]) -> tuple:
    """half_pixel, except that an output length in*scale of exactly 1 reads element 0.

    The length is ONNX's fractional one (as in the ONNX reference; onnxruntime uses the
    integer output size, which differs only when in*scale is not an integer)."""
    length = mul(axis.size, s.numerator)          # in*scale*denominator
    if isinstance(length, int):
        return (Fraction(0), Fraction(0)) if length == s.denominator else (1 / s, half)
    if s < 1:
        requirements.append((Kind.GE, length, s.denominator + 1,
                             "pytorch_half_pixel Resize maps an output length of exactly 1 to element 0"))
    return 1 / s, half


def _align_corners(axis: Axis, s: Fraction) -> tuple:
    """x_src = x * (in-1) / (length-1), with ONNX's fractional length in*scale (the reference's
    reading; onnxruntime uses the integer output size, which differs for non-integer in*scale)."""
    if not isinstance(axis.size, int):
        raise ConvertError("Resize align_corners needs a static input size: its scale (in-1)/(out-1) "
                           "depends on it")
    length = axis.size * s
    if length == 1 or axis.size == 1:
        return Fraction(0), Fraction(0)
    return Fraction(axis.size - 1) / (length - 1), Fraction(0)


def _symmetric_shift(axis: Axis, s: Fraction) -> Fraction:
    """half_pixel_symmetric centres the output: in/2 * (1 - out / (scale*in))."""
    exact_out = sub(mul(axis.size, s.numerator), mul(axis.out, s.denominator))
    if same(exact_out, 0):
        return Fraction(0)
    if not (isinstance(axis.size, int) and isinstance(axis.out, int)):
        raise ConvertError("Resize half_pixel_symmetric with a non-integer output size needs static sizes")
    return Fraction(axis.size, 2) * (1 - Fraction(axis.out) / (s * axis.size))


# nearest_mode -> (shift of x_src, nudge in grid units that breaks exact ties its way) for TOSA's
# round-half-up; a nudge of -1 (not -1/2) keeps ceil's last pixel inside the input.
NEAREST = {"round_prefer_ceil": (Fraction(0), Fraction(0)), "round_prefer_floor": (Fraction(0), Fraction(-1, 2)),
           "floor": (Fraction(-1, 2), Fraction(0)), "ceil": (Fraction(1, 2), Fraction(-1))}


def _nearest_params(spec: ResizeSpec, axis: Axis, a: Fraction, b: Fraction) -> tuple:
    """TOSA parameters whose NEAREST picks ONNX's input pixel for every output pixel."""
    mode = spec.nearest_mode
    if mode not in NEAREST:
        raise ConvertError(f"Resize nearest_mode '{mode}' is not supported")
    shift, natural = NEAREST[mode]
    unit = Fraction(1, math.lcm(a.denominator, b.denominator))   # every x_src is a multiple of unit
    if not (isinstance(axis.size, int) and isinstance(axis.out, int)):
        return _tosa_params(axis, a, b + shift + natural * unit)
    nudges = [natural] + [t for t in (Fraction(0), Fraction(-1, 2), Fraction(-1)) if t != natural]
    want = reference_nearest(spec.coordinate_transformation_mode, axis, mode)
    return _first_match(axis, a, [b + shift + t * unit for t in nudges], want)


def _first_match(axis: Axis, a: Fraction, offsets: Iterable[Fraction], want: np.ndarray) -> tuple:
    """The first offset whose TOSA parameters are within limits and pick the pixels ``want``."""
    error = None
    for b in offsets:
        try:
            params = _tosa_params(axis, a, b)
        except ConvertError as e:
            error = error or e
            continue
        if np.array_equal(_tosa_nearest(axis, params), want):
            return params
        error = ConvertError(f"nearest Resize from {axis.size} to {axis.out}: no TOSA RESIZE offset picks the "
                             "same input pixels as ONNX (its float arithmetic breaks exact ties both ways)")
    raise error


def reference_nearest(ctm: str, axis: Axis, mode: str) -> np.ndarray:
    """ONNX's nearest input index per output pixel for coordinate_transformation_mode ``ctm`` and
    nearest_mode ``mode``, with the reference's float types: the scale keeps its own type (float32
    from ``scales``), everything else is float64."""
    x, s, size = np.arange(axis.out, dtype=np.float64), axis.ref_scale, axis.size
    length = s * size
    src = {"asymmetric": lambda: x / s,
           "half_pixel": lambda: (x + 0.5) / s - 0.5,
           "tf_half_pixel_for_nn": lambda: (x + 0.5) / s,
           "pytorch_half_pixel": lambda: (x + 0.5) / s - 0.5 if length != 1 else x * 0 - 0.5,
           "align_corners": lambda: x * (size - 1) / (length - 1) if length != 1 else x * 0,
           "half_pixel_symmetric": lambda: size / 2 * (1 - np.int64(axis.out) / length) + (x + 0.5) / s - 0.5,
           }[ctm]()
    low = np.floor(src)
    ratio = src - low
    up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
          "floor": np.zeros_like(ratio, bool), "ceil": ratio > 0}[mode]
    return np.clip(low + up, 0, size - 1).astype(np.int64)


def _tosa_nearest(axis: Axis, params: tuple) -> np.ndarray:
    """The input index TOSA RESIZE NEAREST reads per output pixel (integer pseudocode)."""
    n, d, offset, _ = params
    y = np.arange(axis.out, dtype=np.int64) * d + offset
    iy = y // n
    return np.clip(np.where(2 * (y - iy * n) >= n, iy + 1, iy), 0, axis.size - 1)


def _tosa_params(axis: Axis, a: Fraction, b: Fraction) -> tuple:
    n = math.lcm(a.denominator, b.denominator)
    d, offset = int(a * n), int(b * n)
    g = math.gcd(n, d, offset)
    n, d, offset = n // g, d // g, offset // g
    border = add(sub(mul(sub(axis.out, 1), d), mul(sub(axis.size, 1), n)), offset)
    if not isinstance(border, int):
        raise ConvertError(f"Resize from {axis.size} to {axis.out}: the TOSA border depends on the size "
                           "(a non-integer scale on a symbolic dim); bind the symbol first")
    _check_limits(n, d, offset, border)
    return n, d, offset, border


def _check_limits(n: int, d: int, offset: int, border: int) -> None:
    problems = []
    if n > MAX_SCALE_N:
        problems.append(f"scale_n {n} > {MAX_SCALE_N}")
    if d >= 16 * n:
        problems.append(f"downscale {d}/{n} is 16x or more")
    if not -n <= offset < 16 * n:
        problems.append(f"offset {offset} outside [-{n}, {16 * n}): the first output reads before pixel -1")
    if not -16 * n <= border < n:
        problems.append(f"border {border} outside [-{16 * n}, {n}): the last output reads past the last input "
                        "pixel (ONNX clamps it; TOSA does not allow it)")
    if problems:
        raise ConvertError("Resize is outside TOSA RESIZE's limits: " + "; ".join(problems))


def _repeat_first(ctx: LoweringContext, y: Value, axis: int, count: Dim) -> Value:
    """Every output along ``axis`` reads element 0: SLICE it and TILE it ``count`` times."""
    sizes = list(y.type.shape)
    sizes[axis] = 1
    first = slice_(ctx, y, [0, 0, 0, 0], sizes)
    multiples = [1, 1, 1, 1]
    multiples[axis] = count
    return first if count == 1 else ctx.b.emit(Op.TILE, first, attrs=A.TileAttrs(tuple(multiples)))
