"""Quantized TFLite activations (TABLE lookups) against LiteRT's reference kernels, bit for bit.

Every model reads all 256 int8 (or uint8) values, at several input scales and
zero points, with a dynamic batch fed at two sizes; the harness also runs the
emitted .tosa on the official reference model.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert
from tosaconv.diagnostics import ConversionError

RNG = np.random.default_rng(7)
INPUT_Q = [(0.05, -3), (0.0039, 0), (0.37, 25), (2.5, -128)]   # scales from tiny to > 1, zero points
DTYPE_RANGE = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767)}
NP = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16}


def unary_q_model(op, in_q, out_q, dtype="INT8", options=None, **fields) -> bytes:
    m = ModelBuilder()
    x = m.input("x", [2, 128], dtype, [-1, 128], quant=([in_q[0]], [in_q[1]], 0))
    y = m.tensor("y", [2, 128], dtype, [-1, 128], quant=([out_q[0]], [out_q[1]], 0))
    m.op(op, [x], [y], options, **fields)
    m.output(y)
    return m.finish()


def full_range_feeds(dtype="INT8", width=128):
    """Every value of the type once (batch 2 for 8 bits), then a random batch of 3."""
    lo, hi = DTYPE_RANGE[dtype]
    if dtype == "INT16":
        first = RNG.integers(lo, hi + 1, size=(2, width))
        first[0, :4] = [lo, hi, 0, -1]
    else:
        first = RNG.permutation(np.arange(lo, hi + 1)).reshape(2, width)
    second = RNG.integers(lo, hi + 1, size=(3, width))
    return [{"x": first.astype(NP[dtype])}, {"x": second.astype(NP[dtype])}]


def _out_zp(dtype, zp):
    return zp + 128 if dtype == "UINT8" else zp


@pytest.mark.parametrize("dtype", ["INT8", "UINT8"])
@pytest.mark.parametrize("in_q", INPUT_Q)
def test_logistic(dtype, in_q, tmp_path):
    in_q = (in_q[0], _out_zp(dtype, in_q[1]))
    data = unary_q_model("LOGISTIC", in_q, (1.0 / 256, _out_zp(dtype, -128)), dtype)
    check_exact_with_litert(data, full_range_feeds(dtype), tmp_path)


@pytest.mark.parametrize("dtype", ["INT8", "UINT8"])
@pytest.mark.parametrize("in_q", INPUT_Q)
def test_tanh(dtype, in_q, tmp_path):
    in_q = (in_q[0], _out_zp(dtype, in_q[1]))
    data = unary_q_model("TANH", in_q, (1.0 / 128, _out_zp(dtype, 0)), dtype)
    check_exact_with_litert(data, full_range_feeds(dtype), tmp_path)


@pytest.mark.parametrize("dtype", ["INT8", "UINT8"])
@pytest.mark.parametrize("in_q,out_q", [((0.05, -3), (0.03, -20)), ((0.0039, 0), (0.002, 5)),
                                        ((0.37, 25), (0.2, -100)), ((0.1, -128), (0.9, 0))])
def test_hard_swish(dtype, in_q, out_q, tmp_path):
    in_q, out_q = (in_q[0], _out_zp(dtype, in_q[1])), (out_q[0], _out_zp(dtype, out_q[1]))
    data = unary_q_model("HARD_SWISH", in_q, out_q, dtype)
    check_exact_with_litert(data, full_range_feeds(dtype), tmp_path)


@pytest.mark.parametrize("dtype", ["INT8", "UINT8"])
@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("in_q,out_q", [((0.05, -3), (0.03, -20)), ((0.2, 10), (0.1, -110))])
def test_gelu(dtype, approximate, in_q, out_q, tmp_path):
    in_q, out_q = (in_q[0], _out_zp(dtype, in_q[1])), (out_q[0], _out_zp(dtype, out_q[1]))
    data = unary_q_model("GELU", in_q, out_q, dtype, "GeluOptions", Approximate=approximate)
    check_exact_with_litert(data, full_range_feeds(dtype), tmp_path)


@pytest.mark.parametrize("in_q,out_q", [((0.05, -3), (0.5, -128)), ((0.02, 100), (0.01, -128)),
                                        ((0.3, 0), (1.0, -128))])
def test_exp(in_q, out_q, tmp_path):
    check_exact_with_litert(unary_q_model("EXP", in_q, out_q), full_range_feeds(), tmp_path)


@pytest.mark.parametrize("in_q,out_q", [((0.05, -3), (0.03, 20)), ((0.1, 60), (0.05, 40))])
def test_elu(in_q, out_q, tmp_path):
    check_exact_with_litert(unary_q_model("ELU", in_q, out_q), full_range_feeds(), tmp_path)


@pytest.mark.parametrize("in_q,out_q", [((0.05, -128), (0.04, 60)), ((0.5, -20), (0.03, 0))])
def test_log(in_q, out_q, tmp_path):
    check_exact_with_litert(unary_q_model("LOG", in_q, out_q), full_range_feeds(), tmp_path)


@pytest.mark.parametrize("dtype", ["INT8", "UINT8"])
@pytest.mark.parametrize("alpha", [0.2, 1.7, -0.5])
@pytest.mark.parametrize("in_q,out_q", [((0.05, -3), (0.03, -20)), ((0.4, 17), (0.9, 3))])
def test_leaky_relu(dtype, alpha, in_q, out_q, tmp_path):
    in_q, out_q = (in_q[0], _out_zp(dtype, in_q[1])), (out_q[0], _out_zp(dtype, out_q[1]))
    data = unary_q_model("LEAKY_RELU", in_q, out_q, dtype, "LeakyReluOptions", Alpha=alpha)
    check_exact_with_litert(data, full_range_feeds(dtype), tmp_path)


@pytest.mark.parametrize("dtype", ["INT8", "UINT8"])
@pytest.mark.parametrize("alpha", [-0.5, -0.25, -1.5])
def test_leaky_relu_negative_alpha_at_ties(dtype, alpha, tmp_path):
    """Equal scales make alpha * x land on halves: LiteRT rounds -(|alpha| x), not (-|alpha|) x."""
    q = (0.1, _out_zp(dtype, 5))
    data = unary_q_model("LEAKY_RELU", q, q, dtype, "LeakyReluOptions", Alpha=alpha)
    check_exact_with_litert(data, full_range_feeds(dtype), tmp_path)


@pytest.mark.parametrize("in_q,out_q", [((0.05, -128), (0.04, -128)), ((0.002, -128), (0.5, -100))])
def test_rsqrt(in_q, out_q, tmp_path):
    # TFLite refuses inputs below the zero point (rsqrt of a negative value): feed the valid ones.
    data = unary_q_model("RSQRT", in_q, out_q)
    feeds = [{"x": np.arange(-128, 128).reshape(2, 128).astype(np.int8)},
             {"x": RNG.integers(-128, 128, size=(3, 128)).astype(np.int8)}]
    check_exact_with_litert(data, feeds, tmp_path)


def test_logistic_output_scale_refused():
    data = unary_q_model("LOGISTIC", (0.05, 0), (1.0 / 128, -128))
    with pytest.raises(ConversionError, match="output scale 1/256"):
        convert(data)


def test_exp_uint8_refused():
    data = unary_q_model("EXP", (0.05, 128), (0.5, 0), "UINT8")
    with pytest.raises(ConversionError, match="converts int8 only"):
        convert(data)


@pytest.mark.parametrize("dtype", ["INT8", "UINT8"])
@pytest.mark.parametrize("in_q,alpha_q,out_q", [((0.05, -3), (0.01, 4), (0.03, -20)),
                                                ((0.4, 17), (0.002, -30), (0.1, 3)),
                                                ((0.02, 0), (0.3, 0), (0.9, -100))])
def test_prelu_per_channel_alpha(dtype, in_q, alpha_q, out_q, tmp_path):
    shift = 128 if dtype == "UINT8" else 0
    lo, hi = DTYPE_RANGE[dtype]
    m = ModelBuilder()
    x = m.input("x", [1, 2, 128], dtype, [-1, 2, 128], quant=([in_q[0]], [in_q[1] + shift], 0))
    alpha = RNG.integers(lo, hi + 1, size=(1, 128)).astype(NP[dtype])
    a = m.const("alpha", alpha, dtype, quant=([alpha_q[0]], [alpha_q[1] + shift], 0))
    y = m.tensor("y", [1, 2, 128], dtype, [-1, 2, 128], quant=([out_q[0]], [out_q[1] + shift], 0))
    m.op("PRELU", [x, a], [y])
    m.output(y)
    feeds = [{"x": full_range_feeds(dtype)[0]["x"].reshape(1, 2, 128)},
             {"x": RNG.integers(lo, hi + 1, size=(3, 2, 128)).astype(NP[dtype])}]
    check_exact_with_litert(m.finish(), feeds, tmp_path)
