"""Discrete Fourier transforms along the last axis, for both importers: TOSA FFT2D/RFFT2D or MATMUL.

TOSA's FFT2D and RFFT2D belong to the EXT-FFT extension and need power-of-two
lengths. A program that must stay inside plain PRO-FP, or a length that is
not a power of two, takes the MATMUL form instead: the real and imaginary
parts side by side, ``[.., 2n]``, times one constant ``[2n, 2K]`` matrix of
cosines and sines whose columns are the ``K`` wanted bins' real parts, then
their imaginary parts. :func:`dft_mode` chooses (``--dft``): ``fft`` always
uses EXT-FFT (and refuses other lengths), ``matmul`` never does, ``auto``
(default) uses EXT-FFT for power-of-two lengths. Forward transforms use
``exp(-2*pi*i*k*t/n)``; ``scale`` multiplies the result (1/n for ONNX's
normalized inverse).
"""
from __future__ import annotations

import contextlib
import contextvars
from typing import TYPE_CHECKING, Iterator, Optional

import numpy as np

from ..ir import attrs as A
from ..ir.ops import Op
from ..symbolic.expr import product
from .dims import reshape, slice_
from .errors import ConvertError
from .matmul import matmul
from .pad import pad_static

if TYPE_CHECKING:
    from ..ir.graph import Value
    from .context import LoweringContext

DFT_MODES = ("auto", "fft", "matmul")
# the refusal's advice for a symbolic transform length (the matrices and FFT sizes are built at import)
STATIC_HINT = ("the transform's constants and TOSA FFT sizes are fixed when the model is imported, so the "
               "model must give that axis a static size")
_MODE: contextvars.ContextVar = contextvars.ContextVar("dft_mode", default="auto")


@contextlib.contextmanager
def dft_mode(mode: str) -> Iterator[None]:
    """Lower every DFT imported inside the block in ``mode`` (one of :data:`DFT_MODES`)."""
    if mode not in DFT_MODES:
        raise ValueError(f"--dft must be one of {', '.join(DFT_MODES)}, got '{mode}'")
    token = _MODE.set(mode)
    try:
        yield
    finally:
        _MODE.reset(token)


def set_dft_mode(mode: str) -> None:
    """Choose the DFT lowering for the rest of this context (the command line's ``--dft``)."""
    if mode not in DFT_MODES:
        raise ValueError(f"--dft must be one of {', '.join(DFT_MODES)}, got '{mode}'")
    _MODE.set(mode)


def is_pow2(n: int) -> bool:
    return n >= 1 and not n & (n - 1)


def use_fft(n: int, what: str) -> bool:
    """Whether a transform of length ``n`` lowers to EXT-FFT; refuses ``--dft fft`` on other lengths."""
    mode = _MODE.get()
    if mode == "matmul":
        return False
    if is_pow2(n):
        return True
    if mode == "fft":
        raise ConvertError(f"{what} has length {n}, which is not a power of two, and TOSA FFT2D/RFFT2D need "
                           f"one; use --dft matmul (or auto) for a MATMUL-based DFT")
    return False


def dft_last(ctx: LoweringContext, re: Value, im: Optional[Value], inverse: bool, onesided: bool, scale: float,
             what: str) -> tuple:
    """(real, imaginary) DFT of ``re + i*im`` (``im`` None: real input) along the last, static, axis."""
    n = re.type.shape[-1]
    if not isinstance(n, int):
        raise ConvertError(f"{what}: the transformed axis has a symbolic length {n}; {STATIC_HINT}")
    k = n // 2 + 1 if onesided else n
    if use_fft(n, what):
        return _fft(ctx, re, im, inverse, k, scale)
    return _matmul_dft(ctx, re, im, inverse, k, scale)


def dft_matrix(n: int, k: int, inverse: bool, scale: float, real_input: bool) -> np.ndarray:
    """The ``[n or 2n, 2k]`` matrix taking ``[re | im]`` rows to ``[Re | Im]`` columns."""
    t = np.arange(n, dtype=np.int64)[:, None] * np.arange(k, dtype=np.int64)[None, :] % n
    angle = 2.0 * np.pi * t / n
    cos, sin = np.cos(angle) * scale, np.sin(angle) * scale
    s = -1.0 if inverse else 1.0
    top = np.concatenate([cos, -s * sin], axis=1)
    if real_input:
        return top.astype(np.float32)
    return np.concatenate([top, np.concatenate([s * sin, cos], axis=1)], axis=0).astype(np.float32)


def _matmul_dft(ctx: LoweringContext, re: Value, im: Optional[Value], inverse: bool, k: int, scale: float) -> tuple:
    n, rank = re.type.shape[-1], re.type.rank
    x = re if im is None else ctx.b.emit(Op.CONCAT, re, im, attrs=A.AxisAttrs(rank - 1))
    w = ctx.b.const(dft_matrix(n, k, inverse, scale, im is None))
    y = matmul(ctx, x, w)
    lead = list(y.type.shape[:-1])
    starts = [0] * rank
    real = slice_(ctx, y, starts, lead + [k])
    imag = slice_(ctx, y, starts[:-1] + [k], lead + [k])
    return real, imag


