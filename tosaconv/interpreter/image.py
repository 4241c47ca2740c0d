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

import functools
from typing import TYPE_CHECKING

import numpy as np

from .numeric import as_int64, f32, float_result, out_dtype, wrap

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext


@functools.lru_cache(maxsize=64)
def axis_coords(out_len: int, in_len: int, scale_n: int, scale_d: int, offset: int) -> tuple:
    """``(i0, i1, remainder)`` arrays for every output coordinate along one axis.

    Cached (a model resizes the same shapes on every run; working them out cost more than the gather),
    so the arrays are read-only."""
    position = np.arange(out_len, dtype=np.int64) * scale_d + offset
    index = position // scale_n                     # idiv_floor
    remainder = position - index * scale_n
    return _frozen(np.maximum(index, 0)), _frozen(np.minimum(index + 1, in_len - 1)), _frozen(remainder)


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def resize(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, a = args[0], op.attrs
    sy_n, sy_d, sx_n, sx_d = (int(s) for s in a.scale)
    if min(sy_n, sy_d, sx_n, sx_d) <= 0:
        raise ValueError(f"RESIZE scale values must be positive, got {list(a.scale)}")
    oh = ((x.shape[1] - 1) * sy_n - int(a.offset[0]) + int(a.border[0])) // sy_d + 1
    ow = ((x.shape[2] - 1) * sx_n - int(a.offset[1]) + int(a.border[1])) // sx_d + 1
    y_axis = (oh, x.shape[1], sy_n, sy_d, int(a.offset[0]))
    x_axis = (ow, x.shape[2], sx_n, sx_d, int(a.offset[1]))
    if a.mode in ("NEAREST", "NEAREST_NEIGHBOR"):
        float_data = x.dtype.kind == "f"
        return [_take(x, _nearest_index(*y_axis, float_data), _nearest_index(*x_axis, float_data))]
    if a.mode == "BILINEAR":
        return [_bilinear(op, x, axis_coords(*y_axis), axis_coords(*x_axis), sy_n, sx_n)]
    raise ValueError(f"RESIZE mode {a.mode!r} is not NEAREST or BILINEAR")


def _take(x: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    return x.take(rows, axis=1).take(cols, axis=2)      # as x[:, rows][:, :, cols], in half the time


@functools.lru_cache(maxsize=64)
def _nearest_index(out_len: int, in_len: int, scale_n: int, scale_d: int, offset: int, float_data: bool) -> np.ndarray:
    """The input index NEAREST reads for each output coordinate along one axis (cached, read-only): the
    upper neighbour when the remainder is at least half a unit (for float data, as a float32 fraction)."""
    lower, upper, remainder = axis_coords(out_len, in_len, scale_n, scale_d, offset)
    if float_data:
        return _frozen(np.where(f32(remainder) / np.float32(scale_n) >= np.float32(0.5), upper, lower))
    return _frozen(np.where(2 * remainder >= scale_n, upper, lower))


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
