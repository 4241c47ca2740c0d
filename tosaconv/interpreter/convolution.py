"""Convolution kernels of the TOSA chapter "Tensor Operators": CONV2D, CONV3D, DEPTHWISE_CONV2D,
TRANSPOSE_CONV2D.

Layouts are the spec's: NHWC input (NDHWC for CONV3D, weights ``[O, KD, KH, KW, I]``),
CONV2D and TRANSPOSE_CONV2D weights OHWI,
DEPTHWISE_CONV2D weights ``[KH, KW, C, M]`` with output channel ``c*M + m``;
``pad`` and ``out_pad`` are ``[top, bottom, left, right]``. Zero points are
subtracted before padding, so padded positions contribute nothing, as in the
pseudocode where out-of-range taps read a value of 0. The bias is added to
the accumulator and the sum narrowed to the result type (float32 to the float
type; int64 to int32 or int48, truncating, since overflow is unpredictable).
TRANSPOSE_CONV2D scatters each input pixel's products into a full-size buffer
and then applies ``out_pad``, cropping where it is negative.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, Sequence

import numpy as np

from ..limits import check_tensor, max_tensor_bytes
from .elementwise_binary import channel_row
from .numeric import F32, as_int64, f32, float_result, in_dtype, out_dtype, wrap
from .windows import (KeptBytes, PaddedBuffers, Pointwise, RowSum, WindowProduct, blas_type, centered, check_window, depthwise_rows, out_size, pad_hw, patches,
                      pointwise_gemm, rows, sparse_padding, window_gemm, windows_2d)

if TYPE_CHECKING:
    from ..ir.attrs import Conv2dAttrs, TransposeConv2dAttrs
    from ..ir.graph import Operation
    from .registry import Arrays, Kernel, KernelContext

def _finish(op: Operation, acc: np.ndarray, bias: Optional[np.ndarray]) -> np.ndarray:
    """Add the bias (one value or one per output channel) and narrow to the result type.

    ``acc`` is the kernel's own fresh buffer: a float bias is added in place, unless ``acc`` is a strided
    view (a depthwise sum at column stride > 1), which gets a new contiguous result."""
    dtype = out_dtype(op)
    if bias is None:    # the plan saw a bias of +0.0 whose adding no output can tell (zero_bias.py)
        return float_result(np.ascontiguousarray(acc), dtype)
    if dtype.is_float:
        bias = f32(bias)
        if acc.dtype is F32 and acc.flags.c_contiguous and bias.ndim <= 1 and bias.size in (1, acc.shape[-1]):
            # overflow to infinity is the specified result (kernels run under the caller's errstate)
            _add_bias(acc, bias)
            return float_result(acc, dtype)
        return float_result(acc + bias, dtype)
    return wrap(np.rint(acc).astype(np.int64) + as_int64(bias), dtype)


def _add_bias(acc: np.ndarray, bias: np.ndarray) -> None:
    """``acc += bias`` for a contiguous float32 ``acc`` and a bias of one value or one per channel; a few
    channels' bias is tiled along a row of W*C values (elementwise_binary.channel_row: the same sums, in
    about half the time at 12 to 32 channels)."""
    row = None if acc.ndim < 2 or bias.size == 1 else channel_row(bias.reshape((1,) * (acc.ndim - 1) + (-1,)),
                                                                  acc.shape)
    if row is None:
        np.add(acc, bias, out=acc)
    else:
        rows = acc.reshape(-1, row.size)
        np.add(rows, row, out=rows)


def _weights(op: Operation, w: np.ndarray) -> np.ndarray:
    if w.__class__ is np.ndarray and w.dtype is F32 and not op.attrs.weight_zp:    # float32 data: as it is
        return w
    return blas_type(centered(w, op.attrs.weight_zp, "weight", in_dtype(op, 1)))


def _input(op: Operation, x: np.ndarray) -> np.ndarray:
    if x.__class__ is np.ndarray and x.dtype is F32 and not op.attrs.input_zp:     # float32 data: as it is
        return x
    return blas_type(centered(x, op.attrs.input_zp, "input", in_dtype(op)))


def _output_hw(x_shape: Sequence[int], kernel_hw: Sequence[int], a: Conv2dAttrs) -> tuple:
    check_window(a.pad, a.stride, a.dilation)
    oh = out_size(x_shape[1], kernel_hw[0], a.pad[0], a.pad[1], a.stride[0], a.dilation[0])
    ow = out_size(x_shape[2], kernel_hw[1], a.pad[2], a.pad[3], a.stride[1], a.dilation[1])
    if oh < 1 or ow < 1:
        raise ValueError(f"the kernel {list(kernel_hw)} does not fit the padded input {list(x_shape[1:3])}")
    return oh, ow


def conv2d(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, w, bias = args
    a = op.attrs
    oh, ow = _output_hw(x.shape, w.shape[1:3], a)
    data = _input(op, x)
    if w.shape[1:3] == (1, 1) and data.shape[1:3] == (oh, ow) and not any(a.pad):   # pointwise: a pixel is its window
        return [_finish(op, pointwise_gemm(data, _weights(op, w)), bias)]
    view = windows_2d(data, w.shape[1:3], (oh, ow), a.stride, a.dilation, a.pad)
    return [_finish(op, window_gemm(view, _weights(op, w)), bias)]


def conv3d(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, w, bias = args
    a = op.attrs
    check_window(a.pad, a.stride, a.dilation)
    out = [out_size(x.shape[1 + i], w.shape[1 + i], a.pad[2 * i], a.pad[2 * i + 1], a.stride[i], a.dilation[i])
           for i in range(3)]
    if min(out) < 1:
        raise ValueError(f"the kernel {list(w.shape[1:4])} does not fit the padded input {list(x.shape[1:4])}")
    pads = [(int(a.pad[2 * i]), int(a.pad[2 * i + 1])) for i in range(3)]
    padded = np.pad(_input(op, x), [(0, 0), *pads, (0, 0)])
    view = patches(padded, w.shape[1:4], out, a.stride, a.dilation)
    return [_finish(op, window_gemm(view, _weights(op, w)), bias)]


def depthwise_conv2d(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, w, bias = args
    a = op.attrs
    kh, kw, c, m = w.shape
    oh, ow = _output_hw(x.shape, (kh, kw), a)
    # the weights often arrive as a transposed view (a TRANSPOSE of the stored constant): einsum over a
    # strided operand runs several times slower, and the copy is small
    data, weights = _input(op, x), np.ascontiguousarray(_weights(op, w))
    if sparse_padding(data, (kh, kw), (oh, ow), a.pad):
        acc = _depthwise_windows(windows_2d(data, (kh, kw), (oh, ow), a.stride, a.dilation, a.pad), weights)
    else:
        # contiguous: einsum over the windows of a strided (transposed) input summed in another order
        padded = np.ascontiguousarray(pad_hw(data, a.pad))
        acc = depthwise_rows(padded, weights, (oh, ow), a.stride, a.dilation)
        if acc is None:
            acc = _depthwise_windows(patches(padded, (kh, kw), (oh, ow), a.stride, a.dilation), weights)
    return [_finish(op, acc.reshape(x.shape[0], oh, ow, c * m), bias)]


def prepared_pointwise(op: Operation, weights: np.ndarray, input_shape: tuple, bias: np.ndarray) -> Optional[Kernel]:
    """CONV2D's kernel for a 1x1 convolution (stride 1, no padding) with constant float32 ``weights`` and
    ``bias`` on a static float32 input of ``input_shape``, its geometry and bias row made once (the plan's,
    plan.py), or None where the general kernel takes another path. The same products and sums, the same bits."""
    a = op.attrs
    if (weights.shape[1:3] != (1, 1) or any(a.pad) or tuple(a.stride) != (1, 1) or weights.dtype != F32
            or bias.dtype != F32 or bias.ndim > 1 or bias.size not in (1, weights.shape[0])):
        return None
    product = Pointwise(weights, input_shape)
    row = None if bias.size == 1 or len(input_shape) < 2 else channel_row(bias.reshape(1, 1, 1, -1), product.shape)

    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        acc, now = product(args[0]), args[2]
        if now is bias and row is not None:
            rows = acc.reshape(-1, row.size)
            np.add(rows, row, out=rows)
        elif now is not None:       # None: the plan skips a bias of zeros (zero_bias.py)
            _add_bias(acc, f32(now))
        return [acc]
    return run


def prepared_window(op: Operation, weights: np.ndarray, input_shape: tuple,
                    kept: Optional[KeptBytes] = None) -> Optional[Kernel]:
    """CONV2D's kernel for a convolution with a window (not a 1x1 at stride 1 without padding) with constant
    float32 ``weights`` on a static float32 input of ``input_shape``, its geometry made once (the plan's,
    plan.py; windows.WindowProduct), or None where the general kernel takes another path (zero points, sparse
    padding, an input window_gemm splits into blocks). The same rows and product, the same bits."""
    a = op.attrs
    out_hw = _output_hw(input_shape, weights.shape[1:3], a)       # checks the attributes as the kernel does
    if weights.shape[1:3] == (1, 1) and tuple(input_shape[1:3]) == out_hw and not any(a.pad):
        return None     # conv2d's pointwise product (prepared_pointwise), not the windows'
    if (weights.dtype != F32 or a.input_zp or a.weight_zp
            or sparse_padding(np.broadcast_to(np.float32(0), input_shape), weights.shape[1:3], out_hw, a.pad)
            or not WindowProduct.fits(input_shape, weights.shape, out_hw)):
        return None
    product = WindowProduct(weights, input_shape, a.pad, out_hw, a.stride, a.dilation, kept)
    padded_bytes = math.prod(product.padded_shape) * 4

    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        if padded_bytes > max_tensor_bytes():
            check_tensor("the padded input of a window op", product.padded_shape, F32)
        return [_finish(op, product(args[0]), args[2])]
    return run


# the most tiled weight elements a prepared depthwise kernel keeps (4 MB)
_PREPARED_TILED = 1 << 20


def prepared_depthwise(op: Operation, weights: np.ndarray, input_shape: tuple,
                       kept: Optional[KeptBytes] = None) -> Optional[Kernel]:
    """DEPTHWISE_CONV2D's kernel for constant float32 ``weights`` and a static float32 input of
    ``input_shape``, with the row sum's tiled weights and geometry made once (the plan's, plan.py), or None
    where the general kernel takes another path. Each call pads into a zeroed buffer and sums; the same bits."""
    a = op.attrs
    kh, kw, c, m = weights.shape
    n, h, w, _ = input_shape
    oh, ow = _output_hw(input_shape, (kh, kw), a)      # checks the attributes as the kernel does
    top, bottom, left, right = (int(p) for p in a.pad)
    padded_shape = (n, h + top + bottom, w + left + right, c * m)
    if (weights.dtype != F32 or a.input_zp or a.weight_zp
            or sparse_padding(np.broadcast_to(np.float32(0), (n, h, w, c)), (kh, kw), (oh, ow), a.pad)
            or not RowSum.fits(weights.shape, padded_shape, (oh, ow), a.stride, a.dilation)):
        return None
    rows = RowSum(np.ascontiguousarray(weights), padded_shape, (oh, ow), a.stride, a.dilation)
    if rows.tiled.size > _PREPARED_TILED:      # held as long as the plan: the general kernel tiles per call
        return None
    inside = (slice(None), slice(top, top + h), slice(left, left + w))
    padded_bytes = math.prod(padded_shape) * 4
    buffers = PaddedBuffers(padded_shape, inside, kept)     # zeros around the inside, which calls overwrite

    def run(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
        if padded_bytes > max_tensor_bytes():
            check_tensor("the padded input of a window op", padded_shape, F32)
        if m == 1:
            padded = buffers.filled(args[0])
        else:                           # input channel c feeds outputs c*M .. c*M + M-1
            padded = buffers.take()
            padded[inside].reshape(n, h, w, c, m)[...] = args[0][..., None]
        sums = rows(padded)                 # a new array (the row sum only reads the padded input)
        buffers.done(padded)
        return [_finish(op, sums.reshape(n, oh, ow, c * m), args[2])]
    return run


def _depthwise_windows(view: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """DEPTHWISE_CONV2D over a ``[N, OH, OW, KH, KW, C]`` view of its windows, in one pass over them
    (numpy's C loop), instead of one pass per tap: where :func:`depthwise_rows` declines."""
    return np.einsum("nhwyxc,yxcm->nhwcm", view, weights)


def transpose_conv2d(op: Operation, args: Arrays, ctx: KernelContext) -> Arrays:
    x, w, bias = args
    a = op.attrs
    n, ih, iw, _ = x.shape
    oc, kh, kw, _ = w.shape
    _check_transpose(a, kh, kw)
    sy, sx = a.stride
    weights = _weights(op, w)                                   # [OC, KH, KW, IC]
    # one product for every tap at once: products[n, y, x, ky, kx, o] = sum_i x[n, y, x, i] * w[o, ky, kx, i]
    matrix = weights.reshape(oc, kh * kw, -1).transpose(2, 1, 0).reshape(-1, kh * kw * oc)
    products = (rows(_input(op, x)) @ matrix).reshape(n, ih, iw, kh, kw, oc)
    if (kh, kw) == (sy, sx):
        full = _tile_products(products)
    else:
        full = np.zeros((n, (ih - 1) * sy + kh, (iw - 1) * sx + kw, oc), dtype=products.dtype)
        for ky in range(kh):
            for kx in range(kw):
                full[:, ky:ky + (ih - 1) * sy + 1:sy, kx:kx + (iw - 1) * sx + 1:sx, :] += products[:, :, :, ky, kx, :]
    return [_finish(op, _apply_out_pad(full, a.out_pad), bias)]


def _tile_products(products: np.ndarray) -> np.ndarray:
    """The full buffer when the kernel equals the stride: every output pixel gets exactly one product,
    ``full[n, y*KH + ky, x*KW + kx, o] = products[n, y, x, ky, kx, o]``, so the windows are laid side by
    side in one pass instead of added one tap at a time into zeros. The products get +0.0 added, as the
    scatter into zeros does (a product of -0.0 becomes +0.0 here too, so the bits are the same), in place in
    their own buffer (``products`` is the kernel's fresh product), then are copied side by side; a run of
    ``KW*OC`` values of at most 16 bytes is copied as one item (numpy's copy of a run of 2 floats is 6x slower)."""
    n, ih, iw, kh, kw, oc = products.shape
    np.add(products, products.dtype.type(0), out=products)
    run = kw * oc * products.itemsize
    if run <= 16 and products.flags.c_contiguous:
        items = products.reshape(n, ih, iw, kh, -1).view(np.dtype((np.void, run)))[..., 0]
        return np.ascontiguousarray(items.transpose(0, 1, 3, 2)).view(products.dtype).reshape(n, ih * kh, iw * kw, oc)
    return products.transpose(0, 1, 3, 2, 4, 5).reshape(n, ih * kh, iw * kw, oc)


def _check_transpose(a: TransposeConv2dAttrs, kh: int, kw: int) -> None:
    top, bottom, left, right = a.out_pad
    if min(a.stride) < 1 or min(top, bottom) <= -kh or min(left, right) <= -kw:
        raise ValueError(f"TRANSPOSE_CONV2D needs stride >= 1 and out_pad above -kernel size, "
                         f"got stride={list(a.stride)}, out_pad={list(a.out_pad)}, kernel={[kh, kw]}")


def _apply_out_pad(full: np.ndarray, out_pad: Sequence[int]) -> np.ndarray:
    """Output row ``oy`` is full-buffer row ``oy - top``: pad with zeros where out_pad > 0, crop where < 0."""
    top, bottom, left, right = (int(p) for p in out_pad)
    if not (top or bottom or left or right):     # the usual case: the full buffer as it is (10 us of slicing less)
        return full
    full = full[:, max(-top, 0):full.shape[1] - max(-bottom, 0), max(-left, 0):full.shape[2] - max(-right, 0)]
    return pad_hw(full, (max(top, 0), max(bottom, 0), max(left, 0), max(right, 0)))
