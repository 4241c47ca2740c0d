"""Sliding-window machinery shared by the convolution and pooling kernels.

The kernels never loop over pixels. They pad the NHWC input once and visit
each kernel tap ``(ky, kx)`` as a strided view of the padded input, shaped
like the output (``view[n, oy, ox, c] = padded[n, oy*sy + ky*dy, ox*sx + kx*dx, c]``),
or all taps at once as :func:`patches`, a view with the kernel axes next to
the channels (im2col without the copy). :func:`window_gemm` turns that view
into ONE matrix product per convolution (``[pixels, KH*KW*C] @ [KH*KW*C, O]``),
copying the im2col rows in chunks of bounded size. The helpers here also
centre operands on their zero points and pick the type the products run in:
float32 for float data, float64 for integer data (int8 and int16 products
summed in float64 are exact far beyond any real kernel size, see
:func:`blas_type`, and float64 goes through BLAS where int64 would not).
"""
from __future__ import annotations

import math
from typing import Iterator, Optional, Sequence, Union

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..ir.dtypes import DType
from ..limits import check_tensor
from .data_layout import pad_constant
from .numeric import as_int64, f32


def out_size(size: int, k: int, pad_a: int, pad_b: int, stride: int, dilation: int = 1) -> int:
    """Output length along one axis (the spec's OH/OW formula).

    The spec requires the division to be exact; here it floors, as the IR's
    shape rules do, which only means trailing padding is never read.
    """
    return (size - 1 + pad_a + pad_b - (k - 1) * dilation) // stride + 1


def check_window(pad: Sequence[int], stride: Sequence[int], dilation: Sequence[int] = (1, 1)) -> None:
    if min(pad) < 0 or min(stride) < 1 or min(dilation) < 1:
        raise ValueError(f"need pad >= 0, stride >= 1 and dilation >= 1, got pad={list(pad)}, "
                         f"stride={list(stride)}, dilation={list(dilation)}")


def pad_hw(x: np.ndarray, pad: Sequence[int], value: Union[float, np.generic] = 0) -> np.ndarray:
    """Pad the H and W axes of an NHWC array by ``[top, bottom, left, right]``."""
    top, bottom, left, right = (int(p) for p in pad)
    if not (top or bottom or left or right):
        return x
    n, h, w, c = x.shape
    # the padded copy is an allocation of its own: a damaged pad of 2^21 must not take gigabytes
    check_tensor("the padded input of a window op", (n, h + top + bottom, w + left + right, c), x.dtype)
    return pad_constant(x, ((0, 0), (top, bottom), (left, right), (0, 0)), value)


def taps(padded: np.ndarray, kernel: Sequence[int], out_hw: Sequence[int], stride: Sequence[int],
         dilation: Sequence[int] = (1, 1)) -> Iterator[tuple[int, int, np.ndarray]]:
    """Yield ``(ky, kx, view)`` for every kernel tap; ``view`` has the output's N, H, W."""
    (kh, kw), (oh, ow), (sy, sx), (dy, dx) = kernel, out_hw, stride, dilation
    span_h, span_w = (kh - 1) * dy + 1, (kw - 1) * dx + 1
    if min(kh, kw) < 1 or span_h > padded.shape[1] or span_w > padded.shape[2]:
        # checked before the loop: a damaged kernel of 2^31 taps would otherwise run for hours
        raise ValueError(f"a {kh}x{kw} kernel (dilation {dy}x{dx}) does not fit the padded "
                         f"{padded.shape[1]}x{padded.shape[2]} input")
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dy, kx * dx
            yield ky, kx, padded[:, y0:y0 + (oh - 1) * sy + 1:sy, x0:x0 + (ow - 1) * sx + 1:sx, :]


def patches(padded: np.ndarray, kernel: Sequence[int], out: Sequence[int], stride: Sequence[int],
            dilation: Sequence[int]) -> np.ndarray:
    """A read-only view ``[N, *out, *kernel, C]`` of every window of a padded ``[N, *spatial, C]`` array:
    ``view[n, o..., k..., c] = padded[n, o*stride + k*dilation ..., c]`` (any number of spatial axes)."""
    n, c = padded.shape[0], padded.shape[-1]
    axes = padded.strides[1:-1]
    strides = (padded.strides[0], *(a * s for a, s in zip(axes, stride)), *(a * d for a, d in zip(axes, dilation)),
               padded.strides[-1])
    shape = (n, *out, *kernel, c)
    if not padded.flags.c_contiguous:
        return as_strided(padded, shape, strides, writeable=False)
    # the same view over a contiguous array's own buffer, without as_strided's Python (5 us of its 7)
    view = np.ndarray(shape, padded.dtype, padded, 0, strides)
    view.flags.writeable = False
    return view


