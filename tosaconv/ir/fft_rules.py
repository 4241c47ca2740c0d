"""Shape rules of TOSA's EXT-FFT ops, FFT2D and RFFT2D.

Both take ``[N,H,W]`` float data and return a real part and an imaginary
part: FFT2D keeps ``[N,H,W]``, RFFT2D keeps the ``W/2 + 1`` columns that
real input does not make redundant. The spec requires H and W to be powers
of two (ERROR_IF); a static dim that is not is refused here, a symbolic one
is checked again by the kernel once bound.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..symbolic.expr import Dim, add, floordiv, is_static
from .shape_rules import ShapeRuleError
from .attrs import Fft2dAttrs, Rfft2dAttrs
from .types import TensorType


def _check(name: str, t: TensorType) -> None:
    if t.rank != 3:
        raise ShapeRuleError(f"{name} takes rank 3 [N,H,W] data, got rank {t.rank}")
    if not t.dtype.is_float:
        raise ShapeRuleError(f"{name} takes float data, got {t.dtype.name}")
    for axis, d in (("H", t.shape[1]), ("W", t.shape[2])):
        if is_static(d) and (int(d) < 1 or int(d) & (int(d) - 1)):
            raise ShapeRuleError(f"{name} needs {axis} to be a power of two, got {d}")


def fft2d(types: Sequence[TensorType], attrs: Fft2dAttrs) -> list[TensorType]:
    re, im = types[0], types[1]
    _check("FFT2D", re)
    _check("FFT2D", im)
    if re.dtype != im.dtype or len(re.shape) != len(im.shape):
        raise ShapeRuleError(f"FFT2D takes real and imaginary parts of one type, got {re} and {im}")
    return [re, re]


def rfft2d(types: Sequence[TensorType], attrs: Rfft2dAttrs) -> list[TensorType]:
    x = types[0]
    _check("RFFT2D", x)
    w: Dim = x.shape[2]
    out = TensorType(x.dtype, (x.shape[0], x.shape[1], add(floordiv(w, 2), 1)))
    return [out, out]
