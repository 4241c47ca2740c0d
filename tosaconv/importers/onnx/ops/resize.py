"""The converter for ONNX Resize (opsets 11, 13, 18, 19) to TOSA RESIZE on NCHW input.

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
instead. What has no such form is refused with the reason: cubic mode,
tf_crop_and_resize, antialias when shrinking, resizing N or C, bilinear
integer data, scales that are not small fractions, symbolic sizes whose
border would depend on the size, and mappings outside TOSA's limits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ....ir import attrs as A
from ....ir.ops import Op
from ....symbolic.constraints import Kind
from ....symbolic.expr import Dim, add, floordiv, mul, same, sub
from ..reader import ConvertError
from ..registry import converter
from .common import slice_
from .nn import to_nchw, to_nhwc

MAX_SCALE_N = 1 << 11   # TOSA: scale_n <= 2048
IDENTITY = (1, 1, 0, 0)  # (scale_n, scale_d, offset, border) of an axis that does not change


@dataclass(frozen=True)
class Axis:
    """One spatial axis: input and output size, ONNX's scale as an exact fraction, and the
    float scale ONNX's reference computes with (they differ when the scale is not dyadic)."""

    size: Dim
    out: Dim
    scale: Fraction
    ref_scale: np.floating


@converter("Resize", since=11)
def convert_resize(ctx, node):
    x = ctx.tensor(node.inputs[0])
    if x.type.rank != 4:
        raise ConvertError(f"Resize supports 4-D NCHW input (2-D spatial), not rank {x.type.rank}")
    mode = node.attr("mode")
    _check_mode(node, x, mode)
    y, params = to_nhwc(ctx, x), []
    for i, axis in enumerate(_axes(ctx, node, x)):
        plan = _plan(ctx, node, mode, axis)
        if plan is None:
            y, plan = _repeat_first(ctx, y, 1 + i, axis.out), IDENTITY
        params.append(plan)
    if params != [IDENTITY, IDENTITY]:
        (yn, yd, yo, yb), (xn, xd, xo, xb) = params
        mode_name = "NEAREST" if mode == "nearest" else "BILINEAR"
        y = ctx.b.emit(Op.RESIZE, y, attrs=A.ResizeAttrs((yn, yd, xn, xd), (yo, xo), (yb, xb), mode_name))
    return to_nchw(ctx, y)


def _check_mode(node, x, mode: str):
    if mode not in ("nearest", "linear"):
        raise ConvertError(f"Resize mode '{mode}' is not supported: TOSA RESIZE is nearest or bilinear only")
    if mode == "linear" and not x.type.dtype.is_float:
        raise ConvertError(f"linear Resize on {x.type.dtype.value} data is not supported (TOSA's integer "
                           "BILINEAR returns a scaled int32 result)")
    ctm = node.attr("coordinate_transformation_mode")
    if ctm == "tf_crop_and_resize":
        raise ConvertError("Resize coordinate_transformation_mode 'tf_crop_and_resize' is not supported: "
                           "TOSA RESIZE has no region of interest or extrapolation value")


# -- sizes and scales ---------------------------------------------------------------------

def _axes(ctx, node, x) -> list:
    """The H and W axes with their output sizes and scales; N and C must stay as they are."""
    shape = x.type.shape
    kind, values, axes = _full_rank(node, shape, _scales(ctx, node), _sizes(ctx, node))
    if kind == "sizes" and node.version >= 18 and node.attr("keep_aspect_ratio_policy") != "stretch":
        return _keep_aspect(node, shape, values, axes)
    _check_batch_channels([1.0, 1.0] if kind == "scales" else shape[:2], values[:2])
    return [_axis(shape[i], kind, values[i], i) for i in (2, 3)]


def _check_batch_channels(expected, got):
    if not all(same(a, b) if not isinstance(a, float) else a == b for a, b in zip(expected, got)):
        raise ConvertError("Resize of the batch or channel axis is not supported; only H and W resize")


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
    rank = len(shape)
    axes = node.attr("axes", None) if node.version >= 18 else None
    axes = list(range(rank)) if axes is None else [a + rank if a < 0 else a for a in axes]
    if len(values) != len(axes):
        raise ConvertError(f"Resize {kind} has {len(values)} entries for {len(axes)} axes")
    full = [1.0] * rank if kind == "scales" else list(shape)
    for a, v in zip(axes, values):
        full[a] = v
    return kind, full, axes