def windows_2d(x: np.ndarray, kernel: Sequence[int], out_hw: Sequence[int], stride: Sequence[int],
               dilation: Sequence[int], pad: Sequence[int]) -> np.ndarray:
    """``[N, OH, OW, KH, KW, C]``: every window of ``x`` padded by ``pad`` (0 where a tap reads padding).

    Normally :func:`patches` of the padded input (a view). When that padded input would be much larger
    than the windows themselves (huge pads, strides and dilations, where most of it is never read), the
    windows are gathered from ``x`` directly instead, so no padded copy is built."""
    (kh, kw), (oh, ow) = kernel, out_hw
    n, h, w, c = x.shape
    if not sparse_padding(x, kernel, out_hw, pad):
        return patches(pad_hw(x, pad), kernel, out_hw, stride, dilation)
    rows = _tap_index(oh, kh, stride[0], dilation[0], pad[0])        # [OH, KH]
    cols = _tap_index(ow, kw, stride[1], dilation[1], pad[2])        # [OW, KW]
    inside = ((rows >= 0) & (rows < h))[:, None, :, None] & ((cols >= 0) & (cols < w))[None, :, None, :]
    gathered = x[:, np.clip(rows, 0, h - 1)[:, None, :, None], np.clip(cols, 0, w - 1)[None, :, None, :], :]
    return np.where(inside[None, ..., None], gathered, x.dtype.type(0))


def sparse_padding(x: np.ndarray, kernel: Sequence[int], out_hw: Sequence[int], pad: Sequence[int]) -> bool:
    """True when padding NHWC ``x`` would take over 64 MB and over 4x the elements of its windows."""
    n, h, w, c = x.shape
    padded = n * (h + pad[0] + pad[1]) * (w + pad[2] + pad[3]) * c
    return padded * x.itemsize > _GATHER_ABOVE and padded > 4 * n * math.prod(out_hw) * math.prod(kernel) * c


def _tap_index(out: int, k: int, stride: int, dilation: int, before: int) -> np.ndarray:
    """The input index each tap of each output position reads along one axis (out of range: padding)."""
    return np.arange(out)[:, None] * stride + np.arange(k)[None, :] * dilation - before


_GATHER_ABOVE = 1 << 26     # bytes of padded input above which sparse windows are gathered instead


_CHUNK = 1 << 22    # elements of im2col rows copied at once (32 MB of float64)


