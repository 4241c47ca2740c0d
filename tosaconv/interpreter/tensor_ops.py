"""Kernels of the TOSA chapter "Tensor Operators": ARGMAX, MATMUL, AVG_POOL2D, MAX_POOL2D.

(The convolutions of the same chapter are in :mod:`.convolution`.) ARGMAX
drops the axis and returns the first index of the maximum; with ``nan_mode``
PROPAGATE the first NaN wins, with IGNORE NaNs are skipped (index 0 when all
are NaN). MATMUL multiplies ``[N,H,C] x [N,C,W]`` after subtracting zero
points, through BLAS: float32 for float data, float64 (exact) for integer
data. Pools only count input positions, never padding: AVG_POOL2D divides by
the number of valid taps (integer data via ``reciprocal_scale`` and
``apply_scale_32``, then the output zero point and saturation), and
MAX_POOL2D pads with a value that can never win.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union

import numpy as np

from ..ir.dtypes import DType
from .fixed_point import apply_scale_32, reciprocal_scale
from .numeric import f32, float_result, in_dtype, int_range, out_dtype, saturate, wrap
from .windows import blas_type, centered, check_window, out_size, pad_hw, taps

if TYPE_CHECKING:
    from ..ir.attrs import AvgPool2dAttrs, MaxPool2dAttrs
    from ..ir.graph import Operation
    from .registry import Arrays, KernelContext


def argmax(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, axis = np.asarray(args[0]), op.attrs.axis
    if x.dtype.kind != "f":
        index = np.argmax(x, axis=axis)
    elif op.attrs.nan_mode == "IGNORE":
        best = np.fmax.reduce(x, axis=axis, keepdims=True)        # NaN only where all are NaN
        index = np.argmax(x == best, axis=axis)                   # first match; 0 if none
    else:
        nan = np.isnan(x)
        index = np.where(nan.any(axis=axis), np.argmax(nan, axis=axis), np.argmax(x, axis=axis))
    return [index.astype(out_dtype(op).numpy)]


def matmul(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    a, b = args
    lhs = blas_type(centered(a, op.attrs.a_zp, "A", in_dtype(op, 0)))
    rhs = blas_type(centered(b, op.attrs.b_zp, "B", in_dtype(op, 1)))
    product = np.matmul(lhs, rhs)
    dtype = out_dtype(op)
    if dtype.is_float:
        return [float_result(product, dtype)]
    return [wrap(np.rint(product).astype(np.int64), dtype)]


def _pool_output(x: np.ndarray, a: Union[AvgPool2dAttrs, MaxPool2dAttrs]) -> tuple:
    check_window(a.pad, a.stride)
    (kh, kw), (top, bottom, left, right) = a.kernel, a.pad
    if min(kh, kw) < 1 or max(top, bottom) >= kh or max(left, right) >= kw:
        raise ValueError(f"pool kernel {list(a.kernel)} must be >= 1 and larger than every pad {list(a.pad)}")
    oh = out_size(x.shape[1], kh, top, bottom, a.stride[0])
    ow = out_size(x.shape[2], kw, left, right, a.stride[1])
    return oh, ow


def _valid_counts(size: int, out: int, k: int, pad_before: int, stride: int) -> np.ndarray:
    """For each output position, how many of the k taps land inside the input."""
    start = np.arange(out, dtype=np.int64) * stride - pad_before
    return np.minimum(start + k, size) - np.maximum(start, 0)


def avg_pool2d(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, a = args[0], op.attrs
    oh, ow = _pool_output(x, a)
    data = centered(x, a.input_zp, "input", in_dtype(op))
    acc = _window_sums(data, a, (oh, ow))
    count = np.outer(_valid_counts(x.shape[1], oh, a.kernel[0], a.pad[0], a.stride[0]),
                     _valid_counts(x.shape[2], ow, a.kernel[1], a.pad[2], a.stride[1]))[:, :, None]
    dtype = out_dtype(op)
    if dtype.is_float:
        return [float_result(acc / f32(count), dtype)]
    if a.output_zp and dtype != DType.INT8:
        raise ValueError(f"output zero point must be 0 for {dtype.value} data, got {a.output_zp}")
    multiplier, shift = reciprocal_scale(count)
    return [saturate(apply_scale_32(acc, multiplier, shift) + a.output_zp, dtype)]


def _window_sums(data: np.ndarray, a: AvgPool2dAttrs, out_hw: tuple) -> np.ndarray:
    """Each window's sum, added tap by tap in row-major order from 0, as the spec's loop does.

    A global pool (one window over the whole unpadded input) of several channels is one ufunc reduction
    from 0 over the flattened window instead of a Python loop over its taps: with the channels innermost,
    numpy adds the taps one after another into every channel's sum, the spec's order (the test
    test_kernel_fast_paths checks it bit for bit); over one channel it would sum pairwise, so that keeps
    the loop."""
    n, h, w, c = data.shape
    if out_hw == (1, 1) and tuple(a.kernel) == (h, w) and not any(a.pad) and c > 1:
        sums = np.add.reduce(data.reshape(n, h * w, c), axis=1, initial=data.dtype.type(0))
        return sums.reshape(n, 1, 1, c)
    acc = np.zeros((n, *out_hw, c), dtype=data.dtype)
    for _, _, view in taps(pad_hw(data, a.pad), a.kernel, out_hw, a.stride):
        acc += view
    return acc


def max_pool2d(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, a = args[0], op.attrs
    oh, ow = _pool_output(x, a)
    ignore_nan = x.dtype.kind == "f" and a.nan_mode == "IGNORE"
    if x.dtype.kind == "f":
        fill = np.nan if ignore_nan else -np.inf
    else:
        fill = int_range(out_dtype(op))[0]
    combine = np.fmax if ignore_nan else np.maximum
    if tuple(a.stride) == (1, 1) and tuple(a.pad) == (0, a.kernel[0] - 1, 0, a.kernel[1] - 1):
        return [_trailing_pad_max(x, a.kernel, combine)]
    acc = None
    for _, _, view in taps(pad_hw(x, a.pad, fill), a.kernel, (oh, ow), a.stride):
        acc = view.copy() if acc is None else combine(acc, view, out=acc)
    return [acc]


def _trailing_pad_max(x: np.ndarray, kernel: tuple, combine: np.ufunc) -> np.ndarray:
    """MAX_POOL2D at stride 1 padded by kernel - 1 after each axis (an output per input position): the taps'
    maximum in the same order without the padded copy. A tap that reads padding combines with a value that
    never wins (``combine(acc, fill)`` is ``acc``, bit for bit, NaN included), so each tap updates only the
    outputs whose tap lands inside ``x``."""
    acc = np.array(x, copy=True, order="C")      # tap (0, 0) is x itself
    h, w = x.shape[1], x.shape[2]
    for ky in range(kernel[0]):
        for kx in range(kernel[1]):
            if ky or kx:
                inside = acc[:, :h - ky, :w - kx]
                combine(inside, x[:, ky:, kx:], out=inside)
    return acc