def _keep_aspect(node, shape, sizes, axes) -> list:
    """keep_aspect_ratio_policy not_larger / not_smaller: one scale for the axes, sizes rounded half up."""
    if not all(isinstance(shape[a], int) and isinstance(sizes[a], int) for a in axes):
        raise ConvertError("Resize keep_aspect_ratio_policy needs static sizes")
    ratios = [Fraction(sizes[a], shape[a]) for a in axes]
    scale = min(ratios) if node.attr("keep_aspect_ratio_policy") == "not_larger" else max(ratios)
    out = [math.floor(scale * shape[a] + Fraction(1, 2)) if a in axes else shape[a] for a in range(len(shape))]
    _check_batch_channels(shape[:2], out[:2])
    kept = [scale if a in axes else Fraction(1) for a in range(len(shape))]
    return [Axis(shape[a], out[a], kept[a], np.float64(kept[a])) for a in (2, 3)]


def _axis(size: Dim, kind: str, value, index: int) -> Axis:
    if kind == "scales":
        return _scaled_axis(size, value, index)
    ratio = _size_ratio(size, value, index)
    return Axis(size, value, ratio, np.float64(ratio))


def _scaled_axis(size: Dim, scale: np.float32, index: int) -> Axis:
    exact = Fraction(float(scale)).limit_denominator(MAX_SCALE_N)
    if np.float32(exact.numerator / exact.denominator) != scale or exact <= 0:
        raise ConvertError(f"Resize scale {float(scale)} on axis {index} is not a fraction with a "
                           f"denominator up to {MAX_SCALE_N}")
    if isinstance(size, int):
        return Axis(size, int(np.floor(size * np.float64(scale))), exact, scale)
    return Axis(size, floordiv(mul(size, exact.numerator), exact.denominator), exact, scale)


def _size_ratio(size: Dim, out: Dim, index: int) -> Fraction:
    if isinstance(size, int) and isinstance(out, int):
        return Fraction(out, size)
    q = floordiv(out, size)
    if isinstance(q, int) and same(mul(size, q), out):
        return Fraction(q)
    raise ConvertError(f"Resize output size {out} of axis {index} is not a known multiple of the "
                       f"input size {size}; TOSA RESIZE needs a static scale (bind the symbols first)")


# -- coordinate mapping -------------------------------------------------------------------

def _plan(ctx, node, mode: str, axis: Axis):
    """TOSA (scale_n, scale_d, offset, border) for one axis, or None when it repeats element 0."""
    a, b = _mapping(ctx, node, axis)
    if a == 0:
        return None
    if a == 1 and b == 0:
        return IDENTITY
    if mode == "nearest":
        return _nearest_params(node, axis, a, b)
    if node.version >= 18 and node.attr("antialias") and axis.scale < 1:
        raise ConvertError("Resize with antialias when shrinking is not supported: TOSA RESIZE has no "
                           "antialiasing filter")
    return _tosa_params(axis, a, b)


def _mapping(ctx, node, axis: Axis) -> tuple:
    """(A, B) with x_src = A*x + B, per coordinate_transformation_mode; A = 0 means 'element 0'."""
    ctm, s = node.attr("coordinate_transformation_mode"), axis.scale
    half = (1 / s - 1) / 2
    if ctm == "asymmetric":
        return 1 / s, Fraction(0)
    if ctm == "half_pixel":
        return 1 / s, half
    if ctm == "pytorch_half_pixel":
        return _pytorch_half_pixel(ctx, axis, half)
    if ctm == "align_corners":
        return _align_corners(axis)
    if ctm == "half_pixel_symmetric":
        return 1 / s, half + _symmetric_shift(axis)
    raise ConvertError(f"Resize coordinate_transformation_mode '{ctm}' is not supported")


def _pytorch_half_pixel(ctx, axis: Axis, half: Fraction) -> tuple:
    """half_pixel, except that an output length in*scale of exactly 1 reads element 0.

    The length is ONNX's fractional one (as in the ONNX reference; onnxruntime uses the
    integer output size, which differs only when in*scale is not an integer)."""
    length = mul(axis.size, axis.scale.numerator)          # in*scale*denominator
    if isinstance(length, int):
        return (Fraction(0), Fraction(0)) if length == axis.scale.denominator else (1 / axis.scale, half)
    if axis.scale < 1:
        ctx.require(Kind.GE, length, axis.scale.denominator + 1,
                    "pytorch_half_pixel Resize maps an output length of exactly 1 to element 0")
    return 1 / axis.scale, half


