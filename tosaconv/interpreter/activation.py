"""Kernels of the TOSA chapter "Activation Functions": CLAMP, ERF, SIGMOID, TANH.

CLAMP follows ``apply_clip_s``: a max against ``min_val`` then a min against
``max_val``, each honouring ``nan_mode`` (PROPAGATE keeps a NaN, IGNORE
returns the other operand, so a NaN input clamps to ``min_val``). ERF has no
numpy ufunc, and the spec asks for 5 ulp (of the result type) of the float64
result. It is evaluated in float32 as a degree-3 Taylor polynomial in
``h = |x| - x0`` around the nearest point x0 of a 1/128 grid on [0, 4] (so
|h| <= 1/256; h is exact in float32, as x0 has at most 10 significant bits),
then given x's sign (erf is odd). With erf' = 2/sqrt(pi) exp(-x^2) and the
k-th derivative of exp(-x^2) being (-1)^k H_k(x) exp(-x^2) (physicists'
Hermite polynomials), the coefficients at grid point x0 are erf(x0) and
2/sqrt(pi) exp(-x0^2) (-1)^(k-1) H_(k-1)(x0) / k!; they are worked out once
in float64 and rounded to float32. The next Taylor term is below 2^-33 of erf and the
float32 rounding keeps the result within 2.2 ulp of erf (tests/interpreter
checks every 997th float32 below 4.5; the official compliance tests pass).
erf(x0) at the 513 grid points comes once from the positive-term series
erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2x^2)^n x / (1*3*...*(2n+1)). Past
|x| = 4 erf is 1 to float32 precision and the argument is clamped there.
"""
from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

import numpy as np

from .elementwise_unary import float_map
from .numeric import as_int64, out_dtype, wrap

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext

_ERF_CLAMP = 4.0         # erf(4) = 1 - 1.5e-8 rounds to 1.0 in float32 (and in fp16/bf16)
_ERF_MAX_TERMS = 200     # the series at |x| = 4 converges in well under 100 terms
_ERF_STEPS = 128         # grid points per unit of x
_ERF_DEGREE = 3          # Taylor degree around each grid point (the next term is below 2^-33 of erf)


def clamp(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, a = args[0], op.attrs
    if a.max_val < a.min_val or math.isnan(a.min_val) or math.isnan(a.max_val):
        raise ValueError(f"CLAMP needs min_val <= max_val and no NaN bounds, "
                         f"got min_val={a.min_val}, max_val={a.max_val}")
    dtype = out_dtype(op)
    if not dtype.is_float:
        return [wrap(np.clip(as_int64(x), int(a.min_val), int(a.max_val)), dtype)]
    lo, hi = x.dtype.type(a.min_val), x.dtype.type(a.max_val)
    if hi == 0:      # a tie of -0.0 and +0.0 at max_val: the spec's min keeps max_val, np.clip the value
        if a.nan_mode == "IGNORE":
            return [np.fmin(np.fmax(x, lo), hi)]
        return [np.minimum(np.maximum(x, lo), hi)]
    # one pass (np.maximum and np.minimum are each several times slower than np.clip); np.clip keeps the
    # value at a tie with min_val, as the spec's max does, and propagates a NaN (the method: the same
    # ufunc without np.clip's dispatch, which cost more than the clip on a small tensor)
    result = np.asarray(x).clip(lo, hi)
    if a.nan_mode == "IGNORE":
        nan = np.isnan(result)
        if nan.any():
            result[nan] = lo          # IGNORE: max(NaN, min_val) is min_val
    return [result]


def sigmoid(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], lambda x: np.float32(1.0) / (np.float32(1.0) + np.exp(-x)))]


def tanh(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], np.tanh)]


