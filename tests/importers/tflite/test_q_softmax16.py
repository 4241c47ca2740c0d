"""Quantized int16 TFLite SOFTMAX against LiteRT's reference ``SoftmaxInt16``, bit for bit.

Input scales and betas from tiny to near TFLite's overflow limit (input scale
times beta below 5), rows of random full-range values, rows with one
dominant value, constant rows, rows with the type's extremes, small spreads
where the interpolated LUTs matter most, a depth of 1 and a long last axis,
and a dynamic batch fed at two sizes. The harness also runs the emitted .tosa
on the official reference model.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert
from tosaconv.diagnostics import ConversionError

RNG = np.random.default_rng(47)
OUT_SCALE = 1.0 / 32768


def softmax16_model(shape, in_scale, beta=1.0, out_q=(OUT_SCALE, 0), in_zp=0, out_type="INT16") -> bytes:
    m = ModelBuilder()
    sig = [-1, *shape[1:]]
    x = m.input("x", list(shape), "INT16", sig, quant=([in_scale], [in_zp], 0))
    y = m.tensor("y", list(shape), out_type, sig, quant=([out_q[0]], [out_q[1]], 0))
    m.op("SOFTMAX", [x], [y], "SoftmaxOptions", Beta=beta)
    m.output(y)
    return m.finish()


def rows(batch, inner, depth):
    """Random rows of several spreads, plus rows that stress the max, sum and reciprocal steps."""
    x = RNG.integers(-32768, 32768, size=(batch, inner, depth))
    x[0, 0] = RNG.integers(-200, 200, size=depth)          # small spread: interpolated LUT values
    if inner > 1:
        x[0, 1] = -32768
        x[0, 1, 0] = 32767                                    # one dominant value, the rest at the minimum
    if inner > 2:
        x[0, 2] = 1234                                        # a constant row: the sum is depth * exp(0)
    x[-1, -1] = RNG.integers(-5000, 5000, size=depth)
    return x.astype(np.int16)


@pytest.mark.parametrize("in_scale,beta", [(0.001, 1.0), (0.0005, 1.0), (0.01, 0.5), (3e-5, 2.0), (1e-4, 1.0),
                                           (0.1, 1.0), (2.0, 2.0), (1e-6, 1.0)])
def test_softmax_int16(in_scale, beta, tmp_path):
    shape = (2, 3, 40)
    feeds = [{"x": rows(2, 3, 40)}, {"x": rows(5, 3, 40)}]
    check_exact_with_litert(softmax16_model(shape, in_scale, beta), feeds, tmp_path)


@pytest.mark.parametrize("shape", [(2, 1), (2, 4, 1000), (3, 7)])
def test_softmax_int16_depths(shape, tmp_path):
    feeds = [{"x": rows(shape[0], *(shape[1:-1] or (1,)), shape[-1]).reshape(shape)},
             {"x": rows(4, *(shape[1:-1] or (1,)), shape[-1]).reshape((4, *shape[1:]))}]
    check_exact_with_litert(softmax16_model(shape, 0.002), feeds, tmp_path)


def test_softmax_int16_output_scale_refused():
    with pytest.raises(ConversionError, match="int16 SOFTMAX needs output scale 1/32768"):
        convert(softmax16_model((2, 8), 0.001, out_q=(1.0 / 16384, 0)))


@pytest.mark.parametrize("in_zp,out_zp", [(3, 0), (0, -5)])
def test_softmax_int16_zero_point_refused(in_zp, out_zp):
    with pytest.raises(ConversionError, match="int16 SOFTMAX needs zero point 0"):
        convert(softmax16_model((2, 8), 0.001, in_zp=in_zp, out_q=(OUT_SCALE, out_zp)))


def test_softmax_int16_large_scale_refused():
    with pytest.raises(ConversionError, match=r"input scale \* beta = 6 >= 5 is not supported"):
        convert(softmax16_model((2, 8), 3.0, beta=2.0))


def test_softmax_int16_to_int8_refused():
    with pytest.raises(ConversionError, match="quantized SOFTMAX from INT16 to INT8 is not supported"):
        convert(softmax16_model((2, 8), 0.001, out_q=(1.0 / 256, -128), out_type="INT8"))