def _align_corners(axis: Axis) -> tuple:
    """x_src = x * (in-1) / (length-1), with ONNX's fractional length in*scale (the reference's
    reading; onnxruntime uses the integer output size, which differs for non-integer in*scale)."""
    if not isinstance(axis.size, int):
        raise ConvertError("Resize align_corners needs a static input size: its scale (in-1)/(out-1) "
                           "depends on it")
    length = axis.size * axis.scale
    if length == 1 or axis.size == 1:
        return Fraction(0), Fraction(0)
    return Fraction(axis.size - 1) / (length - 1), Fraction(0)


def _symmetric_shift(axis: Axis) -> Fraction:
    """half_pixel_symmetric centres the output: in/2 * (1 - out / (scale*in))."""
    exact_out = sub(mul(axis.size, axis.scale.numerator), mul(axis.out, axis.scale.denominator))
    if same(exact_out, 0):
        return Fraction(0)
    if not (isinstance(axis.size, int) and isinstance(axis.out, int)):
        raise ConvertError("Resize half_pixel_symmetric with a non-integer output size needs static sizes")
    return Fraction(axis.size, 2) * (1 - Fraction(axis.out) / (axis.scale * axis.size))


# nearest_mode -> (shift of x_src, nudge in grid units that breaks exact ties its way) for TOSA's
# round-half-up; a nudge of -1 (not -1/2) keeps ceil's last pixel inside the input.
NEAREST = {"round_prefer_ceil": (Fraction(0), Fraction(0)), "round_prefer_floor": (Fraction(0), Fraction(-1, 2)),
           "floor": (Fraction(-1, 2), Fraction(0)), "ceil": (Fraction(1, 2), Fraction(-1))}


def _nearest_params(node, axis: Axis, a: Fraction, b: Fraction) -> tuple:
    """TOSA parameters whose NEAREST picks ONNX's input pixel for every output pixel."""
    mode = node.attr("nearest_mode")
    if mode not in NEAREST:
        raise ConvertError(f"Resize nearest_mode '{mode}' is not supported")
    shift, natural = NEAREST[mode]
    unit = Fraction(1, math.lcm(a.denominator, b.denominator))   # every x_src is a multiple of unit
    if not (isinstance(axis.size, int) and isinstance(axis.out, int)):
        return _tosa_params(axis, a, b + shift + natural * unit)
    nudges = [natural] + [t for t in (Fraction(0), Fraction(-1, 2), Fraction(-1)) if t != natural]
    return _first_match(axis, a, [b + shift + t * unit for t in nudges], _reference_nearest(node, axis, mode))


def _first_match(axis: Axis, a: Fraction, offsets, want: np.ndarray) -> tuple:
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


def _reference_nearest(node, axis: Axis, mode: str) -> np.ndarray:
    """ONNX's nearest input index per output pixel, with the reference's float types: the scale
    keeps its own type (float32 from ``scales``), everything else is float64."""
    x, s, size = np.arange(axis.out, dtype=np.float64), axis.ref_scale, axis.size
    ctm, length = node.attr("coordinate_transformation_mode"), s * size
    src = {"asymmetric": lambda: x / s,
           "half_pixel": lambda: (x + 0.5) / s - 0.5,
           "pytorch_half_pixel": lambda: (x + 0.5) / s - 0.5 if length != 1 else x * 0 - 0.5,
           "align_corners": lambda: x * (size - 1) / (length - 1) if length != 1 else x * 0,
           "half_pixel_symmetric": lambda: size / 2 * (1 - np.int64(axis.out) / length) + (x + 0.5) / s - 0.5,
           }[ctm]()
    low = np.floor(src)
    ratio = src - low
    up = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5,
          "floor": np.zeros_like(ratio, bool), "ceil": ratio > 0}[mode]
    return np.clip(low + up, 0, size - 1).astype(np.int64)


def _tosa_nearest(axis: Axis, params) -> np.ndarray:
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


def _check_limits(n: int, d: int, offset: int, border: int):
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


def _repeat_first(ctx, y, axis: int, count: Dim):
    """Every output along ``axis`` reads element 0: SLICE it and TILE it ``count`` times."""
    sizes = list(y.type.shape)
    sizes[axis] = 1
    first = slice_(ctx, y, [0, 0, 0, 0], sizes)
    if not isinstance(count, int):
        raise ConvertError("Resize repeating one element needs a static output size")
    multiples = [1, 1, 1, 1]
    multiples[axis] = count
    return first if count == 1 else ctx.b.emit(Op.TILE, first, attrs=A.TileAttrs(tuple(multiples)))
