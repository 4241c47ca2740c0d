"""Kernels of the TOSA chapter "Activation Functions": CLAMP, ERF, SIGMOID, TANH.

CLAMP follows ``apply_clip_s``: a max against ``min_val`` then a min against
``max_val``, each honouring ``nan_mode`` (PROPAGATE keeps a NaN, IGNORE
returns the other operand, so a NaN input clamps to ``min_val``). ERF has no
numpy ufunc; it is evaluated in float64 from the everywhere-convergent series
erf(x) = 2/sqrt(pi) * exp(-x^2) * sum_n (2x^2)^n x / (1*3*...*(2n+1)), whose
terms are all positive, so it loses no digits to cancellation; past |x| = 4
erf is 1 to float32 precision and the argument is clamped there.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.ops import Op
from .elementwise_unary import float_map
from .numeric import as_int64, out_dtype, wrap
from .registry import kernel

_ERF_CLAMP = 4.0         # erf(4) = 1 - 1.5e-8 rounds to 1.0 in float32 (and in fp16/bf16)
_ERF_MAX_TERMS = 200     # the series at |x| = 4 converges in well under 100 terms


@kernel(Op.CLAMP)
def clamp(op, args, ctx):
    x, a = args[0], op.attrs
    if a.max_val < a.min_val or math.isnan(a.min_val) or math.isnan(a.max_val):
        raise ValueError(f"CLAMP needs min_val <= max_val and no NaN bounds, "
                         f"got min_val={a.min_val}, max_val={a.max_val}")
    dtype = out_dtype(op)
    if not dtype.is_float:
        return [wrap(np.clip(as_int64(x), int(a.min_val), int(a.max_val)), dtype)]
    lo, hi = x.dtype.type(a.min_val), x.dtype.type(a.max_val)
    if a.nan_mode == "IGNORE":
        return [np.fmin(np.fmax(x, lo), hi)]
    return [np.minimum(np.maximum(x, lo), hi)]


@kernel(Op.SIGMOID)
def sigmoid(op, args, ctx):
    return [float_map(op, args[0], lambda x: np.float32(1.0) / (np.float32(1.0) + np.exp(-x)))]


@kernel(Op.TANH)
def tanh(op, args, ctx):
    return [float_map(op, args[0], np.tanh)]


@kernel(Op.ERF)
def erf(op, args, ctx):
    return [float_map(op, args[0], erf_f64)]


def erf_f64(x) -> np.ndarray:
    """erf of each element, computed in float64."""
    # np.clip returns a numpy scalar for a rank-0 input; the in-place series below needs an array.
    x = np.asarray(np.clip(np.asarray(x, dtype=np.float64), -_ERF_CLAMP, _ERF_CLAMP))
    two_x2 = 2.0 * x * x
    term = x.copy()
    total = x.copy()
    for n in range(1, _ERF_MAX_TERMS):
        np.multiply(term, two_x2, out=term)
        term *= 1.0 / (2 * n + 1)
        total += term
        # Checking convergence costs as much as a term, so check every 8 terms only.
        if n % 8 == 0 and not np.any(np.abs(term) > 1e-17 * np.abs(total)):
            break
    return (2.0 / math.sqrt(math.pi)) * np.exp(-0.5 * two_x2) * total
