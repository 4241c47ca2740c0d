"""Window geometry of the convolutions and pools of both importers, and the NCHW/NHWC moves around them.

A :class:`Window` holds a 2-D (H, W) kernel, stride, dilation, begin/end pads
and an ``auto_pad`` in ONNX's spelling (NOTSET, VALID, SAME_UPPER,
SAME_LOWER: TFLite's SAME puts the odd pad at the end, which is SAME_UPPER).
:func:`geometry` gives the output size and pads the source format floors to;
TOSA requires ``in + pads - span`` to divide by the stride exactly, so
:func:`fit_window` *fits* the input per spatial axis: the end pad shrinks to
what the last window touches, input rows no window touches are sliced off,
and when that amount depends on a symbol (a stride above 1 on a symbolic
size) the end pad is appended with an explicit PAD and the input is cut with
DYN_SLICE to exactly the rows the windows cover. The TOSA op's own shape rule
then gives the source's output size. ONNX's NCHW ops go through local
TRANSPOSE pairs (:func:`to_nhwc`, :func:`to_nchw`; a later pass cancels
neighbouring pairs) and lift 1-D ops to 2-D with an H of 1 (:func:`lift_1d`).
:func:`transpose_out_pad` and :func:`cut_rows` turn the crops of a transposed
convolution into TOSA's ``out_pad`` plus a SLICE where out_pad cannot reach.
"""
from __future__ import annotations

from ..records import dataclass   # dataclasses' classes, built faster (issue 13)
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.constraints import Kind
from ..symbolic.expr import Dim, add, dmax, floordiv, mul, sub
from .dims import reshape, slice_
from .errors import ConvertError

if TYPE_CHECKING:
    from ..ir.dtypes import DType
    from ..ir.graph import Value
    from .context import LoweringContext

TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


def to_nhwc(ctx: LoweringContext, x: Value) -> Value:
    return ctx.b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(TO_NHWC))


def to_nchw(ctx: LoweringContext, x: Value) -> Value:
    return ctx.b.emit(Op.TRANSPOSE, x, attrs=A.TransposeAttrs(TO_NCHW))


def lift_1d(ctx: LoweringContext, x: Value, what: str) -> Value:
    """``[N, C, L]`` becomes ``[N, C, 1, L]``; 2-D inputs pass through; other ranks are refused."""
    if x.type.rank == 4:
        return x
    if x.type.rank != 3:
        raise ConvertError(f"{what} supports 1-D and 2-D inputs (rank 3 or 4), not rank {x.type.rank}")
    n, c, length = x.type.shape
    return reshape(ctx, x, [n, c, 1, length])


def drop_1d(ctx: LoweringContext, y: Value, rank: int) -> Value:
    """Undo :func:`lift_1d` on an NCHW result."""
    if rank == 4:
        return y
    n, c, _, length = y.type.shape
    return reshape(ctx, y, [n, c, length])


@dataclass(frozen=True)
class Window:
    """A window's attributes, lifted to 2-D (H, W); ``rank`` is the source op's input rank (NCHW)."""

    kernel: tuple
    stride: tuple
    dilation: tuple
    begin: tuple
    end: tuple
    auto_pad: str
    ceil_mode: bool = False
    rank: int = 4

    def span(self, axis: int) -> int:
        return (self.kernel[axis] - 1) * self.dilation[axis] + 1

    def onnx_axis(self, axis: int) -> int:
        """The ONNX input axis of lifted spatial axis 0 (H) or 1 (W)."""
        return axis + self.rank - 2


@dataclass(frozen=True)
class Geometry:
    """One spatial axis in ONNX's terms: output size, begin pad, end pad, and the most
    end padding the windows can need (ceil mode may need up to stride-1 more than ``end``)."""

    out: Dim
    begin: int
    end: Dim
    bound: int


