"""The kernel of the TOSA chapter "Image Operators": RESIZE.

Per the pseudocode, output row ``oy`` samples input position
``y = oy * scale_y_d + offset_y`` in units of ``1 / scale_y_n``: integer part
``iy = floor(y / scale_y_n)``, remainder ``ry``, neighbours ``iy0 = max(iy, 0)``
and ``iy1 = min(iy + 1, IH - 1)`` (likewise for x). NEAREST takes ``iy1`` when
the remainder is at least half a unit. BILINEAR weights the four neighbours:
for float data with ``dy = ry / scale_y_n`` in float32 and unit 1.0, for
integer data with ``dy = ry`` and unit ``scale_y_n``, so an int8 result is
scaled by ``scale_y_n * scale_x_n`` (int32 output; int16 gives int48). The
coordinates are computed once per row and column, so no loop runs per pixel.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .numeric import as_int64, f32, float_result, out_dtype, wrap

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext


def axis_coords(out_len: int, in_len: int, scale_n: int, scale_d: int, offset: int) -> tuple:
    """``(i0, i1, remainder)`` arrays for every output coordinate along one axis."""
    position = np.arange(out_len, dtype=np.int64) * scale_d + offset
    index = position // scale_n                     # idiv_floor
    remainder = position - index * scale_n
    return np.maximum(index, 0), np.minimum(index + 1, in_len - 1), remainder


def resize(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, a = args[0], op.attrs
    sy_n, sy_d, sx_n, sx_d = (int(s) for s in a.scale)
    if min(sy_n, sy_d, sx_n, sx_d) <= 0:
        raise ValueError(f"RESIZE scale values must be positive, got {list(a.scale)}")
    oh = ((x.shape[1] - 1) * sy_n - int(a.offset[0]) + int(a.border[0])) // sy_d + 1
    ow = ((x.shape[2] - 1) * sx_n - int(a.offset[1]) + int(a.border[1])) // sx_d + 1
    ys = axis_coords(oh, x.shape[1], sy_n, sy_d, int(a.offset[0]))
    xs = axis_coords(ow, x.shape[2], sx_n, sx_d, int(a.offset[1]))
    if a.mode in ("NEAREST", "NEAREST_NEIGHBOR"):
        return [_nearest(x, ys, xs, sy_n, sx_n)]
    if a.mode == "BILINEAR":
        return [_bilinear(op, x, ys, xs, sy_n, sx_n)]
    raise ValueError(f"RESIZE mode {a.mode!r} is not NEAREST or BILINEAR")


def _take(x: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    return x[:, rows][:, :, cols]


def _nearest(x: np.ndarray, ys: tuple, xs: tuple, sy_n: int, sx_n: int) -> np.ndarray:
    (y0, y1, ry), (x0, x1, rx) = ys, xs
    if x.dtype.kind == "f":
        rows = np.where(f32(ry) / np.float32(sy_n) >= np.float32(0.5), y1, y0)
        cols = np.where(f32(rx) / np.float32(sx_n) >= np.float32(0.5), x1, x0)
    else:
        rows = np.where(2 * ry >= sy_n, y1, y0)
        cols = np.where(2 * rx >= sx_n, x1, x0)
    return _take(x, rows, cols)


def _bilinear(op: Operation, x: np.ndarray, ys: tuple, xs: tuple, sy_n: int, sx_n: int) -> np.ndarray:
    (y0, y1, ry), (x0, x1, rx) = ys, xs
    is_float = x.dtype.kind == "f"
    if not is_float and out_dtype(op).bits < 32:
        raise ValueError(f"integer BILINEAR results are scaled by scale_y_n * scale_x_n and need an "
                         f"i32 or i48 result, but the result is typed {out_dtype(op).value}")
    data = f32(x) if is_float else as_int64(x)
    (dy, unit_y), (dx, unit_x) = _fraction(ry, sy_n, is_float), _fraction(rx, sx_n, is_float)
    dy, dx = dy[:, None, None], dx[:, None]         # broadcast over [OH, OW, C]
    # The spec's sum, term by term and in its order of multiplication.
    acc = _take(data, y0, x0) * (unit_y - dy) * (unit_x - dx)
    acc = acc + _take(data, y0, x1) * (unit_y - dy) * dx
    acc = acc + _take(data, y1, x0) * dy * (unit_x - dx)
    acc = acc + _take(data, y1, x1) * dy * dx
    return float_result(acc, out_dtype(op)) if is_float else wrap(acc, out_dtype(op))


def _fraction(remainder: np.ndarray, scale_n: int, is_float: bool) -> tuple:
    """``(d, unit)``: the float fraction of a unit of 1.0, or the integer remainder of a unit of scale_n."""
    if is_float:
        return f32(remainder) / np.float32(scale_n), np.float32(1.0)
    return remainder, np.int64(scale_n)
