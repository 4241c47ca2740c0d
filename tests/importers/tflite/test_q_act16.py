"""int16 quantized activations (EXP, LOG, RSQRT, GELU, LEAKY_RELU, PRELU) against LiteRT, bit for bit.

Every model reads all 65536 int16 values in one tensor (a dynamic batch of 2
rows of 32768), then a random batch of 3, at several scales; the harness also
runs the emitted .tosa on the official reference model. Ops that LiteRT 2.3
has no int16 kernel for are checked to fail in LiteRT *and* to be refused by
tosaconv with a message saying so.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert, run_litert
from tosaconv.diagnostics import ConversionError

RNG = np.random.default_rng(16)
WIDTH = 32768


def unary16_model(op, in_q, out_q, options=None, **fields) -> bytes:
    m = ModelBuilder()
    x = m.input("x", [2, WIDTH], "INT16", [-1, WIDTH], quant=([in_q[0]], [in_q[1]], 0))
    y = m.tensor("y", [2, WIDTH], "INT16", [-1, WIDTH], quant=([out_q[0]], [out_q[1]], 0))
    m.op(op, [x], [y], options, **fields)
    m.output(y)
    return m.finish()


def all_int16_feeds(lo: int = -32768):
    """Every int16 value from ``lo`` up (shuffled, padded with random ones to 2 rows), then a random batch."""
    values = RNG.permutation(np.arange(lo, 32768))
    first = np.concatenate([values, RNG.integers(lo, 32768, size=2 * WIDTH - values.size)]).reshape(2, WIDTH)
    second = RNG.integers(lo, 32768, size=(3, WIDTH))
    return [{"x": first.astype(np.int16)}, {"x": second.astype(np.int16)}]


@pytest.mark.parametrize("in_scale,out_scale", [(1 / 4096, 1 / 1024), (0.001, 1 / 32768), (0.0005, 0.0003),
                                                (0.0027, 2.0)])
def test_exp(in_scale, out_scale, tmp_path):
    data = unary16_model("EXP", (in_scale, 0), (out_scale, 0))
    check_exact_with_litert(data, all_int16_feeds(), tmp_path)


@pytest.mark.parametrize("in_scale,out_scale", [(1 / 1024, 1 / 4096), (0.05, 0.001), (0.0003, 0.0002)])
def test_log(in_scale, out_scale, tmp_path):
    # Non-positive inputs give the output's lowest value (LogLUTPrepare), so the whole range is fed.
    check_exact_with_litert(unary16_model("LOG", (in_scale, 0), (out_scale, 0)), all_int16_feeds(), tmp_path)


@pytest.mark.parametrize("in_scale,out_scale", [(1 / 1024, 1 / 4096), (0.00002, 0.1), (0.01, 0.0005)])
def test_rsqrt(in_scale, out_scale, tmp_path):
    # LiteRT fails at run time on negative inputs (rsqrt of a negative value): feed the valid ones.
    data = unary16_model("RSQRT", (in_scale, 0), (out_scale, 0))
    check_exact_with_litert(data, all_int16_feeds(lo=0), tmp_path)


@pytest.mark.parametrize("approximate", [False, True])
@pytest.mark.parametrize("in_q,out_q", [((1 / 4096, 0), (1 / 4096, 0)), ((0.0001, 0), (0.00007, 0)),
                                        ((0.003, 100), (0.002, -50))])
def test_gelu(approximate, in_q, out_q, tmp_path):
    # GeluPrepare has no zero-point check; LUTPopulateInt16 uses the input's and ignores the output's.
    data = unary16_model("GELU", in_q, out_q, "GeluOptions", Approximate=approximate)
    check_exact_with_litert(data, all_int16_feeds(), tmp_path)


@pytest.mark.parametrize("alpha", [0.2, 1.7, -0.5, 0.0])
@pytest.mark.parametrize("in_scale,out_scale", [(1 / 4096, 1 / 4096), (0.0004, 0.0009), (0.002, 0.0005)])
def test_leaky_relu(alpha, in_scale, out_scale, tmp_path):
    data = unary16_model("LEAKY_RELU", (in_scale, 0), (out_scale, 0), "LeakyReluOptions", Alpha=alpha)
    check_exact_with_litert(data, all_int16_feeds(), tmp_path)


def prelu16_model(in_q, alpha_q, out_q, alpha_type="INT8") -> bytes:
    m = ModelBuilder()
    x = m.input("x", [1, 256, 256], "INT16", [-1, 256, 256], quant=([in_q[0]], [in_q[1]], 0))
    lo, hi = (-128, 127) if alpha_type == "INT8" else (-32768, 32767)
    alpha = RNG.integers(lo, hi + 1, size=(256,)).astype(np.int8 if alpha_type == "INT8" else np.int16)
    a = m.const("alpha", alpha, alpha_type, quant=([alpha_q[0]], [alpha_q[1]], 0))
    y = m.tensor("y", [1, 256, 256], "INT16", [-1, 256, 256], quant=([out_q[0]], [out_q[1]], 0))
    m.op("PRELU", [x, a], [y])
    m.output(y)
    return m.finish()


@pytest.mark.parametrize("in_q,alpha_q,out_q", [((1 / 4096, 0), (0.01, 0), (1 / 4096, 0)),
                                                ((0.0004, 17), (0.002, -30), (0.0003, -90)),
                                                ((0.002, 0), (0.3, 5), (0.05, 0))])
def test_prelu_int8_alpha(in_q, alpha_q, out_q, tmp_path):
    every = RNG.permutation(np.arange(-32768, 32768)).reshape(1, 256, 256)
    feeds = [{"x": every.astype(np.int16)}, {"x": RNG.integers(-32768, 32768, size=(2, 256, 256)).astype(np.int16)}]
    check_exact_with_litert(prelu16_model(in_q, alpha_q, out_q), feeds, tmp_path)


def test_prelu_int16_alpha_refused():
    with pytest.raises(ConversionError, match="reads alpha as int8"):
        convert(prelu16_model((1 / 4096, 0), (0.0002, 0), (1 / 4096, 0), alpha_type="INT16"))


@pytest.mark.parametrize("in_scale,out_scale,message", [
    (0.0027, 1.0, "int16 slope wraps around"),          # exp(88.4) * 65536/65535 overflows: a jump of 65535
    (1 / 256, 1 / 16, "the int16 LUT has undefined entries"),   # inf - inf in LUTPopulateInt16's bias
])
def test_exp_overflowing_lut_refused(in_scale, out_scale, message):
    with pytest.raises(ConversionError, match=message):
        convert(unary16_model("EXP", (in_scale, 0), (out_scale, 0)))


def test_log_zero_point_refused():
    data = unary16_model("LOG", (1 / 1024, 100), (1 / 4096, 0))
    with pytest.raises(RuntimeError):
        run_litert(data, all_int16_feeds()[1])
    with pytest.raises(ConversionError, match="needs zero point 0"):
        convert(data)


@pytest.mark.parametrize("op,options,fields,message", [
    ("ELU", None, {}, "TFLite has no int16 kernel for ELU"),
    ("HARD_SWISH", None, {}, "TFLite has no int16 kernel for HARD_SWISH"),
    ("RELU_N1_TO_1", None, {}, "TFLite's kernel takes int8, uint8 here"),
    ("RELU_0_TO_1", None, {}, "TFLite's kernel takes int8, uint8 here"),
    ("LOG_SOFTMAX", None, {}, "LiteRT's kernel takes int8 or uint8"),
])
def test_unary_without_int16_kernel_refused(op, options, fields, message):
    data = unary16_model(op, (1 / 4096, 0), (1 / 4096, 0), options, **fields)
    with pytest.raises(RuntimeError, match="supported"):
        run_litert(data, all_int16_feeds()[1])
    with pytest.raises(ConversionError, match=message):
        convert(data)


def test_squared_difference_int16_refused():
    m = ModelBuilder()
    a = m.input("a", [3, 8], "INT16", quant=([1 / 4096], [0], 0))
    b = m.input("b", [3, 8], "INT16", quant=([1 / 2048], [0], 0))
    y = m.tensor("y", [3, 8], "INT16", quant=([1 / 1024], [0], 0))
    m.op("SQUARED_DIFFERENCE", [a, b], [y])
    m.output(y)
    data = m.finish()
    feeds = {k: RNG.integers(-32768, 32768, size=(3, 8)).astype(np.int16) for k in "ab"}
    with pytest.raises(RuntimeError, match="SquaredDifference only supports"):
        run_litert(data, feeds)
    with pytest.raises(ConversionError, match="TFLite's kernel takes int8 here"):
        convert(data)
