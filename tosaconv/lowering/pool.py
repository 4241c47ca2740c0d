"""Pooling on NHWC tensors for both importers: fitted windows, MAX_POOL2D padding, AVG_POOL2D counts.

The window's geometry (:mod:`.window`) gives each spatial axis a :class:`~.window.Fit`.
TOSA's AVG_POOL2D never counts padding, which is what ONNX's
``count_include_pad=0`` and TFLite's AVERAGE_POOL_2D compute. When a symbolic
size needs an explicit end PAD (which AVG_POOL2D would count),
:func:`average_pool_by_ratio` divides by the same pool of a ones tensor, so
the counts cancel. Pads as large as the kernel are refused: a TOSA pool reads
at least one input value per window.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..ir import attrs as A
from ..ir.dtypes import DType
from ..ir.ops import Op
from .dims import index_for
from .errors import ConvertError
from .window import Window, apply_fits, fit

if TYPE_CHECKING:
    from ..ir.graph import Value
    from ..symbolic.expr import Dim
    from .context import LoweringContext
    from .window import Fit, Geometry


def pool_fits(x_nhwc: Value, w: Window, geoms: Sequence[Geometry]) -> list:
    """The H and W fits of NHWC ``x_nhwc`` for window ``w`` and per-axis geometries ``geoms``."""
    hw = x_nhwc.type.shape[1:3]
    return [fit(hw[i], w.span(i), w.stride[i], geoms[i]) for i in range(2)]


def check_pads(what: str, pad: Sequence[int], w: Window) -> None:
    kernel = (w.kernel[0], w.kernel[0], w.kernel[1], w.kernel[1])
    if any(p >= k for p, k in zip(pad, kernel)):
        raise ConvertError(f"{what} pads {list(pad)} (top, bottom, left, right) must be smaller than "
                           f"the kernel {list(w.kernel)}: TOSA pools read at least one input value per window")


def pad_hw(ctx: LoweringContext, x: Value, pads: Sequence[Dim], value: float) -> Value:
    """PAD the H and W axes of NHWC ``x`` by (top, bottom, left, right) with ``value``."""
    if not any(pads):
        return x
    return ctx.b.emit(Op.PAD, x, attrs=A.PadAttrs((0, 0) + tuple(pads) + (0, 0), value))


def average_pool(ctx: LoweringContext, what: str, x: Value, w: Window, fits: Sequence[Fit]) -> Value:
    """AVG_POOL2D of NHWC ``x`` with the fits applied (pads never count)."""
    x, pad = apply_fits(ctx, x, fits, 0.0)
    check_pads(what, pad, w)
    return ctx.b.emit(Op.AVG_POOL2D, x, attrs=avg_attrs(w, pad))


def average_pool_by_ratio(ctx: LoweringContext, what: str, x: Value, w: Window, fits: Sequence[Fit],
                          counted: Optional[Sequence[Dim]]) -> Value:
    """The end pad is appended as zeros, which AVG_POOL2D would count: divide by the same pool
    of a ones tensor (ones where the source counts, zeros where it does not), so the counts cancel.
    ``counted`` is (top, bottom, left, right) padding already applied to ``x`` that counts, or None."""
    n, h, wd, c = x.type.shape
    if counted is not None:
        h, wd = h - counted[0] - counted[1], wd - counted[2] - counted[3]
    ones = ctx.b.const(np.ones((1, 1, 1, 1), x.type.dtype.numpy))
    ones = ctx.b.emit(Op.DYN_TILE, ones, *[index_for(ctx, d) for d in (1, h, wd, 1)])
    ones = pad_hw(ctx, ones, counted or (0, 0, 0, 0), 1.0)
    total, valid = average_pool(ctx, what, x, w, fits), average_pool(ctx, what, ones, w, fits)
    return ctx.b.emit(Op.MUL, total, ctx.b.emit(Op.RECIPROCAL, valid), attrs=A.MulAttrs(0))


def avg_attrs(w: Window, pad: tuple[int, ...]) -> A.AvgPool2dAttrs:
    return A.AvgPool2dAttrs(w.kernel, w.stride, pad, DType.FP32)
