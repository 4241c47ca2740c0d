"""ONNX's window attributes (kernel_shape, strides, dilations, pads, auto_pad) read into a lowering Window.

ONNX spells every per-axis attribute with one entry per spatial axis of the
NCHW input; the shared geometry (:mod:`tosaconv.lowering.window`) works on
2-D (H, W) windows, so a 1-D op's attributes are lifted with an H of 1
(stride, dilation and kernel 1, pads 0). Defaults are the schema's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from ....lowering.window import Window
from ..reader import ConvertError

if TYPE_CHECKING:
    from ..reader import NodeReader


def spatial(values: Iterable[int], rank: int, fill: int) -> tuple:
    """An ONNX per-axis attribute as a 2-D (H, W) tuple; a 1-D op gets ``fill`` for H."""
    values = tuple(int(v) for v in values)
    return values if rank == 4 else (fill,) + values


def read_window(node: NodeReader, rank: int, kernel: Sequence[int], ceil_mode: bool = False) -> Window:
    n = len(kernel)
    strides = node.attr("strides", None) or (1,) * n
    dilations = node.attr("dilations", None) or (1,) * n
    pads = node.attr("pads", None) or (0,) * (2 * n)
    if len(pads) != 2 * n or len(strides) != n or len(dilations) != n:
        raise ConvertError(f"pads/strides/dilations do not match a {n}-D kernel {list(kernel)}")
    auto_pad = node.attr("auto_pad", "NOTSET")
    return Window(spatial(kernel, rank, 1), spatial(strides, rank, 1), spatial(dilations, rank, 1),
                  spatial(pads[:n], rank, 0), spatial(pads[n:], rank, 0), auto_pad, ceil_mode, rank)