def geometry(ctx: LoweringContext, size: Dim, w: Window, axis: int) -> Geometry:
    """ONNX's output size and pads for one axis (auto_pad, explicit pads, ceil mode)."""
    k, s = w.span(axis), w.stride[axis]
    if w.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        return _same_geometry(size, k, s, w.auto_pad == "SAME_UPPER", w.onnx_axis(axis))
    if w.auto_pad not in ("NOTSET", "VALID"):
        raise ConvertError(f"auto_pad '{w.auto_pad}' is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    b, e = (0, 0) if w.auto_pad == "VALID" else (w.begin[axis], w.end[axis])
    ctx.require(Kind.GE, add(size, b + e), k, f"input axis {w.onnx_axis(axis)} plus padding covers the window")
    if not w.ceil_mode:
        return Geometry(add(floordiv(sub(add(size, b + e), k), s), 1), b, e, e)
    out = add(floordiv(sub(add(size, b + e + s - 1), k), s), 1)
    return Geometry(_last_window_inside(out, size, b, e, k, s), b, e, e + s - 1)


def _last_window_inside(out: Dim, size: Dim, begin: int, end: int, k: int, s: int) -> Dim:
    """Ceil mode drops a last window that would start in the end padding (ONNX and ORT agree).

    (out-1)*s is below size+begin+s-(k-end), so with s <= k-end the rule never fires."""
    if isinstance(out, int) and isinstance(size, int):
        return out - 1 if (out - 1) * s >= size + begin else out
    if s <= k - end:
        return out
    raise ConvertError(f"ceil_mode with stride {s} > window {k} - end pad {end} on a symbolic size: "
                       "whether the last window is dropped depends on the size; bind the symbol first")


def _same_geometry(size: Dim, k: int, s: int, upper: bool, axis: int) -> Geometry:
    """SAME padding: out = ceil(size / s), total pad (out-1)*s + k - size split begin/end."""
    out = floordiv(add(size, s - 1), s)
    if isinstance(size, int):
        total = max(0, (out - 1) * s + k - size)
        begin = total // 2 if upper else total - total // 2
        return Geometry(out, begin, total - begin, total - begin)
    lo, hi = max(0, k - s), k - 1   # the total pad for any size
    begins = {t // 2 if upper else t - t // 2 for t in (lo, hi)}
    if len(begins) != 1:
        raise ConvertError(
            f"SAME padding on symbolic input axis {axis} (size {size}) with stride {s} and window {k}: "
            f"the begin pad is {min(begins)} or {max(begins)} depending on the size modulo {s}, and TOSA "
            "pads are static; bind the symbol (--bind) or export with explicit pads")
    begin = begins.pop()
    end = sub(dmax(0, sub(add(mul(sub(out, 1), s), k), size)), begin)
    return Geometry(out, begin, end, hi - begin)


@dataclass(frozen=True)
class Fit:
    """How one axis meets TOSA: the op's pads, rows appended by PAD, rows kept by a slice."""

    pad: tuple
    append: int = 0
    keep: Optional[Dim] = None


def fit(size: Dim, span: int, stride: int, g: Geometry) -> Fit:
    """Pads and input cuts so that (size + pads - span) divides by the stride exactly."""
    extent = add(mul(sub(g.out, 1), stride), span)     # rows the windows cover, begin pad included
    tail = sub(sub(extent, g.begin), size)            # end pad the op needs; < 0 means unused rows
    if isinstance(tail, int):
        return Fit((g.begin, tail)) if tail >= 0 else Fit((g.begin, 0), 0, add(size, tail))
    return Fit((g.begin, 0), g.bound, sub(extent, g.begin))


def apply_fits(ctx: LoweringContext, x: Value, fits: Sequence[Fit], pad_value: float) -> tuple[Value, tuple]:
    """Apply the appends and cuts of the H and W fits to an NHWC tensor; returns (x, TOSA pad)."""
    if any(f.append for f in fits):
        padding = (0, 0, 0, fits[0].append, 0, fits[1].append, 0, 0)
        x = ctx.b.emit(Op.PAD, x, attrs=A.PadAttrs(padding, pad_value))
    if any(f.keep is not None for f in fits):
        n, h, w, c = x.type.shape
        sizes = [n, _pick(fits[0].keep, h), _pick(fits[1].keep, w), c]
        x = slice_(ctx, x, [0, 0, 0, 0], sizes)
    return x, fits[0].pad + fits[1].pad


def _pick(keep: Optional[Dim], size: Dim) -> Dim:
    return size if keep is None else keep


def fit_window(ctx: LoweringContext, x_nhwc: Value, w: Window, pad_value: float) -> tuple[Value, tuple]:
    """ONNX's geometry for both spatial axes, fitted and applied; returns (x, TOSA pad). The fits of static
    H and W are remembered per window (a model repeats a few geometries over many convolutions): they are
    a pure function of them, and the one ledger fact they need holds (it raised the first time if not)."""
    hw = x_nhwc.type.shape[1:3]
    key = (hw, w) if type(hw[0]) is int and type(hw[1]) is int else None
    fits = ctx.static_fits.get(key) if key is not None else None
    if fits is None:
        fits = [fit(hw[i], w.span(i), w.stride[i], geometry(ctx, hw[i], w, i)) for i in range(2)]
        if key is not None:
            ctx.static_fits[key] = fits
    return apply_fits(ctx, x_nhwc, fits, pad_value)


def lowest(dtype: DType) -> float:
    """The value that never wins a max (padding for MAX_POOL2D done by an explicit PAD)."""
    if dtype.is_float:
        return float("-inf")
    return float(np.iinfo(dtype.numpy).min)


def transpose_out_pad(crops: Sequence[tuple[int, int]], extra: Sequence[int], kernel: Sequence[int]) -> tuple:
    """(TOSA out_pad, cut): the (begin, end) ``crops`` of a transposed convolution's full output per
    spatial axis, plus ``extra`` end rows, as out_pad clamped above -kernel; ``cut`` is what the clamp
    leaves, for :func:`cut_rows`."""
    pads, cut = [], []
    for (begin, end), e, k in zip(crops, extra, kernel):
        for p in (-begin, e - end):
            pads.append(max(p, 1 - k))
            cut.append(max(p, 1 - k) - p)
    return tuple(pads), tuple(cut)


def cut_rows(ctx: LoweringContext, y: Value, cut: Sequence[int]) -> Value:
    """Remove from NHWC ``y`` the rows that out_pad could not crop (a pad of a kernel size or more)."""
    if not any(cut):
        return y
    n, h, w, c = y.type.shape
    sizes = [n, sub(h, cut[0] + cut[1]), sub(w, cut[2] + cut[3]), c]
    return slice_(ctx, y, [0, cut[0], cut[2], 0], sizes)
