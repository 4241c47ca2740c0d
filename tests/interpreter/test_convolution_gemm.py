"""The one-GEMM convolutions and the table-driven ERF against independent formulations.

CONV2D, CONV3D and TRANSPOSE_CONV2D run as one matrix product over im2col rows
(integer data in float64, see interpreter/windows.py). Here each is compared
with the spec's pseudocode written as plain loops over output positions in
int64 (for integers: bit-exact, at the extremes of the types, with the int48
accumulator holding sums far beyond int32) or float64 (for floats). ERF is
compared with Python's ``math.erf`` (the C library's double erf) within the
spec's 5 ulp, across the whole float32 range the kernel treats specially.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from tosaconv.interpreter import windows
from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.ops import Op

from .helpers import run_op

RNG = np.random.default_rng(1313)


def loop_conv(x, w, bias, pad, stride, dilation, x_zp=0, w_zp=0, dtype=np.int64) -> np.ndarray:
    """CONV2D/CONV3D pseudocode: for each output position, sum over the window's taps and channels."""
    spatial = x.ndim - 2
    pads = [(pad[2 * i], pad[2 * i + 1]) for i in range(spatial)]
    xp = np.pad(x.astype(dtype) - x_zp, [(0, 0), *pads, (0, 0)])
    wc = w.astype(dtype) - w_zp
    k = w.shape[1:-1]
    out = [(xp.shape[1 + i] - (k[i] - 1) * dilation[i] - 1) // stride[i] + 1 for i in range(spatial)]
    result = np.zeros((x.shape[0], *out, w.shape[0]), dtype)
    for n in range(x.shape[0]):
        for o in np.ndindex(*out):
            window = xp[(n, *(slice(o[i] * stride[i], o[i] * stride[i] + (k[i] - 1) * dilation[i] + 1,
                                    dilation[i]) for i in range(spatial)))]
            result[(n, *o)] = np.tensordot(wc, window, axes=(range(1, spatial + 2), range(spatial + 1)))
    return result + bias.astype(dtype)


def loop_transpose(x, w, bias, out_pad, stride, x_zp=0, w_zp=0) -> np.ndarray:
    """TRANSPOSE_CONV2D pseudocode: every input pixel adds its products into the output, int64."""
    n, ih, iw, _ = x.shape
    oc, kh, kw, _ = w.shape
    top, bottom, left, right = out_pad
    oh, ow = (ih - 1) * stride[0] + top + bottom + kh, (iw - 1) * stride[1] + left + right + kw
    out = np.zeros((n, oh, ow, oc), np.int64) + bias.astype(np.int64)
    xc, wc = x.astype(np.int64) - x_zp, w.astype(np.int64) - w_zp
    for b, iy, ix, ky, kx in np.ndindex(n, ih, iw, kh, kw):
        oy, ox = iy * stride[0] + top + ky, ix * stride[1] + left + kx
        if 0 <= oy < oh and 0 <= ox < ow:
            out[b, oy, ox] += wc[:, ky, kx, :] @ xc[b, iy, ix]
    return out


def extreme_int8(shape) -> np.ndarray:
    """int8 data that is mostly -128 (the value whose products are largest), with some 127s."""
    x = np.full(shape, -128, np.int8)
    x[RNG.random(shape) < 0.2] = 127
    return x


@pytest.mark.parametrize("zps", [(0, 0), (127, 127), (-128, 127)])
def test_conv2d_int8_extremes_are_exact(zps):
    x, w = extreme_int8((2, 9, 8, 32)), extreme_int8((5, 3, 3, 32))
    bias = np.array([2**31 - 2**26, -2**31 + 2**26, 0, 1, -1], np.int32)
    a = A.Conv2dAttrs((1, 2, 0, 1), (2, 1), (1, 2), DType.INT32, input_zp=zps[0], weight_zp=zps[1])
    got = run_op(Op.CONV2D, [x, w, bias], a)
    want = loop_conv(x, w, bias, a.pad, a.stride, a.dilation, *zps)
    assert np.abs(want).max() < 2**31      # the accumulator stays in range: no overflow to forgive
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)


