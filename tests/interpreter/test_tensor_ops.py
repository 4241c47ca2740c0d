"""Convolutions, pools, MATMUL and ARGMAX against naive loop transcriptions of the spec pseudocode."""
from __future__ import annotations

import time

import numpy as np
import pytest

from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.ops import Op

from .helpers import run_op

RNG = np.random.default_rng(42)


def naive_conv2d(x, w, bias, pad, stride, dilation, in_zp=0, w_zp=0):
    n, ih, iw, ic = x.shape
    oc, kh, kw, _ = w.shape
    oh = (ih - 1 + pad[0] + pad[1] - (kh - 1) * dilation[0]) // stride[0] + 1
    ow = (iw - 1 + pad[2] + pad[3] - (kw - 1) * dilation[1]) // stride[1] + 1
    out = np.zeros((n, oh, ow, oc), dtype=np.float64)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for o in range(oc):
                    acc = 0.0
                    for ky in range(kh):
                        for kx in range(kw):
                            y = oy * stride[0] - pad[0] + ky * dilation[0]
                            xx = ox * stride[1] - pad[2] + kx * dilation[1]
                            if 0 <= y < ih and 0 <= xx < iw:
                                for c in range(ic):
                                    acc += (float(x[b, y, xx, c]) - in_zp) * (float(w[o, ky, kx, c]) - w_zp)
                    out[b, oy, ox, o] = acc + bias[0 if len(bias) == 1 else o]
    return out


def naive_depthwise(x, w, bias, pad, stride, dilation, in_zp=0, w_zp=0):
    kh, kw, c, m = w.shape
    # a depthwise conv is one ordinary conv per (channel, multiplier) pair on that channel alone
    outs = []
    for ch in range(c):
        for k in range(m):
            wk = w[:, :, ch, k].reshape(1, kh, kw, 1)
            bk = [bias[0 if len(bias) == 1 else ch * m + k]]
            outs.append(naive_conv2d(x[..., ch:ch + 1], wk, bk, pad, stride, dilation, in_zp, w_zp))
    return np.concatenate(outs, axis=-1)


