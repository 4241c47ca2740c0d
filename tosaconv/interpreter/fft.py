"""Kernels of the TOSA chapter "Tensor Operators", EXT-FFT: FFT2D and RFFT2D.

The spec's pseudocode is a direct 2-D DFT over H and W of ``[N,H,W]`` data:
the forward transform multiplies by ``exp(-2*pi*i*(oy*iy/H + ox*ix/W))``,
FFT2D with ``inverse`` flips the sign, and neither scales the result (so an
inverse is numpy's ``ifft2`` times ``H*W``). numpy's FFT computes the same
sums in float64, which is within the spec's bound, before the float32
result. RFFT2D keeps the ``W/2 + 1`` columns real input leaves
independent; where every term's sine vanishes (rows 0 and H/2, columns 0
and W/2) the spec skips the sine, so the imaginary part there is exactly 0.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .numeric import float_result, out_dtype

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext


def _check_pow2(name: str, x: np.ndarray) -> None:
    if x.ndim != 3:
        raise ValueError(f"{name} takes rank 3 [N,H,W] data, got shape {list(x.shape)}")
    for axis, d in (("H", x.shape[1]), ("W", x.shape[2])):
        if d < 1 or d & (d - 1):
            raise ValueError(f"{name} needs {axis} to be a power of two (spec ERROR_IF), got {d}")


def _parts(op: Operation, z: np.ndarray) -> list:
    dtype = out_dtype(op)
    return [float_result(z.real, dtype), float_result(z.imag, dtype)]


def fft2d(op: Operation, args: Arrays, ctx: KernelContext) -> list:
    re, im = (np.asarray(a, dtype=np.float64) for a in args)
    _check_pow2("FFT2D", re)
    if re.shape != im.shape:
        raise ValueError(f"FFT2D real {list(re.shape)} and imaginary {list(im.shape)} parts differ in shape")
    z = re + 1j * im
    if op.attrs.inverse:
        out = np.fft.ifft2(z, axes=(1, 2)) * (re.shape[1] * re.shape[2])
    else:
        out = np.fft.fft2(z, axes=(1, 2))
    return _parts(op, out)


def rfft2d(op: Operation, args: Arrays, ctx: KernelContext) -> list:
    x = np.asarray(args[0], dtype=np.float64)
    _check_pow2("RFFT2D", x)
    h, w = x.shape[1], x.shape[2]
    out = np.fft.rfft2(x, axes=(1, 2))
    rows = [0, h // 2] if h > 1 else [0]
    cols = [0, w // 2] if w > 1 else [0]
    out.imag[:, np.ix_(rows, cols)[0], np.ix_(rows, cols)[1]] = 0.0
    return _parts(op, out)