def test_conv2d_int16_int48_accumulates_beyond_int32_exactly():
    x = np.where(RNG.random((1, 6, 6, 400)) < 0.9, -32768, 32767).astype(np.int16)
    w = np.where(RNG.random((3, 5, 5, 400)) < 0.9, -128, 127).astype(np.int8)
    bias = np.array([2**46, -2**46, 12345], np.int64)
    a = A.Conv2dAttrs((2, 2, 2, 2), (1, 1), (1, 1), DType.INT48)
    got = run_op(Op.CONV2D, [x, w, bias], a)
    want = loop_conv(x, w, bias, a.pad, a.stride, a.dilation)
    assert np.abs(want).max() > 2**40 and np.abs(want).max() < 2**47
    np.testing.assert_array_equal(got, want)


def test_conv2d_in_several_im2col_blocks_is_the_same(monkeypatch):
    x, w = extreme_int8((2, 11, 7, 6)), extreme_int8((4, 3, 3, 6))
    bias = np.zeros(4, np.int32)
    a = A.Conv2dAttrs((1, 1, 1, 1), (1, 1), (1, 1), DType.INT32, input_zp=-3, weight_zp=5)
    monkeypatch.setattr(windows, "_CHUNK", 3 * 7 * 9 * 6)     # three output rows per block, a short last one
    got = run_op(Op.CONV2D, [x, w, bias], a)
    np.testing.assert_array_equal(got, loop_conv(x, w, bias, a.pad, a.stride, a.dilation, -3, 5))


