"""Quantized REDUCE_PROD (int8, int16) and int16 LOGISTIC / TANH against LiteRT's reference kernels, bit for bit.

REDUCE_PROD: whole-range random data (with the extremes and the zero point),
one and several axes (adjacent or not, negative, all), keep_dims on and off,
output scales from tight to loose, a dynamic batch fed at two sizes. LOGISTIC
and TANH on int16: every one of the 65536 input values, at power-of-two input
scales (TFLite's 3 << shift path) and general ones (its 15-bit multiplier).
The harness also runs the emitted .tosa on the official reference model.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert
from tosaconv.diagnostics import ConversionError

RNG = np.random.default_rng(31)
RANGE = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767)}
NP = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16}


def prod_model(dtype, shape, axes, keep, in_q, out_q, dynamic=True) -> bytes:
    m = ModelBuilder()
    rank = len(shape)
    norm = {a % rank for a in axes}
    out = [1 if i in norm else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in norm]
    sig = [-1] + list(shape[1:]) if dynamic else None
    out_sig = None if sig is None or 0 in norm else [-1] + out[1:]
    x = m.input("x", shape, dtype, sig, quant=([in_q[0]], [in_q[1]], 0))
    y = m.tensor("y", out, dtype, out_sig, quant=([out_q[0]], [out_q[1]], 0))
    m.op("REDUCE_PROD", [x, m.const("axes", np.array(axes, np.int32))], [y], "ReducerOptions", KeepDims=keep)
    m.output(y)
    return m.finish()


def q_values(dtype, shape, zp=0):
    lo, hi = RANGE[dtype]
    x = RNG.integers(lo, hi + 1, size=shape).reshape(-1)
    x[:3] = [lo, hi, zp]
    return x.reshape(shape).astype(NP[dtype])


def prod_feeds(dtype, shape, zp, dynamic=True):
    shapes = [shape] + ([[3] + list(shape[1:])] if dynamic else [])
    return [{"x": q_values(dtype, s, zp)} for s in shapes]


# (dtype, input (scale, zp), output zp); the output scale is calibrated to the largest product times a slack.
PROD_Q = [("INT8", (0.05, -3), 5), ("INT8", (0.02, 10), -7), ("INT8", (0.3, 0), -128),
          ("INT16", (0.001, 0), 0), ("INT16", (0.0004, 0), 0)]
SLACK = {"INT8": [0.1, 1.5, 40.0], "INT16": [1.5, 40.0]}
AXES = [([1], True), ([2], False), ([1, 3], True), ([-1, 1], False), ([3, 2, 1], True)]


def calibrated_out_scale(dtype, in_q, n, slack):
    """An output scale that holds the largest |product| of ``n`` inputs, times ``slack``."""
    lo, hi = RANGE[dtype]
    largest = (in_q[0] * max(hi - in_q[1], in_q[1] - lo)) ** n
    return largest / hi * slack


@pytest.mark.parametrize("dtype,in_q,out_zp,slack", [(*q, s) for q in PROD_Q for s in SLACK[q[0]]])
@pytest.mark.parametrize("axes,keep", AXES)
def test_reduce_prod(dtype, in_q, out_zp, slack, axes, keep, tmp_path):
    shape = [2, 3, 2, 2] if len(axes) == 3 else [2, 3, 4, 2]
    n = int(np.prod([shape[a] for a in axes]))
    out_q = (calibrated_out_scale(dtype, in_q, n, slack), out_zp)
    data = prod_model(dtype, shape, axes, keep, in_q, out_q)
    check_exact_with_litert(data, prod_feeds(dtype, shape, in_q[1]), tmp_path)


@pytest.mark.parametrize("dtype,in_q,out_zp", [("INT8", (0.05, -3), 5), ("INT16", (0.001, 0), 0)])
def test_reduce_prod_all_axes_and_single_element(dtype, in_q, out_zp, tmp_path):
    """All axes (static input); and a reduced axis of size 1, where only the final rescale runs."""
    out_q = (calibrated_out_scale(dtype, in_q, 6, 2.0), out_zp)
    data = prod_model(dtype, [2, 3], [0, 1], False, in_q, out_q, dynamic=False)
    check_exact_with_litert(data, prod_feeds(dtype, [2, 3], in_q[1], dynamic=False), tmp_path)
    data = prod_model(dtype, [2, 1, 5], [1], True, in_q, (in_q[0] * 0.7, out_zp))
    check_exact_with_litert(data, prod_feeds(dtype, [2, 1, 5], in_q[1]), tmp_path)


def test_reduce_prod_wrapping_scale_refused():
    data = prod_model("INT8", [2, 16], [1], False, (0.5, 0), (1e-6, 0))
    with pytest.raises(ConversionError, match="can exceed int32, where its kernel wraps silently"):
        convert(data)


def test_reduce_prod_uint8_refused():
    data = prod_model("UINT8", [2, 4], [1], False, (0.05, 128), (0.5, 128))
    with pytest.raises(ConversionError, match="quantized REDUCE_PROD on UINT8 is not supported"):
        convert(data)


def test_reduce_prod_symbolic_axis_refused():
    data = prod_model("INT8", [2, 4], [0], False, (0.05, 0), (0.5, 0))
    with pytest.raises(ConversionError, match="over symbolic axes"):
        convert(data)


def unary16_model(op, in_scale, out_scale, in_zp=0, out_zp=0) -> bytes:
    m = ModelBuilder()
    x = m.input("x", [2, 32768], "INT16", [-1, 32768], quant=([in_scale], [in_zp], 0))
    y = m.tensor("y", [2, 32768], "INT16", [-1, 32768], quant=([out_scale], [out_zp], 0))
    m.op(op, [x], [y])
    m.output(y)
    return m.finish()


def all_int16_feeds():
    """Every int16 value once (batch 2), then a random batch of 3."""
    every = RNG.permutation(np.arange(-32768, 32768)).reshape(2, 32768).astype(np.int16)
    return [{"x": every}, {"x": RNG.integers(-32768, 32768, size=(3, 32768)).astype(np.int16)}]


# Power-of-two scales (2**-12 takes both kernels' 3 << shift path, 2**-11 TANH's only), general ones,
# a tiny one (the largest left shift) and a large one (multiplier near its int32 limit).
INT16_SCALES = [2.0 ** -12, 2.0 ** -11, 2.0 ** -10, 2.0 ** -15, 0.001, 0.00037, 3e-9, 1.7, 5.2]


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
@pytest.mark.parametrize("in_scale", INT16_SCALES)
def test_int16_logistic_tanh(op, in_scale, tmp_path):
    data = unary16_model(op, in_scale, 1.0 / 32768)
    check_exact_with_litert(data, all_int16_feeds(), tmp_path)


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_int16_logistic_tanh_output_scale_refused(op):
    with pytest.raises(ConversionError, match="needs output scale 1/32768"):
        convert(unary16_model(op, 0.001, 1.0 / 16384))


def test_int16_logistic_zero_point_refused():
    with pytest.raises(ConversionError, match="needs zero points 0"):
        convert(unary16_model("LOGISTIC", 0.001, 1.0 / 32768, in_zp=3))


def test_int16_tanh_huge_input_scale_refused():
    with pytest.raises(ConversionError, match="overflows int32"):
        convert(unary16_model("TANH", 8.0, 1.0 / 32768))