def window_gemm(view: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum over k, c of view[n, o..., k..., c] * weights[m, k..., c]`` as ``[N, *out, M]``.

    ``view`` comes from :func:`patches` and ``weights`` is ``[M, *kernel, C]`` in the view's dtype. The
    windows of a block of output rows are copied into contiguous im2col rows and multiplied by the
    weights in one BLAS product; blocks keep the copy under :data:`_CHUNK` elements.
    """
    spatial = (view.ndim - 2) // 2
    n, out, depth = view.shape[0], view.shape[1:1 + spatial], math.prod(view.shape[1 + spatial:])
    matrix = weights.reshape(weights.shape[0], depth).T
    acc = np.empty((n, *out, weights.shape[0]), dtype=np.result_type(view, weights))
    per_row = math.prod(out[1:]) * depth
    block = max(1, _CHUNK // max(per_row, 1))
    for b in range(n):
        for r in range(0, out[0], block):
            # a copy unless the windows do not overlap: BLAS needs rows that do not alias (a reshape of
            # overlapping windows can come back as a view, which matmul then runs without BLAS)
            rows = np.ascontiguousarray(view[b, r:r + block].reshape(-1, depth))
            np.matmul(rows, matrix, out=acc[b, r:r + block].reshape(-1, weights.shape[0]))
    return acc


# the largest zero-padded input buffer a prepared convolution keeps for its next call (1 MB; bigger ones are made
# per call), and the most bytes of them one plan keeps (8 MB, given out in op order; the real models' plans keep
# at most 7 MB), so that a big model's plan does not hold hundreds of MB
_KEPT_PADDED = 1 << 20
KEPT_PADDED_PER_PLAN = 8 << 20


class KeptBytes:
    """How many more bytes of padded input buffers (:class:`PaddedBuffers`) one plan may keep."""

    __slots__ = ("left",)

    def __init__(self, limit: int) -> None:
        self.left = limit

    def reserve(self, nbytes: int) -> bool:
        """Take ``nbytes`` of what is left, if that much is left."""
        if nbytes > self.left:
            return False
        self.left -= nbytes
        return True


class PaddedBuffers:
    """Zero-padded float32 input buffers of one shape for a kernel made once per plan, reused from call to call.

    A call takes a buffer (:meth:`filled`), which writes the whole input into the inside and nothing into the
    border, so the border is still the zeros ``np.zeros`` made: the buffer holds what a fresh zeroed buffer with
    the input copied in holds, without zeroing it again (21 buffers, 66 us of a det_small run). The kernel only
    reads it and hands it back (:meth:`done`) when it is finished with it; a call finding none free (the first,
    or a second one running meanwhile in another thread) makes one. One buffer is kept, of at most
    :data:`_KEPT_PADDED` bytes, while the plan's ``kept`` allows it (none without ``kept``)."""

    __slots__ = ("shape", "inside", "free", "keep")

    def __init__(self, shape: tuple, inside: tuple, kept: Optional[KeptBytes]) -> None:
        self.shape, self.inside = shape, inside
        self.free: list = []
        nbytes = math.prod(shape) * 4
        self.keep = kept is not None and nbytes <= _KEPT_PADDED and kept.reserve(nbytes)

    def take(self) -> np.ndarray:
        """A buffer of zeros outside the inside (and anything inside, which the caller overwrites in full)."""
        free = self.free
        return free.pop() if free else np.zeros(self.shape, np.float32)

    def filled(self, x: np.ndarray) -> np.ndarray:
        """A buffer with ``x`` (of the inside's shape) inside and zeros around it."""
        padded = self.take()
        padded[self.inside] = x
        return padded

    def done(self, padded: np.ndarray) -> None:
        """``padded`` (from :meth:`take`) is no longer read: a later call may reuse it."""
        if self.keep and not self.free:
            self.free.append(padded)


class WindowProduct:
    """A CONV2D's product for one static input shape and one set of constant float32 weights ``[M, KH, KW, C]``,
    its geometry made once per plan (convolution.prepared_window): the padded input, the view of its windows,
    the im2col rows and the product, as :func:`window_gemm` computes them for an input small enough to take one
    block (the same rows times the same matrix in one BLAS product: the same bits), without the per-call
    shape arithmetic, np.pad's Python and the view's construction from scratch."""

    __slots__ = ("matrix", "padded_shape", "inside", "view_shape", "view_strides", "pixels", "depth", "shape",
                 "buffers")

    def __init__(self, weights: np.ndarray, x_shape: Sequence[int], pad: Sequence[int], out_hw: Sequence[int],
                 stride: Sequence[int], dilation: Sequence[int], kept: Optional[KeptBytes] = None) -> None:
        m, kh, kw, c = weights.shape
        n, h, w, _ = x_shape
        top, bottom, left, right = (int(p) for p in pad)
        self.depth = kh * kw * c
        self.matrix = weights.reshape(m, self.depth).T            # as window_gemm passes it to BLAS
        self.padded_shape = (n, h + top + bottom, w + left + right, c)
        self.inside = (slice(None), slice(top, top + h), slice(left, left + w))
        self.buffers = PaddedBuffers(self.padded_shape, self.inside, kept)
        row, item = self.padded_shape[2] * c * 4, 4                # the strides of the C-contiguous padded input
        (sy, sx), (dy, dx) = stride, dilation
        self.view_shape = (n, *out_hw, kh, kw, c)
        self.view_strides = (self.padded_shape[1] * row, row * sy, c * item * sx, row * dy, c * item * dx, item)
        self.pixels = n * out_hw[0] * out_hw[1]
        self.shape = (n, *out_hw, m)

    @staticmethod
    def fits(x_shape: Sequence[int], weights_shape: Sequence[int], out_hw: Sequence[int]) -> bool:
        """True where :func:`window_gemm` takes the whole input in one block (one batch, one product)."""
        depth = math.prod(weights_shape[1:])
        return x_shape[0] == 1 and _CHUNK // max(out_hw[1] * depth, 1) >= out_hw[0]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The sums ``[N, OH, OW, M]`` (no bias) of a float32 input of the plan's shape."""
        reused = x.flags.c_contiguous
        if reused:
            padded = self.buffers.filled(x)
        else:       # pad_constant's copy of a channels-last view of channels-first memory is faster
            top, left = self.inside[1].start, self.inside[2].start
            padded = pad_constant(x, ((0, 0), (top, self.padded_shape[1] - x.shape[1] - top),
                                      (left, self.padded_shape[2] - x.shape[2] - left), (0, 0)), np.float32(0))
        view = np.ndarray(self.view_shape, np.float32, padded, 0, self.view_strides)
        acc = np.empty(self.shape, np.float32)
        # a copy unless the windows do not overlap, as in window_gemm (BLAS needs rows that do not alias)
        rows = np.ascontiguousarray(view.reshape(self.pixels, self.depth))
        np.matmul(rows, self.matrix, out=acc.reshape(self.pixels, -1))
        if reused:
            self.buffers.done(padded)      # read by the product alone (rows is a copy or a view of it)
        return acc


# a 1x1 convolution runs as weights @ pixels^T on at most this many pixels, or on at least this many
# times as many output channels as pixels (see pointwise_gemm)
_FEW_PIXELS = 32
_MANY_CHANNELS = 8


def pointwise_gemm(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """A 1x1 convolution with stride 1 and no padding: ``[N, H, W, C] @ [M, 1, 1, C]^T`` as one BLAS product
    (:class:`Pointwise`)."""
    return Pointwise(weights, x.shape)(x)


class Pointwise:
    """A 1x1 convolution's product for one input shape and one set of weights ``[M, 1, 1, C]`` (made once per
    call, or once per plan when the weights are constant: convolution.prepared_pointwise).

    On a few pixels (the deep layers of a small input) the product runs transposed, ``[M, C] @ [C, pixels]``:
    with the few pixels as the rows, OpenBLAS's float32 product took up to twice as long (6 pixels, 384 to
    768 channels: 250 us against 130 us; 48 pixels to 768 channels: 450 us against 360 us; at 96 pixels to
    192 channels the plain product is faster again). The sums are the same; only their float32 rounding
    differs."""

    __slots__ = ("matrix", "pixels", "shape", "transposed", "vector")

    def __init__(self, weights: np.ndarray, x_shape: Sequence[int]) -> None:
        m = weights.shape[0]
        self.matrix = weights.reshape(m, -1)
        self.pixels = math.prod(x_shape[:-1])
        self.shape = (*x_shape[:-1], m)
        self.transposed = self.pixels <= _FEW_PIXELS or m >= _MANY_CHANNELS * self.pixels
        # one pixel and a C-contiguous matrix (of at least 2 x 2: numpy's matmul makes a 1-row or 1-column product
        # a dot): matmul's [M, C] @ [C, 1] is the gemv np.dot runs for [M, C] . [C], the same BLAS call and bits,
        # without matmul's transposes and copies (1 us of a squeeze-excitation block's 3-5 us product)
        self.vector = (self.pixels == 1 and m > 1 and self.matrix.shape[1] > 1 and self.matrix.flags.c_contiguous
                       and self.matrix.dtype == np.float32)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.vector and x.dtype == np.float32:
            return np.dot(self.matrix, np.ascontiguousarray(x.reshape(-1))).reshape(self.shape)
        pixels = np.ascontiguousarray(x.reshape(self.pixels, -1))
        if self.transposed:
            return np.ascontiguousarray(np.matmul(self.matrix, pixels.T).T).reshape(self.shape)
        acc = np.empty(self.shape, dtype=np.result_type(x, self.matrix))
        np.matmul(pixels, self.matrix.T, out=acc.reshape(self.pixels, -1))
        return acc


# depthwise_rows: the most weight elements it tiles along the output rows (bigger kernels and rows use einsum
# over the windows instead); and the most stride-times-channels for which it computes every column and keeps
# every sx-th (at stride 2: 2x the work, still faster than the windows' einsum below 256 channels)
_ROW_WEIGHTS = 1 << 22
_ROW_STRIDED_CHANNELS = 256
_ROW_SMALL = 1 << 15      # tiled weights of at most this many elements: a row sum at any stride (less overhead)


def depthwise_rows(padded: np.ndarray, weights: np.ndarray, out_hw: Sequence[int], stride: Sequence[int],
                   dilation: Sequence[int]) -> Optional[np.ndarray]:
    """``out[n, y, x, c*M + m] = sum over taps of padded[n, y*sy + ky*dy, x*sx + kx*dx, c] * weights[ky, kx, c, m]``,
    as ``[N, OH, OW, C*M]``, or None where this does not pay (:data:`_ROW_WEIGHTS`, :data:`_ROW_STRIDED_CHANNELS`).
    See :class:`RowSum`."""
    if not RowSum.fits(weights.shape, padded.shape, out_hw, stride, dilation):
        return None
    # input channel c feeds outputs c*M .. c*M + M-1; the view needs each padded row as one contiguous run
    m = weights.shape[3]
    padded = np.repeat(padded, m, axis=-1) if m > 1 else np.ascontiguousarray(padded)
    return RowSum(weights, padded.shape, out_hw, stride, dilation)(padded)


class RowSum:
    """A depthwise sum over rows of the padded input, for one geometry and one set of weights (made once
    per call, or once per plan when the weights are constant: convolution.prepared_depthwise).

    At column stride 1, tap ``(ky, kx)`` of output row ``y`` reads one contiguous run of ``OW*C*M`` values of
    padded row ``y*sy + ky*dy``, starting at column ``kx*dx``; so the input is viewed as
    ``[N, OH, KH, KW, OW*C*M]`` (no copy) and one einsum with the weights tiled along a row sums the taps,
    its inner loop over the whole run (2x to 9x faster than a multiply and an add per tap, or an einsum over
    the windows, whose inner loop runs over C). The sums go tap by tap in (ky, kx) order from 0, as before:
    the bits are the same. At a larger column stride every column is computed and every sx-th kept."""

    __slots__ = ("tiled", "shape", "strides", "out", "stride_x", "ow")

    def __init__(self, weights: np.ndarray, padded_shape: Sequence[int], out_hw: Sequence[int],
                 stride: Sequence[int], dilation: Sequence[int]) -> None:
        kh, kw, c, m = weights.shape
        (oh, ow), (sy, sx), (dy, dx) = out_hw, stride, dilation
        n, _, wp, cm = padded_shape[0], padded_shape[1], padded_shape[2], c * m     # channels repeated M times
        width = _row_width(kw, wp, ow, sx, dx)
        self.tiled = np.tile(weights.reshape(kh, kw, 1, cm), (1, 1, width, 1)).reshape(kh, kw, width * cm)
        item = self.tiled.itemsize
        row = padded_shape[2] * cm * item                                 # the strides of a contiguous input
        self.shape = (n, oh, kh, kw, width * cm)
        self.strides = (padded_shape[1] * row, row * sy, row * dy, cm * item * dx, item)
        self.out = (n, oh, width, cm)
        self.stride_x, self.ow = sx, ow

    @staticmethod
    def fits(weights_shape: Sequence[int], padded_shape: Sequence[int], out_hw: Sequence[int],
             stride: Sequence[int], dilation: Sequence[int]) -> bool:
        """True where the row sum pays (:data:`_ROW_WEIGHTS`, :data:`_ROW_STRIDED_CHANNELS`)."""
        kh, kw, c, m = weights_shape
        sx = stride[1]
        width = _row_width(kw, padded_shape[2], out_hw[1], sx, dilation[1])
        tiled = kh * kw * width * c * m
        return tiled <= _ROW_WEIGHTS and (sx == 1 or sx * c * m <= _ROW_STRIDED_CHANNELS or tiled <= _ROW_SMALL)

    def __call__(self, padded: np.ndarray) -> np.ndarray:
        """The sums ``[N, OH, OW, C*M]`` over a C-contiguous padded input (channels already repeated M times)."""
        view = np.ndarray(self.shape, padded.dtype, padded, 0, self.strides)
        view.flags.writeable = False
        acc = np.einsum("nhyxr,yxr->nhr", view, self.tiled).reshape(self.out)
        return acc if self.stride_x == 1 else acc[:, :, :(self.ow - 1) * self.stride_x + 1:self.stride_x]


def _row_width(kw: int, padded_width: int, ow: int, sx: int, dx: int) -> int:
    """The output columns a row sum computes: OW at column stride 1, else every column the kernel fits."""
    return padded_width - (kw - 1) * dx if sx > 1 else ow


def centered(x: np.ndarray, zp: int, what: str, dtype: DType) -> np.ndarray:
    """``x - zp`` in the compute type: float32 for float data, int64 for integer data.

    ``dtype`` is the operand's IR type; only int8 data may have a zero point.
    """
    x = np.asarray(x)
    if zp and dtype != DType.INT8:
        raise ValueError(f"{what} zero point must be 0 for {dtype.value} data, got {zp}")
    if x.dtype.kind == "f":
        return f32(x)
    return as_int64(x) - int(zp)


def blas_type(x: np.ndarray) -> np.ndarray:
    """float32 stays; integer data goes to float64, where its products and sums are exact."""
    return x if x.dtype == np.float32 else x.astype(np.float64)


def rows(x: np.ndarray) -> np.ndarray:
    """An NHWC array as a ``[N*H*W, C]`` matrix (copies a strided view)."""
    return x.reshape(-1, x.shape[-1])

