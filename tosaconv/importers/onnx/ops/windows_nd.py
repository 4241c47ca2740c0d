"""ONNX window attributes for any number of spatial axes (3-D convolutions and pools).

:mod:`tosaconv.lowering.window` lifts 1-D ops to 2-D and fits H and W; the 3-D converters and the
axis-at-a-time pools read the same attributes for ``n`` spatial axes into one
:class:`~tosaconv.lowering.window.Window` and fit a channels-last tensor on all of them with the
same per-axis rules (:func:`~tosaconv.lowering.window.geometry`, :func:`~tosaconv.lowering.window.fit`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ....ir import attrs as A
from ....ir.ops import Op
from ....lowering.dims import slice_
from ....lowering.window import Window, fit, geometry
from ..reader import ConvertError

if TYPE_CHECKING:
    from ....ir.graph import Value
    from ..context import ImportContext
    from ..reader import NodeReader


def nd_window(node: NodeReader, kernel: Sequence[int], ceil_mode: bool = False) -> Window:
    """kernel_shape, strides, dilations, pads and auto_pad for ``len(kernel)`` spatial axes."""
    n = len(kernel)
    strides = tuple(int(v) for v in (node.attr("strides", None) or (1,) * n))
    dilations = tuple(int(v) for v in (node.attr("dilations", None) or (1,) * n))
    pads = tuple(int(v) for v in (node.attr("pads", None) or (0,) * (2 * n)))
    if len(strides) != n or len(dilations) != n or len(pads) != 2 * n:
        raise ConvertError(f"pads/strides/dilations do not match a {n}-D kernel {list(kernel)}")
    # rank=4 makes Window.onnx_axis(i) = i + 2, the ONNX axis of spatial axis i for any number of axes
    return Window(tuple(int(k) for k in kernel), strides, dilations, pads[:n], pads[n:],
                  node.attr("auto_pad", "NOTSET"), ceil_mode, 4)


def fit_channels_last(ctx: ImportContext, x: Value, w: Window, pad_value: float) -> tuple[Value, tuple]:
    """ONNX's geometry on every spatial axis of ``[N, *spatial, C]``, fitted; returns (x, TOSA pads)."""
    spatial = x.type.shape[1:-1]
    fits = [fit(spatial[i], w.span(i), w.stride[i], geometry(ctx, spatial[i], w, i)) for i in range(len(spatial))]
    if any(f.append for f in fits):
        padding = (0, 0) + tuple(v for f in fits for v in (0, f.append)) + (0, 0)
        x = ctx.b.emit(Op.PAD, x, attrs=A.PadAttrs(padding, pad_value))
    if any(f.keep is not None for f in fits):
        shape = x.type.shape
        sizes = [shape[0]] + [shape[1 + i] if f.keep is None else f.keep for i, f in enumerate(fits)] + [shape[-1]]
        x = slice_(ctx, x, [0] * len(shape), sizes)
    return x, tuple(v for f in fits for v in f.pad)