def naive_transpose_conv2d(x, w, bias, out_pad, stride, in_zp=0, w_zp=0):
    n, ih, iw, ic = x.shape
    oc, kh, kw, _ = w.shape
    oh = (ih - 1) * stride[0] + out_pad[0] + out_pad[1] + kh
    ow = (iw - 1) * stride[1] + out_pad[2] + out_pad[3] + kw
    out = np.zeros((n, oh, ow, oc))
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for o in range(oc):
                    acc = 0.0
                    for ky in range(kh):
                        for kx in range(kw):
                            y, xx = oy - out_pad[0] - ky, ox - out_pad[2] - kx
                            if 0 <= y < ih * stride[0] and 0 <= xx < iw * stride[1] \
                                    and y % stride[0] == 0 and xx % stride[1] == 0:
                                for c in range(ic):
                                    acc += (float(x[b, y // stride[0], xx // stride[1], c]) - in_zp) * \
                                           (float(w[o, ky, kx, c]) - w_zp)
                    out[b, oy, ox, o] = acc + bias[0 if len(bias) == 1 else o]
    return out


def test_conv2d_float_with_stride_dilation_pad_and_bias():
    x = RNG.standard_normal((2, 7, 6, 3)).astype(np.float32)
    w = RNG.standard_normal((4, 3, 2, 3)).astype(np.float32)
    bias = RNG.standard_normal(4).astype(np.float32)
    a = A.Conv2dAttrs((1, 0, 2, 1), (2, 1), (1, 2), DType.FP32)
    got = run_op(Op.CONV2D, [x, w, bias], a)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, naive_conv2d(x, w, bias, a.pad, a.stride, a.dilation), rtol=1e-5, atol=1e-5)


def test_conv2d_int8_with_zero_points_and_a_single_bias():
    x = RNG.integers(-128, 128, (1, 5, 5, 2)).astype(np.int8)
    w = RNG.integers(-128, 128, (3, 3, 3, 2)).astype(np.int8)
    bias = np.array([1000], dtype=np.int32)
    a = A.Conv2dAttrs((1, 1, 1, 1), (1, 1), (1, 1), DType.INT32, input_zp=-12, weight_zp=5)
    got = run_op(Op.CONV2D, [x, w, bias], a)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, naive_conv2d(x, w, bias, a.pad, a.stride, a.dilation, -12, 5))


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_depthwise_conv2d(dtype):
    shape_x, shape_w = (1, 6, 7, 3), (3, 2, 3, 2)
    if dtype == np.float32:
        x, w = RNG.standard_normal(shape_x).astype(dtype), RNG.standard_normal(shape_w).astype(dtype)
        bias, acc, zps = RNG.standard_normal(6).astype(dtype), DType.FP32, (0, 0)
    else:
        x, w = RNG.integers(-128, 128, shape_x).astype(dtype), RNG.integers(-128, 128, shape_w).astype(dtype)
        bias, acc, zps = RNG.integers(-99, 99, 6).astype(np.int32), DType.INT32, (3, -4)
    a = A.Conv2dAttrs((1, 1, 0, 2), (1, 2), (2, 1), acc, input_zp=zps[0], weight_zp=zps[1])
    got = run_op(Op.DEPTHWISE_CONV2D, [x, w, bias], a)
    want = naive_depthwise(x, w, bias, a.pad, a.stride, a.dilation, *zps)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
@pytest.mark.parametrize("shape_w, stride", [((3, 3, 48, 1), (1, 1)), ((3, 2, 32, 2), (2, 1))])
def test_depthwise_conv2d_many_channels_small_kernel(dtype, shape_w, stride):
    # enough windows and channels for the einsum over the windows rather than the per-tap passes
    shape_x = (1, 33, 24, shape_w[2])
    channels = shape_w[2] * shape_w[3]
    if dtype == np.float32:
        x, w = RNG.standard_normal(shape_x).astype(dtype), RNG.standard_normal(shape_w).astype(dtype)
        bias, acc, zps = RNG.standard_normal(channels).astype(dtype), DType.FP32, (0, 0)
    else:
        x, w = RNG.integers(-128, 128, shape_x).astype(dtype), RNG.integers(-128, 128, shape_w).astype(dtype)
        bias, acc, zps = RNG.integers(-99, 99, channels).astype(np.int32), DType.INT32, (-5, 0)
    a = A.Conv2dAttrs((1, 1, 0, 1), stride, (1, 1), acc, input_zp=zps[0], weight_zp=zps[1])
    got = run_op(Op.DEPTHWISE_CONV2D, [x, w, bias], a)
    want = naive_depthwise(x, w, bias, a.pad, a.stride, a.dilation, *zps)
    if dtype == np.int8:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("out_pad", [(0, 0, 0, 0), (-1, 2, 1, -2), (2, -2, -1, 1)])
def test_transpose_conv2d_including_negative_out_pad(out_pad):
    x = RNG.standard_normal((2, 3, 4, 2)).astype(np.float32)
    w = RNG.standard_normal((3, 3, 4, 2)).astype(np.float32)
    bias = RNG.standard_normal(3).astype(np.float32)
    a = A.TransposeConv2dAttrs(out_pad, (2, 3), DType.FP32)
    got = run_op(Op.TRANSPOSE_CONV2D, [x, w, bias], a)
    np.testing.assert_allclose(got, naive_transpose_conv2d(x, w, bias, out_pad, a.stride), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("out_pad", [(0, 0, 0, 0), (-1, 2, 1, -1)])
def test_transpose_conv2d_kernel_equal_to_stride(out_pad):
    # each output pixel gets exactly one window's product (the kernel tiles the output without overlap)
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 3, 5)).astype(np.float32)
    bias = RNG.standard_normal(3).astype(np.float32)
    a = A.TransposeConv2dAttrs(out_pad, (2, 3), DType.FP32)
    got = run_op(Op.TRANSPOSE_CONV2D, [x, w, bias], a)
    np.testing.assert_allclose(got, naive_transpose_conv2d(x, w, bias, out_pad, a.stride), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("oc, kernel", [(1, (2, 2)), (2, (2, 2)), (1, (2, 1)), (4, (1, 1)), (1, (3, 3)), (3, (2, 2))])
def test_transpose_conv2d_kernel_equal_to_stride_is_exact(oc, kernel):
    # runs of KW*OC values of at most 16 bytes are laid side by side as one item each: small integers keep every
    # float32 sum exact, so the result must be the naive loop's bits (zeros included: +0.0, as added into zeros)
    x = RNG.integers(-3, 4, (2, 3, 4, 5)).astype(np.float32)
    w = RNG.integers(-3, 4, (oc, *kernel, 5)).astype(np.float32)
    w[0, 0, 0] = -0.0
    bias = RNG.integers(-3, 4, oc).astype(np.float32)
    for out_pad in [(0, 0, 0, 0), (0, 1, 2, 0)] + ([(-1, 1, 1, -1)] if min(kernel) > 1 else []):
        a = A.TransposeConv2dAttrs(out_pad, kernel, DType.FP32)
        got = run_op(Op.TRANSPOSE_CONV2D, [x, w, bias], a)
        want = naive_transpose_conv2d(x, w, bias, out_pad, a.stride).astype(np.float32)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_transpose_conv2d_int8_zero_points():
    x = RNG.integers(-128, 128, (1, 3, 3, 2)).astype(np.int8)
    w = RNG.integers(-128, 128, (2, 2, 3, 2)).astype(np.int8)
    bias = np.array([5, -5], dtype=np.int32)
    a = A.TransposeConv2dAttrs((0, -1, 1, 0), (2, 2), DType.INT32, input_zp=7, weight_zp=-3)
    got = run_op(Op.TRANSPOSE_CONV2D, [x, w, bias], a)
    np.testing.assert_array_equal(got, naive_transpose_conv2d(x, w, bias, a.out_pad, a.stride, 7, -3))


def naive_pool(x, kernel, stride, pad, reduce):
    n, ih, iw, c = x.shape
    oh = (ih + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    ow = (iw + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    out = np.zeros((n, oh, ow, c), dtype=object)
    for b in range(n):
        for oy in range(oh):
            for ox in range(ow):
                for ch in range(c):
                    window = [x[b, y, xx, ch]
                              for y in range(oy * stride[0] - pad[0], oy * stride[0] - pad[0] + kernel[0])
                              for xx in range(ox * stride[1] - pad[2], ox * stride[1] - pad[2] + kernel[1])
                              if 0 <= y < ih and 0 <= xx < iw]
                    out[b, oy, ox, ch] = reduce(window)
    return out


def test_avg_pool2d_float_ignores_padding():
    x = RNG.standard_normal((1, 5, 6, 2)).astype(np.float32)
    a = A.AvgPool2dAttrs((3, 2), (2, 2), (1, 1, 1, 0), DType.FP32)
    want = naive_pool(x, a.kernel, a.stride, a.pad, lambda w: sum(float(v) for v in w) / len(w))
    np.testing.assert_allclose(run_op(Op.AVG_POOL2D, [x], a), want.astype(np.float64), rtol=1e-5)


def spec_int_average(window, in_zp, out_zp):
    """The spec's integer average: reciprocal_scale(count) then apply_scale_32, in plain ints."""
    acc, count = sum(int(v) - in_zp for v in window), len(window)
    k = (count - 1).bit_length()
    multiplier, shift = (((1 << 30) + 1) << k) // count, 30 + k
    return min(max(((acc * multiplier + (1 << (shift - 1))) >> shift) + out_zp, -128), 127)


def test_avg_pool2d_int8_rounds_per_spec():
    x = RNG.integers(-128, 128, (2, 6, 7, 3)).astype(np.int8)
    a = A.AvgPool2dAttrs((3, 3), (1, 2), (1, 1, 2, 1), DType.INT32, input_zp=9, output_zp=-4)
    want = naive_pool(x, a.kernel, a.stride, a.pad, lambda w: spec_int_average(w, 9, -4))
    np.testing.assert_array_equal(run_op(Op.AVG_POOL2D, [x], a), want.astype(np.int64))


def test_avg_pool2d_int_hand_worked():
    x = np.array([1, 2, 2, 2], dtype=np.int8).reshape(1, 2, 2, 1)
    # 3x3 window with pad 1 sees all four values at each of 2x2 outputs: 7/4 = 1.75 -> 2
    a = A.AvgPool2dAttrs((3, 3), (1, 1), (1, 1, 1, 1), DType.INT32)
    np.testing.assert_array_equal(run_op(Op.AVG_POOL2D, [x], a).ravel(), [2, 2, 2, 2])
    y = np.array([-1, -2, -2, -2], dtype=np.int8).reshape(1, 2, 2, 1)   # -1.75 -> -2
    np.testing.assert_array_equal(run_op(Op.AVG_POOL2D, [y], a).ravel(), [-2, -2, -2, -2])


def test_max_pool2d_with_padding():
    x = RNG.standard_normal((1, 5, 5, 2)).astype(np.float32) - 10     # all negative: padding must not win
    a = A.MaxPool2dAttrs((2, 3), (2, 1), (1, 0, 1, 1))
    want = naive_pool(x, a.kernel, a.stride, a.pad, max)
    np.testing.assert_array_equal(run_op(Op.MAX_POOL2D, [x], a), want.astype(np.float32))
    xi = RNG.integers(-128, -100, (1, 4, 4, 1)).astype(np.int8)
    want_i = naive_pool(xi, a.kernel, a.stride, a.pad, max)
    np.testing.assert_array_equal(run_op(Op.MAX_POOL2D, [xi], a), want_i.astype(np.int8))


@pytest.mark.parametrize("mode,want", [("PROPAGATE", [np.nan, 3.0]), ("IGNORE", [2.0, 3.0])])
def test_max_pool2d_nan_modes(mode, want):
    x = np.array([np.nan, 2.0, 1.0, 3.0], dtype=np.float32).reshape(1, 1, 4, 1)
    got = run_op(Op.MAX_POOL2D, [x], A.MaxPool2dAttrs((1, 2), (1, 2), (0, 0, 0, 0), mode))
    np.testing.assert_array_equal(got.ravel(), want)


def test_matmul_float_and_int8_with_zero_points():
    a, b = RNG.standard_normal((2, 3, 5)).astype(np.float32), RNG.standard_normal((2, 5, 4)).astype(np.float32)
    want = np.einsum("nhc,ncw->nhw", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(run_op(Op.MATMUL, [a, b]), want, rtol=1e-5, atol=1e-6)
    ai, bi = RNG.integers(-128, 128, (1, 4, 6)).astype(np.int8), RNG.integers(-128, 128, (1, 6, 2)).astype(np.int8)
    want_i = np.einsum("nhc,ncw->nhw", ai.astype(np.int64) + 3, bi.astype(np.int64) - 8)
    got = run_op(Op.MATMUL, [ai, bi], A.MatMulAttrs(a_zp=-3, b_zp=8))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want_i)


def test_argmax_ties_take_the_first_index_and_drop_the_axis():
    x = np.array([[1, 5, 5, 2], [7, 7, 7, 7]], dtype=np.int8)
    got = run_op(Op.ARGMAX, [x], A.AxisNanAttrs(1))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [1, 0])
    y = np.array([[1, 5, 5, 2], [0, 7, 5, 2]], dtype=np.int8)
    np.testing.assert_array_equal(run_op(Op.ARGMAX, [y], A.AxisNanAttrs(0)), [0, 1, 0, 0])


@pytest.mark.parametrize("mode,want", [("PROPAGATE", [1, 2, 0, 0]), ("IGNORE", [0, 1, 0, 1])])
def test_argmax_nan_modes(mode, want):
    nan, inf = np.nan, np.inf
    x = np.array([[3, nan, 1], [1, 2, nan], [nan, nan, nan], [nan, -inf, -inf]], dtype=np.float32)
    np.testing.assert_array_equal(run_op(Op.ARGMAX, [x], A.AxisNanAttrs(1, mode)), want)


def test_a_224x224_conv_layer_runs_without_per_pixel_loops():
    x = RNG.standard_normal((1, 224, 224, 64)).astype(np.float32)
    w = (RNG.standard_normal((64, 3, 3, 64)) * 0.05).astype(np.float32)
    bias = np.zeros(64, np.float32)
    start = time.perf_counter()
    got = run_op(Op.CONV2D, [x, w, bias], A.Conv2dAttrs((1, 1, 1, 1), (1, 1), (1, 1), DType.FP32))
    assert time.perf_counter() - start < 10.0
    assert got.shape == (1, 224, 224, 64)
    want = np.einsum("hwc,ohwc->o", x[0, 99:102, 49:52, :], w)          # one output pixel by hand
    np.testing.assert_allclose(got[0, 100, 50], want, rtol=1e-4, atol=1e-4)