def test_conv2d_float_against_float64_loops():
    x, w = RNG.standard_normal((2, 13, 11, 24)).astype(np.float32), RNG.standard_normal((8, 3, 5, 24)).astype(np.float32)
    bias = RNG.standard_normal(8).astype(np.float32)
    a = A.Conv2dAttrs((2, 0, 1, 3), (1, 2), (2, 1), DType.FP32)
    got = run_op(Op.CONV2D, [x, w, bias], a)
    want = loop_conv(x, w, bias, a.pad, a.stride, a.dilation, dtype=np.float64)
    assert got.dtype == np.float32
    # spec dot-product bound for fp32: 3*2*ksb ulp-ish; this is far tighter
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_pointwise_conv2d_int8_exact_and_float_against_loops():
    x, w = extreme_int8((2, 3, 5, 7)), extreme_int8((4, 1, 1, 7))
    bias = np.array([5, -5, 2**20, 0], np.int32)
    a = A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), DType.INT32, input_zp=-3, weight_zp=11)
    got = run_op(Op.CONV2D, [x, w, bias], a)
    np.testing.assert_array_equal(got, loop_conv(x, w, bias, a.pad, a.stride, a.dilation, -3, 11))
    xf, wf = x.astype(np.float32) / 7, w.astype(np.float32) / 9
    got = run_op(Op.CONV2D, [xf, wf, np.float32([1.5])], A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), DType.FP32))
    want = loop_conv(xf, wf, np.float64([1.5] * 4), a.pad, a.stride, a.dilation, dtype=np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("channels, outputs", [(192, 48), (48, 192), (384, 96), (7, 5), (2, 2), (1, 8), (8, 1)])
def test_a_one_pixel_pointwise_product_is_matmuls_product_bit_for_bit(channels, outputs):
    # one pixel takes np.dot's gemv; it must give the bits of the [M, C] @ [C, 1] matmul it replaces (the same
    # BLAS call), on a contiguous pixel, a strided view of one, and weights given as a transposed view
    rng = np.random.default_rng(channels * 1000 + outputs)
    for _ in range(20):
        w = rng.standard_normal((outputs, 1, 1, channels)).astype(np.float32)
        for weights in (w, np.ascontiguousarray(w.transpose(3, 1, 2, 0)).transpose(3, 1, 2, 0)):
            x = rng.standard_normal((1, channels, 1, 1)).astype(np.float32)
            for pixel in (np.ascontiguousarray(x.transpose(0, 2, 3, 1)), x.transpose(0, 2, 3, 1)):
                matrix = weights.reshape(outputs, -1)
                want = np.ascontiguousarray(np.matmul(matrix, np.ascontiguousarray(pixel.reshape(1, -1)).T).T)
                got = windows.Pointwise(weights, pixel.shape)(pixel)
                np.testing.assert_array_equal(got.view(np.uint32), want.reshape(1, 1, 1, outputs).view(np.uint32))


def test_conv3d_int8_exact_with_stride_and_dilation():
    x, w = extreme_int8((1, 5, 6, 7, 3)), extreme_int8((2, 2, 3, 2, 3))
    bias = np.array([7, -7], np.int32)
    a = A.Conv3dAttrs((1, 0, 0, 1, 2, 1), (1, 2, 1), (2, 1, 3), DType.INT32, input_zp=4, weight_zp=-9)
    got = run_op(Op.CONV3D, [x, w, bias], a)
    np.testing.assert_array_equal(got, loop_conv(x, w, bias, a.pad, a.stride, a.dilation, 4, -9))


def loop_depthwise(x, w, bias, a, x_zp=0, w_zp=0, dtype=np.int64) -> np.ndarray:
    """Depthwise = a grouped conv: channel c with multiplier j is a one-channel conv of x[..., c]."""
    c, m = w.shape[2:]
    return np.concatenate([loop_conv(x[..., i:i + 1], w[:, :, i, :].transpose(2, 0, 1)[..., None],
                                     bias[i * m:(i + 1) * m], a.pad, a.stride, a.dilation, x_zp, w_zp, dtype)
                           for i in range(c)], axis=-1)


@pytest.mark.parametrize("m, stride, dilation", [(1, (2, 1), (1, 3)), (3, (2, 1), (1, 3)), (2, (1, 3), (2, 2)),
                                                 (1, (3, 2), (1, 1))])
def test_depthwise_conv2d_int8_extremes_are_exact(m, stride, dilation):
    x, w = extreme_int8((2, 7, 13, 5)), extreme_int8((3, 2, 5, m))
    bias = np.arange(5 * m, dtype=np.int32) - 2**20
    a = A.Conv2dAttrs((1, 1, 0, 2), stride, dilation, DType.INT32, input_zp=127, weight_zp=-128)
    got = run_op(Op.DEPTHWISE_CONV2D, [x, w, bias], a)
    np.testing.assert_array_equal(got, loop_depthwise(x, w, bias, a, 127, -128))


@pytest.mark.parametrize("op", [Op.CONV2D, Op.DEPTHWISE_CONV2D])
def test_sparse_padding_gathers_the_windows_exactly(monkeypatch, op):
    """Pads and strides so large that most of the padded input is never read (the official tests pad by
    8188 with stride 8192): the windows are gathered from the input instead of padding it."""
    monkeypatch.setattr(windows, "_GATHER_ABOVE", 0)
    x = extreme_int8((1, 4, 5, 3))
    w = extreme_int8((2, 3, 2, 3) if op == Op.CONV2D else (3, 2, 3, 2))
    bias = np.array([3, -3, 5, -5, 7, -7][:2 if op == Op.CONV2D else 6], np.int32)
    a = A.Conv2dAttrs((9, 7, 6, 11), (7, 5), (4, 6), DType.INT32, input_zp=-7, weight_zp=5)
    assert windows.sparse_padding(np.zeros((1, 4, 5, 3)), (3, 2), (2, 4), a.pad)
    got = run_op(op, [x, w, bias], a)
    want = (loop_conv(x, w, bias, a.pad, a.stride, a.dilation, -7, 5) if op == Op.CONV2D
            else loop_depthwise(x, w, bias, a, -7, 5))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("channels", [6, 64])          # the per-tap path and the einsum path
@pytest.mark.parametrize("m, stride, dilation", [(1, (1, 1), (1, 1)), (2, (2, 2), (1, 2)), (1, (1, 3), (2, 1))])
def test_depthwise_conv2d_float_against_float64_loops(channels, m, stride, dilation):
    x = RNG.standard_normal((2, 9, 14, channels)).astype(np.float32)
    w = RNG.standard_normal((3, 3, channels, m)).astype(np.float32)
    bias = RNG.standard_normal(channels * m).astype(np.float32)
    a = A.Conv2dAttrs((1, 1, 2, 1), stride, dilation, DType.FP32)
    got = run_op(Op.DEPTHWISE_CONV2D, [x, w, bias], a)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, loop_depthwise(x, w, bias, a, dtype=np.float64), rtol=1e-5, atol=1e-5)