def _fft(ctx: LoweringContext, re: Value, im: Optional[Value], inverse: bool, k: int, scale: float) -> tuple:
    shape = list(re.type.shape)
    n, lead = shape[-1], shape[:-1]
    flat = [product(lead) if lead else 1, 1, n]
    x = reshape(ctx, re, flat)
    if im is None and not inverse and k == n // 2 + 1:
        real, imag = ctx.b.create(Op.RFFT2D, [x], A.Rfft2dAttrs()).results
    else:
        y = reshape(ctx, im, flat) if im is not None else _zeros_like(ctx, x)
        real, imag = ctx.b.create(Op.FFT2D, [x, y], A.Fft2dAttrs(inverse=inverse)).results
        if k != n:
            real, imag = (slice_(ctx, v, [0, 0, 0], flat[:2] + [k]) for v in (real, imag))
    if scale != 1.0:
        factor = ctx.b.const(np.full((1, 1, 1), scale, dtype=np.float32))
        real, imag = (ctx.b.emit(Op.MUL, v, factor, attrs=A.MulAttrs()) for v in (real, imag))
    return reshape(ctx, real, lead + [k]), reshape(ctx, imag, lead + [k])


def _zeros_like(ctx: LoweringContext, x: Value) -> Value:
    """The imaginary part of real data given to FFT2D (x * 0: one op, any batch size)."""
    zero = ctx.b.const(np.zeros((1, 1, 1), dtype=np.float32))
    return ctx.b.emit(Op.MUL, x, zero, attrs=A.MulAttrs())


def rfft2d_last2(ctx: LoweringContext, x: Value, what: str) -> tuple:
    """(real, imaginary) 2-D DFT of real ``[..., H, W]`` data with static H, W: ``[..., H, W/2 + 1]``."""
    *lead, h, w = x.type.shape
    if not (isinstance(h, int) and isinstance(w, int)):
        raise ConvertError(f"{what}: the transformed dims {h}, {w} are symbolic; {STATIC_HINT}")
    if use_fft(h, what) and use_fft(w, what):
        flat = reshape(ctx, x, [product(lead) if lead else 1, h, w])
        real, imag = ctx.b.create(Op.RFFT2D, [flat], A.Rfft2dAttrs()).results
        return tuple(reshape(ctx, v, lead + [h, w // 2 + 1]) for v in (real, imag))
    real, imag = dft_last(ctx, x, None, False, True, 1.0, what)
    if h == 1:
        return real, imag
    rank = x.type.rank
    perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
    real, imag = (ctx.b.emit(Op.TRANSPOSE, v, attrs=A.TransposeAttrs(perm)) for v in (real, imag))
    real, imag = dft_last(ctx, real, imag, False, False, 1.0, what)
    return tuple(ctx.b.emit(Op.TRANSPOSE, v, attrs=A.TransposeAttrs(perm)) for v in (real, imag))


def irfft_last(ctx: LoweringContext, re: Value, im: Value, n: int, what: str) -> Value:
    """The real inverse (1/n normalized) of a one-sided spectrum along the last axis: ``n`` samples from
    its first ``n/2 + 1`` bins (padded with zeros or cropped to that), as numpy's ``irfft``."""
    m = n // 2 + 1
    re, im = (_fit_last(ctx, v, m) for v in (re, im))
    if not use_fft(n, what):
        w = ctx.b.const(irfft_matrix(n))
        x = ctx.b.emit(Op.CONCAT, re, im, attrs=A.AxisAttrs(re.type.rank - 1))
        return matmul(ctx, x, w)
    rest = n - m   # bins m..n-1 are the conjugates of bins rest..1
    if rest:
        axis = re.type.rank - 1
        mirror = [ctx.b.emit(Op.REVERSE, slice_(ctx, v, [0] * axis + [1], list(v.type.shape[:-1]) + [rest]),
                             attrs=A.AxisAttrs(axis)) for v in (re, im)]
        re = ctx.b.emit(Op.CONCAT, re, mirror[0], attrs=A.AxisAttrs(axis))
        im = ctx.b.emit(Op.CONCAT, im, ctx.b.emit(Op.NEGATE, mirror[1], attrs=A.NegateAttrs()),
                        attrs=A.AxisAttrs(axis))
    real, _ = _fft(ctx, re, im, True, n, 1.0 / n)
    return real


def irfft_matrix(n: int) -> np.ndarray:
    """``[2m, n]``: rows for the bins' real parts, then their imaginary parts (numpy irfft's weights)."""
    m = n // 2 + 1
    k = np.arange(m, dtype=np.int64)
    angle = 2.0 * np.pi * (k[:, None] * np.arange(n, dtype=np.int64)[None, :] % n) / n
    weight = np.full(m, 2.0)
    weight[0] = 1.0
    if n % 2 == 0:
        weight[-1] = 1.0
    sin = np.sin(angle)
    sin[weight == 1.0] = 0.0      # the imaginary parts of bins 0 and n/2 do not contribute
    return np.concatenate([np.cos(angle) * weight[:, None], -sin * weight[:, None]], axis=0).astype(
        np.float32) / np.float32(n)


def _fit_last(ctx: LoweringContext, v: Value, size: int) -> Value:
    rank = v.type.rank
    return pad_static(ctx, v, [0] * rank, [0] * (rank - 1) + [size - v.type.shape[-1]], "constant")
