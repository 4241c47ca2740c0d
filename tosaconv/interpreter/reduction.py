"""Kernels of the TOSA chapter "Reduction Operators".

REDUCE_ALL, REDUCE_ANY, REDUCE_MAX, REDUCE_MIN, REDUCE_PRODUCT and
REDUCE_SUM reduce one axis and keep it with size 1. Float sums and products
accumulate in float32; integer sums accumulate in int64 and truncate to the
int32 result (overflow is unpredictable in the spec). REDUCE_MAX/MIN with
``nan_mode`` PROPAGATE return NaN if any element is NaN; with IGNORE they skip
NaNs and return NaN only when every element is NaN, which is what starting
the spec's accumulator at NaN and applying ``apply_max_s`` gives.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import numpy as np

from ..ir.dtypes import DType
from .numeric import F32, as_int64, f32, float_result, in_dtype, out_dtype, wrap

if TYPE_CHECKING:
    from ..ir.graph import Operation
    from .registry import Arrays, Kernel, KernelContext, KernelValue


def _axis(op: Operation, x: KernelValue) -> int:
    axis = op.attrs.axis
    if not 0 <= axis < max(np.ndim(x), 1):
        raise ValueError(f"axis {axis} is out of range for a rank {np.ndim(x)} input")
    return axis


def reduce_all(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.all(args[0], axis=_axis(op, args[0]), keepdims=True)]


def reduce_any(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [np.any(args[0], axis=_axis(op, args[0]), keepdims=True)]


def _extreme(op: Operation, x: KernelValue, propagating: Callable[..., np.ndarray], ignoring: np.ufunc) -> np.ndarray:
    axis = _axis(op, x)
    if np.asarray(x).dtype.kind == "f" and op.attrs.nan_mode == "IGNORE":
        return ignoring.reduce(x, axis=axis, keepdims=True)
    return propagating(x, axis=axis, keepdims=True)


def reduce_max(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [_extreme(op, args[0], np.max, np.fmax)]


def reduce_min(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [_extreme(op, args[0], np.min, np.fmin)]


def _accumulate(op: Operation, x: KernelValue, fn: Callable[..., np.ndarray]) -> np.ndarray:
    axis, dtype = _axis(op, x), out_dtype(op)
    if dtype.is_float:     # IEEE specials without warnings: kernels run under the caller's errstate
        return float_result(fn(f32(x), axis=axis, keepdims=True, dtype=np.float32), dtype)
    return wrap(fn(as_int64(x), axis=axis, keepdims=True), dtype)


def reduce_sum(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    # the ufunc's own reduce is what np.sum calls, without np.sum's Python wrapper (a third of a small call)
    return [_accumulate(op, args[0], np.add.reduce)]


def reduce_product(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    return [_accumulate(op, args[0], np.multiply.reduce)]


def prepared_reduce_sum(op: Operation) -> Optional[Kernel]:
    """REDUCE_SUM's kernel for a float32 operand and result in a static program whose first run checked the
    step (the plan's, plan.py), or None: the kernel's own ``add.reduce`` call with the axis read once, without
    its per-call checks and conversions (2 us of a small call; the SE blocks of a conv net run dozens). An
    operand that is not a float32 array after all goes to the kernel. The same call, the same bits."""
    axis = op.attrs.axis
    if in_dtype(op) != DType.FP32 or out_dtype(op) != DType.FP32 or not 0 <= axis < len(op.operands[0].type.shape):
        return None
    add = np.add.reduce

    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        x = args[0]
        if x.__class__ is not np.ndarray or x.dtype is not F32:
            return reduce_sum(op, args, ctx)
        return [add(x, axis=axis, keepdims=True, dtype=np.float32)]
    return run