def tap_order_depthwise_f32(x, w, bias, a) -> np.ndarray:
    """The pseudocode's float32 sum: from 0, one product per tap in (ky, kx) order, then the bias; every
    multiply and add rounded to float32 on its own."""
    kh, kw, c, m = w.shape
    (sy, sx), (dy, dx) = a.stride, a.dilation
    xp = np.repeat(np.pad(x, [(0, 0), (a.pad[0], a.pad[1]), (a.pad[2], a.pad[3]), (0, 0)]), m, axis=-1)
    oh = (xp.shape[1] - (kh - 1) * dy - 1) // sy + 1
    ow = (xp.shape[2] - (kw - 1) * dx - 1) // sx + 1
    acc = np.zeros((x.shape[0], oh, ow, c * m), np.float32)
    for ky in range(kh):
        for kx in range(kw):
            tap = xp[:, ky * dy:ky * dy + (oh - 1) * sy + 1:sy, kx * dx:kx * dx + (ow - 1) * sx + 1:sx]
            acc = acc + tap * w[ky, kx].reshape(c * m)
    return acc + bias


@pytest.mark.parametrize("channels, m", [(5, 1), (6, 3), (40, 1), (300, 1)])   # 300 at stride 2: the window einsum
@pytest.mark.parametrize("stride, dilation", [((1, 1), (1, 1)), ((2, 2), (1, 1)), ((1, 3), (2, 1)), ((2, 1), (1, 2))])
def test_depthwise_conv2d_float_sums_taps_in_order(channels, m, stride, dilation):
    """Each path (rows of the padded input at column stride 1, every column then every sx-th, the windows'
    einsum) gives the same float32 bits as the taps summed in order, also on a transposed (strided) input."""
    x = RNG.standard_normal((2, channels, 9, 11)).astype(np.float32).transpose(0, 2, 3, 1)
    w = RNG.standard_normal((3, 2, channels, m)).astype(np.float32)
    bias = RNG.standard_normal(channels * m).astype(np.float32)
    for pad in [(1, 1, 0, 1), (0, 0, 0, 0)]:
        a = A.Conv2dAttrs(pad, stride, dilation, DType.FP32)
        got = run_op(Op.DEPTHWISE_CONV2D, [x, w, bias], a)
        np.testing.assert_array_equal(got, tap_order_depthwise_f32(x, w, bias, a))


@pytest.mark.parametrize("out_pad", [(0, 0, 0, 0), (-2, 1, 3, -1)])
def test_transpose_conv2d_int8_extremes_are_exact(out_pad):
    x, w = extreme_int8((2, 4, 3, 16)), extreme_int8((3, 3, 4, 16))
    bias = np.array([2**30, -2**30, 5], np.int32)
    a = A.TransposeConv2dAttrs(out_pad, (2, 3), DType.INT32, input_zp=-128, weight_zp=127)
    got = run_op(Op.TRANSPOSE_CONV2D, [x, w, bias], a)
    np.testing.assert_array_equal(got, loop_transpose(x, w, bias, out_pad, a.stride, -128, 127))


def ulp_distance(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in float32 units of the last place (both as float32 bit patterns on one line)."""
    def line(v):
        bits = v.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    return np.abs(line(got) - line(want))


def spec_ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The error in the spec's float32 ulps (tosa_reference_check_fp: the ulp of the power of two at or
    below |want|, at least the smallest normal's)."""
    pow2 = np.maximum(2.0 ** np.floor(np.log2(np.where(want == 0, 1.0, np.abs(want)))), 2.0 ** -126)
    err = np.abs(got.astype(np.float64) - want) / (pow2 * 2.0 ** -23)
    return np.where(want == 0, np.where(got == 0, 0.0, np.inf), err)


def test_erf_within_the_spec_bound_of_double_erf():
    x = np.concatenate([np.linspace(-4.2, 4.2, 200001), [1e-38, -1e-30, 1e-7, 3.99, 4.0, 4.001, 9.0, -30.0],
                        RNG.standard_normal(10000) * 2]).astype(np.float32)
    want = np.array([math.erf(float(v)) for v in x])
    got = run_op(Op.ERF, [x])
    assert got.dtype == np.float32
    assert spec_ulps(got, want).max() <= 2.5       # the spec allows 5
    assert (ulp_distance(got, want) <= 1).mean() > 0.99


def test_erf_within_the_spec_bound_on_every_997th_float32_below_4_5():
    bits = np.arange(0, 0x40900000, 997, dtype=np.uint32)          # 0 up to 4.5, subnormals included
    x = np.concatenate([bits.view(np.float32), -bits[1::7].view(np.float32)])
    want = np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)).astype(np.float64)
    assert spec_ulps(run_op(Op.ERF, [x]), want).max() <= 2.5


def test_erf_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
    got = run_op(Op.ERF, [x])
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], [1.0, -1.0, 0.0, -0.0])
    assert np.signbit(got[4]) and not np.signbit(got[3])
