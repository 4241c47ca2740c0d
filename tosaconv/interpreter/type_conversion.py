"""Kernels of the TOSA chapter "Type Conversion": CAST and RESCALE.

CAST: to bool is ``!= 0``; bool to a number is 0 or 1; float to integer
rounds half to even and saturates (a NaN, unpredictable in the spec, gives
0); integer to a wider integer sign-extends and to a narrower one truncates;
conversions to float round to nearest. RESCALE follows the pseudocode bit for
bit: sign- or zero-extend the input and its zero point, subtract, scale with
``apply_scale_32`` (SINGLE_ROUND or DOUBLE_ROUND; INEXACT_ROUND is computed
as SINGLE_ROUND, which the spec says always meets its bound) or
``apply_scale_16``, add the output zero point and saturate to the signed or
unsigned output range.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ir.count_rescale import mean_multiplier, rescale_for
from ..ir.dtypes import DType
from .fixed_point import apply_scale_16, apply_scale_32
from .numeric import as_int64, float_result, int_range, out_dtype, saturate, wrap

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..ir.attrs import RescaleAttrs
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext, KernelValue


def cast(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, dtype = np.asarray(args[0]), out_dtype(op)
    if dtype == DType.BOOL:
        return [x != 0]
    if dtype.is_float:
        return [float_result(x.astype(np.float64 if x.dtype.kind in "iu" else np.float32), dtype)]
    if x.dtype == np.bool_:
        return [x.astype(dtype.numpy)]
    if x.dtype.kind == "f":
        return [_float_to_int(x, dtype)]
    return [wrap(x, dtype)]


def _float_to_int(x: np.ndarray, dtype: DType) -> np.ndarray:
    lo, hi = int_range(dtype)
    rounded = np.rint(x.astype(np.float64))          # round half to even
    rounded = np.where(np.isnan(rounded), 0.0, rounded)
    return np.clip(rounded, lo, hi).astype(np.int64).astype(dtype.numpy)


def rescale(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [rescale_array(args[0], op.operands[0].type.dtype, out_dtype(op), op.attrs)]


def count_rescale(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    """The RESCALE of :mod:`tosaconv.ir.count_rescale` for the count this run binds."""
    a = op.attrs
    m, e = mean_multiplier(a.multiplier, a.exponent, int(args[1]))
    attrs, bounds = rescale_for(m, e, a.output_zp, a.output_dtype)
    x = np.asarray(args[0]) if bounds is None else np.clip(args[0], *bounds)
    return [rescale_array(x, DType.INT32, out_dtype(op), attrs)]


def rescale_array(x: KernelValue, in_t: DType, out_t: DType, a: RescaleAttrs) -> np.ndarray:
    """RESCALE of ``x`` (element type ``in_t``) to ``out_t`` with RescaleAttrs ``a``."""
    _check_rescale(a, in_t, out_t)
    value = _extend(x, in_t, a.input_unsigned) - _extend(a.input_zp, in_t, a.input_unsigned)
    multiplier, shift = _scale_params(a, np.ndim(x))
    if a.scale32:
        result = apply_scale_32(value, multiplier, shift, a.rounding_mode == "DOUBLE_ROUND")
    else:
        result = apply_scale_16(value, multiplier, shift)
    result = result + _extend(a.output_zp, out_t, a.output_unsigned)
    return saturate(result, out_t, unsigned=a.output_unsigned)


def _extend(x: ArrayLike, dtype: DType, unsigned: bool) -> np.ndarray:
    """``zero_extend`` or ``sign_extend`` of ``dtype`` data (or a zero point) to int64."""
    x = as_int64(x)
    if unsigned:
        return x & ((1 << dtype.bits) - 1)
    return as_int64(wrap(x, dtype))


def _scale_params(a: RescaleAttrs, rank: int) -> tuple:
    multiplier, shift = np.asarray(a.multiplier, np.int64), np.asarray(a.shift, np.int64)
    if not a.per_channel:
        return multiplier.reshape(-1)[:1].reshape(()), shift.reshape(-1)[:1].reshape(())
    if rank < 1:
        raise ValueError("per-channel RESCALE needs an input of rank >= 1")
    return multiplier, shift      # one entry per channel; broadcasts along the last axis


def _check_rescale(a: RescaleAttrs, in_t: DType, out_t: DType) -> None:
    """The pseudocode's ERROR_IF conditions, all reported at once."""
    u_in, u_out = a.input_unsigned, a.output_unsigned
    rules = [
        (a.input_zp != 0 and not (in_t == DType.INT8 or (in_t == DType.INT16 and u_in)),
         f"input_zp must be 0 for {in_t.value} input"),
        (a.output_zp != 0 and not (out_t == DType.INT8 or (out_t == DType.INT16 and u_out)),
         f"output_zp must be 0 for {out_t.value} output"),
        (in_t == DType.INT16 and u_in and a.input_zp not in (0, 32768), "unsigned int16 input_zp must be 0 or 32768"),
        (out_t == DType.INT16 and u_out and a.output_zp not in (0, 32768),
         "unsigned int16 output_zp must be 0 or 32768"),
        (a.scale32 and in_t == DType.INT48, "int48 input needs scale32 = false"),
        (not a.scale32 and a.rounding_mode == "DOUBLE_ROUND", "DOUBLE_ROUND needs scale32 = true"),
        (u_in and u_out, "input and output cannot both be unsigned"),
        (u_in and (in_t not in (DType.INT8, DType.INT16) or out_t == DType.INT32),
         f"unsigned input must be int8/int16 and the output not int32 ({in_t.value} -> {out_t.value})"),
        (u_out and (out_t not in (DType.INT8, DType.INT16) or in_t in (DType.INT32, DType.INT48)),
         f"unsigned output must be int8/int16 from int8/int16 input ({in_t.value} -> {out_t.value})"),
    ]
    problems = [message for failed, message in rules if failed]
    if problems:
        raise ValueError("invalid RESCALE: " + "; ".join(problems))