def erf(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [float_map(op, args[0], erf_f32)]


def erf_f32(x: np.ndarray) -> np.ndarray:
    """erf of each element of a float32 array, in float32 (a NaN stays NaN, erf(-0.0) = -0.0).

    Written for speed on numpy's fast paths (each measured several times faster than the plain form):
    the clamp takes an array, not a scalar (numpy's fmin has no fast loop for a scalar); grid indices go
    through int32; the four coefficients of a grid point are gathered as one 16-byte record (one gather with
    ``mode="wrap"``: the indices are in range, and numpy's default mode checks each one; four gathers of 4
    bytes took three times as long) and read in place as strided columns; x's sign is OR-ed into the
    non-negative result's bits instead of np.copysign, through the grid's memory; one NaN-propagating
    minimum tells whether there is a NaN to put back."""
    shape = np.shape(x)
    x = np.asarray(x, dtype=np.float32).reshape(-1)     # rank 0 too: numpy's ufuncs give it back as a scalar
    a = np.abs(x)
    clamps = _erf_clamps(a.size) if a.size <= _ERF_KEPT_CLAMPS else np.full(a.size, _ERF_CLAMP, np.float32)
    np.fmin(a, clamps, out=a)                        # a NaN becomes 4 here and NaN again below
    scaled = a * np.float32(_ERF_STEPS)
    scaled += np.float32(0.5)
    grid = scaled.astype(np.int32)                   # the nearest grid point, 0 .. 512
    h = grid.astype(np.float32)
    h *= np.float32(-1.0 / _ERF_STEPS)
    h += a                                           # |x| - x0, exact
    # column k of row i: the k-th coefficient at grid point i, the four of a row gathered as one record
    picked = _erf_records().take(grid.astype(np.intp), mode="wrap").view(np.float32).reshape(-1, _ERF_DEGREE + 1)
    total = np.multiply(picked[:, _ERF_DEGREE], h, out=a)
    total += picked[:, _ERF_DEGREE - 1]
    for k in range(_ERF_DEGREE - 2, -1, -1):
        total *= h
        total += picked[:, k]
    signs = grid.view(np.uint32)
    np.bitwise_and(x.view(np.uint32), _SIGN_BIT, out=signs)
    bits = total.view(np.uint32)                     # erf(|x|) >= +0, so its sign bit is clear
    bits |= signs
    if x.size and np.isnan(np.minimum.reduce(x)):
        total[np.isnan(x)] = np.nan
    return total.reshape(shape)


_SIGN_BIT = np.uint32(0x80000000)
_ERF_KEPT_CLAMPS = 1 << 18      # the largest row of clamps kept (1 MB): a bigger ERF makes its own per call


@functools.lru_cache(maxsize=16)
def _erf_clamps(size: int) -> np.ndarray:
    """``size`` copies of the clamp (read-only), made once per size (a model has a few ERF sizes)."""
    clamps = np.full(size, _ERF_CLAMP, dtype=np.float32)
    clamps.flags.writeable = False
    return clamps


@functools.lru_cache(maxsize=None)
def _erf_records() -> np.ndarray:
    """The Taylor table's columns as 16-byte records (complex128 bit patterns, only ever copied): record i holds
    the coefficients 0 .. 3 at grid point i, in that order."""
    records = np.ascontiguousarray(_erf_taylor_table().T).view(np.complex128).reshape(-1)
    records.flags.writeable = False
    return records


@functools.lru_cache(maxsize=None)
def _erf_taylor_table() -> np.ndarray:
    """Row k, column i: the k-th Taylor coefficient of erf around x0 = i/128 (see the module docstring),
    worked out in float64 and stored in float32."""
    x0 = np.arange(0, _ERF_CLAMP * _ERF_STEPS + 1) / _ERF_STEPS
    table = np.empty((_ERF_DEGREE + 1, x0.size))
    table[0] = _erf_series(x0)
    scale = (2.0 / math.sqrt(math.pi)) * np.exp(-x0 * x0)
    h_prev, h_cur = np.zeros_like(x0), np.ones_like(x0)      # H_(-1) (unused), H_0
    for k in range(1, _ERF_DEGREE + 1):                       # table[k] uses H_(k-1)
        table[k] = scale * (-1) ** (k - 1) * h_cur / math.factorial(k)
        h_prev, h_cur = h_cur, 2.0 * x0 * h_cur - 2.0 * (k - 1) * h_prev
    return table.astype(np.float32)


def _erf_series(x: np.ndarray) -> np.ndarray:
    """erf from the everywhere-convergent positive-term series (slow: for the grid points only)."""
    two_x2 = 2.0 * x * x
    term = x.copy()
    total = x.copy()
    for n in range(1, _ERF_MAX_TERMS):
        term *= two_x2 / (2 * n + 1)
        total += term
        if not np.any(np.abs(term) > 1e-17 * np.abs(total)):
            break
    return (2.0 / math.sqrt(math.pi)) * np.exp(-0.5 * two_x2) * total
