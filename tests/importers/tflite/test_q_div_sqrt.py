"""Quantized TFLite DIV and SQRT against LiteRT's reference kernels, bit for bit.

DIV: every int8 and uint8 (dividend, divisor) pair with the divisor off its
zero point (LiteRT refuses that one at run time), for scale combinations whose
kernel exponents run from negative to beyond 32 (the range where LiteRT's
shifts leave gemmlowp's domain); int16 with divisors near zero; broadcasting
shapes and a dynamic batch fed at two sizes; fused activations. SQRT: all
valid int8 inputs (``q >= zp``; LiteRT refuses the rest) and every
non-negative int16 input, several scales, a dynamic batch. The harness also
runs the emitted .tosa on the official reference model.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.importers.tflite.harness import ModelBuilder, check_exact_with_litert, convert
from tosaconv.diagnostics import ConversionError

RNG = np.random.default_rng(31)
NP = {"INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16}
RANGE = {"INT8": (-128, 127), "UINT8": (0, 255), "INT16": (-32768, 32767)}
RELU, RELU6 = 1, 3
# (dtype, a (scale, zp), b (scale, zp), y (scale, zp)); comments give the real multiplier s_a / (s_b * s_y).
DIV_QUANT = [("INT8", (0.05, 3), (0.02, -10), (0.1, 5)),            # 25
             ("INT8", (0.5, 0), (0.003, 7), (0.7, -3)),             # 238
             ("INT8", (0.01, 0), (0.01, 0), (1.0, 0)),              # 1: many exponents >= 32
             ("INT8", (1000.0, 3), (0.0001, -10), (0.0001, 5)),     # 1e11: negative exponents
             ("INT8", (1e-6, -128), (100.0, 127), (1000.0, 5)),     # 1e-11: multiplier 0
             ("UINT8", (0.05, 128), (0.1, 100), (0.08, 130)),
             ("UINT8", (3.0, 0), (0.001, 255), (0.01, 0))]
INT16_QUANT = [("INT16", (0.001, 0), (0.002, 0), (0.0005, 0)), ("INT16", (0.01, 5), (0.003, -7), (0.02, 3)),
               ("INT16", (0.3, 0), (0.0001, 0), (0.5, 0))]
SHAPES = [((2, 3, 16), (2, 3, 16)), ((2, 3, 16), (16,)), ((2, 3, 16), (3, 1)), ((3, 1), (2, 3, 16))]


def div_model(dtype, qa, qb, qy, a_shape, b_shape, act=0, dynamic=True, y_type=None) -> bytes:
    m = ModelBuilder()
    out = list(np.broadcast_shapes(a_shape, b_shape))
    def sig(s):
        return [-1, *s[1:]] if dynamic and len(s) == len(out) else None
    a = m.input("a", list(a_shape), dtype, sig(a_shape), quant=([qa[0]], [qa[1]], 0))
    b = m.input("b", list(b_shape), dtype, sig(b_shape), quant=([qb[0]], [qb[1]], 0))
    y = m.tensor("y", out, y_type or dtype, sig(out), quant=([qy[0]], [qy[1]], 0))
    m.op("DIV", [a, b], [y], "DivOptions", FusedActivationFunction=act)
    m.output(y)
    return m.finish()


def avoid_zero_point(b, zp: int, dtype: str) -> np.ndarray:
    """Divisors equal to their zero point moved one step away (LiteRT's Eval refuses them)."""
    return np.where(b == zp, zp + (1 if zp < RANGE[dtype][1] else -1), b)


def all_pairs(dtype, zp_b):
    lo, hi = RANGE[dtype]
    a, b = np.meshgrid(np.arange(lo, hi + 1), np.arange(lo, hi + 1), indexing="ij")
    return {"a": a.astype(NP[dtype]), "b": avoid_zero_point(b, zp_b, dtype).astype(NP[dtype])}


@pytest.mark.parametrize("dtype,qa,qb,qy", DIV_QUANT)
def test_div_every_8bit_pair(dtype, qa, qb, qy, tmp_path):
    data = div_model(dtype, qa, qb, qy, (256, 256), (256, 256), dynamic=False)
    check_exact_with_litert(data, [all_pairs(dtype, qb[1])], tmp_path)


def near_zero_feeds(dtype, qb, a_shape, b_shape):
    """Two feeds (batch as built, then 3): full-range dividends, divisors within 4 of their zero point
    in half the places and anywhere in the rest, the dividend's extremes and its zero point."""
    lo, hi = RANGE[dtype]
    feeds = []
    for batch in (a_shape[0], 3):
        a_dims = (batch, *a_shape[1:]) if len(a_shape) == 3 else a_shape
        b_dims = (batch, *b_shape[1:]) if len(b_shape) == 3 else b_shape
        a = RNG.integers(lo, hi + 1, size=a_dims)
        b = RNG.integers(lo, hi + 1, size=b_dims)
        near = np.clip(qb[1] + RNG.integers(-4, 5, size=b_dims), lo, hi)
        b = np.where(RNG.integers(0, 2, size=b_dims) == 1, near, b)
        a.reshape(-1)[:3] = [lo, hi, 0]
        feeds.append({"a": a.astype(NP[dtype]), "b": avoid_zero_point(b, qb[1], dtype).astype(NP[dtype])})
    return feeds


@pytest.mark.parametrize("dtype,qa,qb,qy", DIV_QUANT[::2] + INT16_QUANT)
@pytest.mark.parametrize("shapes", SHAPES)
def test_div_broadcast_dynamic_batch(dtype, qa, qb, qy, shapes, tmp_path):
    data = div_model(dtype, qa, qb, qy, *shapes)
    check_exact_with_litert(data, near_zero_feeds(dtype, qb, *shapes), tmp_path)


@pytest.mark.parametrize("dtype,qa,qb,qy", INT16_QUANT)
def test_div_int16_sweep(dtype, qa, qb, qy, tmp_path):
    """Dividends over the whole int16 range against small and extreme divisors."""
    a = np.linspace(-32768, 32767, 64 * 256).astype(np.int64).reshape(64, 256)
    b = np.concatenate([np.arange(-32, 32), np.linspace(-32768, 32767, 192).astype(np.int64)]) + qb[1]
    b = np.broadcast_to(np.clip(b, -32768, 32767), (64, 256))
    feeds = [{"a": a.astype(np.int16), "b": avoid_zero_point(b, qb[1], dtype).astype(np.int16)}]
    check_exact_with_litert(div_model(dtype, qa, qb, qy, (64, 256), (64, 256), dynamic=False), feeds, tmp_path)


@pytest.mark.parametrize("act", [RELU, RELU6])
@pytest.mark.parametrize("dtype,qa,qb,qy", [DIV_QUANT[0], DIV_QUANT[5], INT16_QUANT[0]])
def test_div_fused_activation(dtype, qa, qb, qy, act, tmp_path):
    data = div_model(dtype, qa, qb, qy, *SHAPES[1], act=act)
    check_exact_with_litert(data, near_zero_feeds(dtype, qb, *SHAPES[1]), tmp_path)


def test_div_mixed_types_refused():
    q = (0.05, 0)
    with pytest.raises(ConversionError, match=r"quantized DIV mixes \['INT16', 'INT8'\]"):
        convert(div_model("INT8", q, q, q, *SHAPES[0], y_type="INT16"))


def sqrt_model(dtype, qx, qy, width=128) -> bytes:
    m = ModelBuilder()
    x = m.input("x", [2, width], dtype, [-1, width], quant=([qx[0]], [qx[1]], 0))
    y = m.tensor("y", [2, width], dtype, [-1, width], quant=([qy[0]], [qy[1]], 0))
    m.op("SQRT", [x], [y])
    m.output(y)
    return m.finish()


SQRT_INT8 = [((0.05, -128), (0.01, -100)), ((0.05, 3), (0.02, 5)), ((0.3, 10), (0.05, -128)),
             ((0.001, -100), (0.3, 100)), ((0.01, 0), (0.1, 0)), ((100.0, -128), (1e-6, 10))]


@pytest.mark.parametrize("qx,qy", SQRT_INT8)
def test_sqrt_int8_every_input(qx, qy, tmp_path):
    """Every input from the zero point up (below it LiteRT stops with an error), then a random batch of 3."""
    valid = np.arange(qx[1], 128)
    first = np.resize(valid, (2, 128))
    second = RNG.choice(valid, size=(3, 128))
    feeds = [{"x": first.astype(np.int8)}, {"x": second.astype(np.int8)}]
    check_exact_with_litert(sqrt_model("INT8", qx, qy), feeds, tmp_path)


@pytest.mark.parametrize("qx,qy", [((0.001, 0), (0.0005, 0)), ((1.0, 0), (1.0, 0)), ((0.3, 0), (0.001, 0)),
                                   ((1e-5, 0), (3e-5, 0)), ((1.0, 0), (1e-7, 0))])
def test_sqrt_int16_every_input(qx, qy, tmp_path):
    """All 32768 non-negative int16 inputs, then a random batch."""
    feeds = [{"x": np.arange(32768).reshape(-1, 512).astype(np.int16)},
             {"x": RNG.integers(0, 32768, size=(3, 512)).astype(np.int16)}]
    check_exact_with_litert(sqrt_model("INT16", qx, qy, width=512), feeds, tmp_path)


def test_sqrt_uint8_refused():
    with pytest.raises(ConversionError, match="quantized SQRT on UINT8 is not supported"):
        convert(sqrt_model("UINT8", (0.05, 0), (0.02, 0)))


@pytest.mark.parametrize("qx,qy", [((0.001, 5), (0.0005, 0)), ((0.001, 0), (0.0005, -3))])
def test_sqrt_int16_zero_point_refused(qx, qy):
    with pytest.raises(ConversionError, match="int16 SQRT needs zero point 0"):
        convert(sqrt_model("INT16", qx, qy))
