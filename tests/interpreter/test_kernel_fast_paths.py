"""The kernels' speed paths give the values of their plain formulations.

Each path below is taken only for some shapes (a per-channel operand of few channels on a big tensor, a
global average pool, a 1x1 convolution on few pixels or to many channels, a channels-last view of
channels-first memory, repeated NEAREST resizes). Each is compared with an independent computation: numpy's
own broadcasting, the spec's pooling loop written out in float32, float64 loops, np.pad, plain fancy indexing.
"""
from __future__ import annotations

import numpy as np
import pytest

from tosaconv.interpreter import elementwise_binary
from tosaconv.interpreter.data_layout import pad_constant
from tosaconv.ir import attrs as A
from tosaconv.ir.dtypes import DType
from tosaconv.ir.ops import Op

from .helpers import run_op
from .test_convolution_gemm import loop_conv

RNG = np.random.default_rng(2611)


@pytest.mark.parametrize("op, fn", [(Op.ADD, np.add), (Op.SUB, np.subtract), (Op.MUL, np.multiply)])
@pytest.mark.parametrize("channels", [3, 16, 32, 48])
def test_per_channel_operand_on_a_big_tensor_is_numpy_broadcasting(op, fn, channels):
    big = RNG.standard_normal((1, 64, 1 + elementwise_binary._TILE_MIN_SIZE // (64 * channels), channels))
    big = big.astype(np.float32)
    small = RNG.standard_normal((1, 1, 1, channels)).astype(np.float32)
    small[0, 0, 0, 0] = np.nan
    assert big.size >= elementwise_binary._TILE_MIN_SIZE
    with np.errstate(all="ignore"):
        for a, b in ((big, small), (small, big)):
            got = run_op(op, [a, b], A.MulAttrs(0) if op is Op.MUL else None)
            assert got.shape == big.shape and got.tobytes() == fn(a, b).tobytes()


def _spec_avg_pool_sums(x: np.ndarray) -> np.ndarray:
    """The spec's accumulation: start at 0 and add every tap in row-major order, in float32."""
    acc = np.zeros((x.shape[0], 1, 1, x.shape[3]), np.float32)
    for y in range(x.shape[1]):
        for xx in range(x.shape[2]):
            acc = acc + x[:, y:y + 1, xx:xx + 1, :]
    return acc


@pytest.mark.parametrize("shape", [(1, 7, 7, 64), (2, 3, 5, 2), (1, 4, 4, 1), (1, 1, 1, 3)])
def test_global_avg_pool2d_adds_as_the_spec_loop(shape):
    x = (RNG.standard_normal(shape) * 1e4).astype(np.float32)
    x[..., 0] = -0.0                 # the spec's 0 + (-0.0) is +0.0
    if shape[3] > 1:
        x[0, 0, 0, 1] = np.nan
    a = A.AvgPool2dAttrs(shape[1:3], (1, 1), (0, 0, 0, 0), DType.FP32)
    got = run_op(Op.AVG_POOL2D, [x], a)
    with np.errstate(all="ignore"):
        want = _spec_avg_pool_sums(x) / np.float32(shape[1] * shape[2])
    assert got.tobytes() == want.astype(np.float32).tobytes()


@pytest.mark.parametrize("pixels_hw, channels, outputs", [((2, 3), 64, 96), ((6, 8), 32, 512), ((1, 1), 8, 3)])
def test_pointwise_conv2d_on_few_pixels_or_to_many_channels_against_float64_loops(pixels_hw, channels, outputs):
    x = RNG.standard_normal((1, *pixels_hw, channels)).astype(np.float32)
    w = RNG.standard_normal((outputs, 1, 1, channels)).astype(np.float32)
    bias = RNG.standard_normal(outputs).astype(np.float32)
    a = A.Conv2dAttrs((0, 0, 0, 0), (1, 1), (1, 1), DType.FP32)
    got = run_op(Op.CONV2D, [x, w, bias], a)
    assert got.flags.c_contiguous and got.shape == (1, *pixels_hw, outputs)
    want = loop_conv(x, w, bias, a.pad, a.stride, a.dilation, dtype=np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("channels", [1, 3, 4])
def test_pad_of_a_channels_last_view_is_np_pad(channels):
    nchw = RNG.standard_normal((2, channels, 9, 11)).astype(np.float32)
    nhwc = nchw.transpose(0, 2, 3, 1)                  # a view: channels-last over channels-first memory
    pairs = [(0, 0), (1, 2), (3, 0), (0, 0)]
    got, want = pad_constant(nhwc, pairs, np.float32(-1.5)), np.pad(nhwc, pairs, constant_values=-1.5)
    assert got.tobytes() == want.tobytes() and got.shape == want.shape and got.flags.c_contiguous


def test_repeated_nearest_resize_is_fancy_indexing_and_keeps_its_indices():
    x = RNG.standard_normal((1, 5, 7, 3)).astype(np.float32)
    a = A.ResizeAttrs((4, 1, 4, 1), (-2, -2), (1, 1), "NEAREST")
    rows, cols = np.repeat(np.arange(5), 4), np.repeat(np.arange(7), 4)     # scale 4, half a unit back
    for _ in range(3):          # the second and third runs use the cached indices
        got = run_op(Op.RESIZE, [x], a)
        np.testing.assert_array_equal(got, x[:, rows][:, :, cols])


def _spec_max_pool(x: np.ndarray, kernel: tuple, ignore_nan: bool) -> np.ndarray:
    """The spec's loop at stride 1, padded kernel - 1 after each axis: from the lowest value (NaN with IGNORE),
    apply_max_s of every tap inside the input in row-major order (PROPAGATE: a NaN wins; IGNORE: skipped)."""
    n, h, w, c = x.shape
    out = np.empty_like(x)
    for b, y, xx, ch in np.ndindex(n, h, w, c):
        acc = np.nan if ignore_nan else -np.inf
        for v in x[b, y:y + kernel[0], xx:xx + kernel[1], ch].ravel():
            if ignore_nan:
                acc = v if np.isnan(acc) else acc if np.isnan(v) else max(acc, v)
            else:
                acc = np.nan if np.isnan(acc) or np.isnan(v) else max(acc, v)
        out[b, y, xx, ch] = acc
    return out


@pytest.mark.parametrize("kernel", [(2, 2), (3, 2), (1, 3)])
@pytest.mark.parametrize("nan_mode", ["PROPAGATE", "IGNORE"])
def test_max_pool2d_padded_after_at_stride_1_is_the_spec_loop(kernel, nan_mode):
    x = RNG.integers(-50, 50, (2, 5, 6, 3)).astype(np.float32)
    x[0, 1, 1, 0] = x[1, 4, 5, 2] = x[0, 4, 0, 1] = np.nan
    x[1, 0, :, 1] = np.nan             # a row where IGNORE skips some windows' every tap but one
    a = A.MaxPool2dAttrs(kernel, (1, 1), (0, kernel[0] - 1, 0, kernel[1] - 1), nan_mode)
    for data in (x, np.ascontiguousarray(x.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3)):   # and a strided view
        got = run_op(Op.MAX_POOL2D, [data], a)
        np.testing.assert_array_equal(got, _spec_max_pool(x, kernel, nan_mode == "IGNORE"))
